// pgbench's latencies for the bench (bench/pgbench.ts): the percentiles of the
// transactions of its per-transaction log, beside the server's.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import t from 'tap'
import { logLatencies, percentile, runPgbench } from '../../bench/pgbench.js'

t.test("a log's latencies, in ms; lines without one are left out", async (t) => {
  const log = [
    '0 0 1500 0 1764241200 123456',
    '1 0 250 0 1764241200 123999',
    '0 1 failed 0 1764241200 124500',
    '1 1 skipped 0 1764241200 125000',
    '0 2 40000 0 1764241200 165000',
    ''
  ].join('\n')
  t.same(logLatencies(log), [1.5, 0.25, 40])
  t.same(logLatencies(''), [])
})

t.test('percentiles by nearest rank', async (t) => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i)
  t.equal(percentile(hundred, 0.5), 50)
  t.equal(percentile(hundred, 0.99), 99)
  t.equal(percentile(hundred, 1), 100)
  t.equal(percentile([7], 0.99), 7)
  t.equal(percentile([3, 1, 2], 0.5), 2)
  t.equal(percentile([], 0.5), null)
  t.same(hundred[0], 100, 'the values are left in their order')
})

const url = process.env.DATABASE_URL
const pgbench = spawnSync('pgbench', ['--version']).status === 0
t.test('a run gives its transactions\' percentiles and removes its logs', { skip: (!url && 'needs DATABASE_URL') || (!pgbench && 'needs pgbench') }, async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pgbench-test-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'sleep.sql')
  // The first client's transactions take 20 ms, the second's 120 ms: about 6 of each 7 are 20 ms.
  await writeFile(file, 'SELECT pg_sleep(CASE WHEN :client_id = 0 THEN 0.02 ELSE 0.12 END);\n')
  const result = await runPgbench({ binary: 'pgbench', url: url!, clients: 2, threads: 2, protocol: 'extended' }, file, 2)
  t.equal(result.failed, 0)
  t.ok(result.tps > 5 && result.tps < 100, `tps ${result.tps}`)
  t.ok(result.p50Ms !== null && result.p50Ms >= 20 && result.p50Ms < 100, `p50 ${result.p50Ms} ms: a 20 ms transaction`)
  t.ok(result.p99Ms !== null && result.p99Ms >= 120, `p99 ${result.p99Ms} ms: a 120 ms transaction`)
  t.ok(result.latencyMs !== null && result.latencyMs > result.p50Ms! && result.latencyMs < result.p99Ms!, `pgbench's own mean (${result.latencyMs} ms) lies between`)
  t.same(await readdir(dir), ['sleep.sql'], 'the logs are removed once read')
})
