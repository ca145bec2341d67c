// The server's own clock for the bench (bench/timings-preload.mjs, bench/timings.ts):
// what the preload records in a process that serves HTTP from a pg pool, and how the
// bench cuts it into its runs.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { monotonicUs } from '../../bench/profile.js'
import { summarize, timedRuns, TIMINGS_FILE_VARIABLE, TIMINGS_PRELOAD, type Recorded } from '../../bench/timings.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

t.test('summarize: count, mean and percentiles by nearest rank', async (t) => {
  t.same(summarize([4, 1, 3, 2]), { count: 4, meanMs: 2.5, p50Ms: 2, p99Ms: 4 })
  t.equal(summarize([]), null)
})

t.test('timedRuns: what ended within each window', async (t) => {
  const recorded: Recorded = {
    request: [[100, 5], [150, 7], [250, 9], [400, 1]],
    pool: [[140, 2]],
    statement: [[99, 4], [149, 6], [249, 8]]
  }
  const runs = timedRuns(recorded, [{ label: 'a', startUs: 100, endUs: 200 }, { label: 'b', startUs: 201, endUs: 300 }])
  t.same(runs.map((r) => r.label), ['a', 'b'])
  t.same(runs[0]!.request, { count: 2, meanMs: 6, p50Ms: 5, p99Ms: 7 })
  t.same(runs[0]!.pool, { count: 1, meanMs: 2, p50Ms: 2, p99Ms: 2 })
  t.same(runs[0]!.statement, { count: 1, meanMs: 6, p50Ms: 6, p99Ms: 6 }, 'the statement that ended before the window is not its')
  t.same(runs[1]!.request, { count: 1, meanMs: 9, p50Ms: 9, p99Ms: 9 })
  t.equal(runs[1]!.pool, null)
})

// A process like the server: HTTP in front of a pool of one connection, each request
// taking the connection, running a named statement of 20 ms and an unnamed one, then
// a query through the pool's own query() (a connect with a callback, as pg-boss's are).
const SERVER = `
import http from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'
const pg = createRequire(path.join(process.cwd(), 'package.json'))('pg')
const pool = new pg.Pool({ connectionString: process.env.TEST_URL, max: 1 })
const server = http.createServer(async (request, response) => {
  const client = await pool.connect()
  await client.query({ name: 'timings_test_sleep', text: 'SELECT pg_sleep(0.02)' })
  await client.query('SELECT 1')
  client.release()
  await new Promise((resolve, reject) => pool.query('SELECT 1', (error) => error ? reject(error) : resolve()))
  response.end('ok')
})
process.on('SIGTERM', () => { server.close(); pool.end().then(() => process.exit(0)) })
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'))
`

const url = process.env.DATABASE_URL
t.test('the preload records requests, waits for a connection and named statements', { skip: !url && 'needs DATABASE_URL' }, async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'timings-test-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const script = path.join(dir, 'server.mjs')
  const file = path.join(dir, 'timings.json')
  await writeFile(script, SERVER)
  const child = spawn(process.execPath, ['--import', TIMINGS_PRELOAD, script], {
    cwd: ROOT, env: { ...process.env, TEST_URL: url, [TIMINGS_FILE_VARIABLE]: file }, stdio: ['ignore', 'pipe', 'inherit']
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (chunk) => resolve(String(chunk).trim())))
  const startUs = monotonicUs()
  // Two at a time: the second waits for the one connection while the first holds it.
  for (let round = 0; round < 3; round++) {
    const answers = await Promise.all([1, 2].map(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text())))
    t.same(answers, ['ok', 'ok'])
  }
  const endUs = monotonicUs()
  child.kill('SIGTERM')
  t.equal(await exited, 0)
  const recorded = JSON.parse(await readFile(file, 'utf8')) as Recorded
  t.equal(recorded.request.length, 6, 'every request')
  t.equal(recorded.statement.length, 6, 'the named statements only')
  t.equal(recorded.pool.length, 6, "the driver's waits only, not those of the pool's own query()")
  for (const [end, ms] of [...recorded.request, ...recorded.statement, ...recorded.pool]) {
    t.ok(end >= startUs && end <= endUs, 'on the bench\'s monotonic clock, within the requests')
    t.ok(ms >= 0)
  }
  t.ok(recorded.statement.every(([, ms]) => ms >= 20), 'a statement takes its 20 ms')
  t.ok(recorded.request.every(([, ms]) => ms >= 20), 'a request takes at least its statement')
  t.ok(Math.max(...recorded.pool.map(([, ms]) => ms)) >= 15, 'a second request waited for the connection')
  const [run] = timedRuns(recorded, [{ label: 'all', startUs, endUs }])
  t.equal(run!.request!.count, 6)
  t.ok(run!.request!.meanMs > run!.statement!.meanMs, "a request's mean holds its statement's")
})
