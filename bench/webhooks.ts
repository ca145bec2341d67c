// Webhooks' cost and speed, on the production build and PostgreSQL:
//  1. what three subscribed endpoints add to update_name (the rename writes three
//     deliveries and their jobs in its transaction): the same autocannon run with
//     no endpoint and with three per company, the API not delivering;
//  2. delivery throughput: the deliveries run 2 left behind, taken by one worker
//     process (dist/src/worker.js, WEBHOOKS_WORKER_CONCURRENCY) to a local receiver
//     that answers 200 at once;
//  3. commit-to-receiver latency under a steady rate of renames, the API process
//     delivering (the default): the receiver's clock at arrival minus the event's
//     timestamp (the database's now() of the change's transaction), p50 and p99.
// This tree's server only. Prints the figures; writes nothing itself. Run alone
// (npm run bench:webhooks) or within npm run bench, which puts them into
// bench/RESULTS.md.
//
// Options (environment):
//   DATABASE_URL                PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
//                               the database projects_bench_webhooks is (re)created on it, and dropped after
//   BENCH_DURATION              seconds per rename run (default 8)
//   BENCH_WEBHOOK_PROJECTS      projects (default 300)
//   BENCH_WEBHOOK_BACKLOG       deliveries the worker drains in the throughput run (default 3000)
//   BENCH_WEBHOOK_RATE          renames per second in the latency run (default 20, 60 deliveries a second)
//   BENCH_WEBHOOK_CONCURRENCY   the worker's WEBHOOKS_WORKER_CONCURRENCY (default 10)
// Flags: --no-build (use the existing dist/)
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { CompiledQuery } from 'kysely'
import { request } from 'undici'
import { loadConfig } from '../src/config.js'
import { createDb, dbOptions, type Db } from '../src/db/index.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { launchServer, type ServerProcess } from '../test/launch.js'
import { load, productionStart, RssSampler, startServer, type LoadResult } from './load.js'
import { httpRequest, randomRevision, type Target } from './operations.js'
import { DEFAULT_SIZE, seedDataset } from './seed.js'
import { positive } from './options.js'
import { connected } from './postgres.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DATABASE = 'projects_bench_webhooks'
const ENDPOINTS = 3

/** Latency and throughput of one autocannon run. */
export interface RunFigures { rps: number, p50: number, p99: number }

export interface WebhookFigures {
  endpoints: number
  durationS: number
  projects: number
  concurrency: number
  rate: number
  /** update_name at 10 connections, mean of two runs each. */
  rename: { plain: RunFigures, subscribed: RunFigures }
  /** The worker's resident memory at most over the run (npm run start:worker:prod's command). */
  delivery: { deliveries: number, seconds: number, perSecond: number, drained: boolean, workerMaxRssMb: number }
  latency: { renames: number, deliveries: number, p50: number, p99: number, max: number }
}

export interface WebhookBenchOptions {
  url: string
  duration: number
  projects: number
  backlog: number
  rate: number
  concurrency: number
  build: boolean
}

export function webhookBenchOptions (): WebhookBenchOptions {
  return {
    url: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    duration: Math.round(positive('BENCH_DURATION', 8)),
    projects: Math.round(positive('BENCH_WEBHOOK_PROJECTS', 300)),
    backlog: Math.round(positive('BENCH_WEBHOOK_BACKLOG', 3000)),
    rate: positive('BENCH_WEBHOOK_RATE', 20),
    concurrency: Math.round(positive('BENCH_WEBHOOK_CONCURRENCY', 10)),
    build: !process.argv.includes('--no-build')
  }
}

const started = performance.now()
function step (message: string): void {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] webhooks: ${message}\n`)
}

/** What the receiver saw: one arrival per request, with the event's commit time. */
interface Arrival { id: string, at: number, committedAt: number }

/** A receiver answering 200 at once, keeping each request's arrival. */
async function receiver (): Promise<{ server: HttpServer, url: string, arrivals: Arrival[] }> {
  const arrivals: Arrival[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const at = Date.now()
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string }
      arrivals.push({ id: String(req.headers['webhook-id']), at, committedAt: Date.parse(body.timestamp) })
      res.writeHead(200).end()
    })
  })
  server.keepAliveTimeout = 10_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrivals }
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

async function waitUntil (condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (condition()) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return condition()
}

async function count (db: Db, sql: string): Promise<number> {
  const { rows } = await db.executeQuery<{ n: string }>(CompiledQuery.raw(sql))
  return Number(rows[0]!.n)
}

/** Renames at a steady rate for `seconds` (each request on its own, not waiting for the last). */
async function paced (server: ServerProcess, targets: readonly Target[], rate: number, seconds: number): Promise<{ sent: number, ok: number }> {
  let sent = 0
  let ok = 0
  const inFlight = new Set<Promise<void>>()
  const t0 = performance.now()
  while (performance.now() - t0 < seconds * 1000) {
    const due = Math.floor(((performance.now() - t0) / 1000) * rate)
    while (sent < due) {
      sent++
      const r = httpRequest('update_name', targets[Math.floor(Math.random() * targets.length)]!, randomRevision())
      const p = request(`${server.url}${r.path}`, { method: 'POST', headers: r.headers, body: r.body })
        .then(async (res) => { await res.body.dump(); if (res.statusCode === 200) ok++ }, () => {})
        .finally(() => inFlight.delete(p))
      inFlight.add(p)
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await Promise.all(inFlight)
  return { sent, ok }
}

function describe (r: LoadResult): string {
  return `${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms` + (r.non2xx + r.errors > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : '')
}

export async function webhookBench (options: WebhookBenchOptions): Promise<{ text: string, figures: WebhookFigures }> {
  const figures = { endpoints: ENDPOINTS, durationS: options.duration, projects: options.projects, concurrency: options.concurrency, rate: options.rate } as WebhookFigures
  if (options.build) {
    step('npm run build')
    if (spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' }).status !== 0) throw new Error('npm run build failed')
  }
  const entry = path.join(ROOT, 'dist/src/server.js')
  const workerEntry = path.join(ROOT, 'dist/src/worker.js')
  if (!existsSync(entry) || !existsSync(workerEntry)) throw new Error('dist/ is missing the server or the worker: run npm run build')
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'projects-bench-webhooks-'))
  const hooks = await receiver()
  const processes: ServerProcess[] = []
  const benchUrl = (() => { const u = new URL(options.url); u.pathname = `/${DATABASE}`; return u.toString() })()
  const lines: string[] = []
  const say = (line: string) => { lines.push(line); step(line) }
  try {
    await connected(options.url, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
      await c.query(`CREATE DATABASE ${DATABASE}`)
    })
    const db = await createDb(dbOptions(loadConfig({ DATABASE_URL: benchUrl, DB_STATEMENT_TIMEOUT_MS: '20000' })))
    try {
      await migrateToLatest(db)
      step(`seeding ${options.projects} projects`)
      const { normal: targets } = await seedDataset(db, { ...DEFAULT_SIZE, projects: options.projects, largeProjects: 0 })
      const env = { LOG_LEVEL: 'warn', NODE_ENV: 'production', RATE_LIMIT_MAX: '0', DB_POOL_SIZE: '8', DATABASE_URL: benchUrl, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' }

      // 1. The rename's cost, without and with three endpoints (nobody delivering).
      const start = productionStart(ROOT)
      const api = await startServer({ entry, start, env: { ...env, WEBHOOKS_WORKER: 'false' }, logFile: path.join(tmp, 'api.log') })
      processes.push(api)
      const run = async (label: string) => {
        await load({ url: api.url, pid: api.pid, operation: 'update_name', targets, connections: 10, seconds: 2, database: DATABASE })
        const result = await load({ url: api.url, pid: api.pid, operation: 'update_name', targets, connections: 10, seconds: options.duration, database: DATABASE })
        say(`update_name, ${label}, 10 connections, ${options.duration} s: ${describe(result)}`)
        return result
      }
      const companies = await db.executeQuery<{ id: string }>(CompiledQuery.raw('SELECT id FROM companies'))
      for (const { id } of companies.rows) {
        for (let i = 0; i < ENDPOINTS; i++) {
          await db.executeQuery(CompiledQuery.raw(
            `INSERT INTO webhooks (company_id, url, events, secret, enabled, disabled_reason) VALUES ($1, $2, '{project.renamed,project.description_changed}', $3, false, 'bench')`,
            [id, `${hooks.url}?endpoint=${i}`, `whsec_${Buffer.from(`bench-secret-${i}-${id}`).toString('base64')}`]))
        }
      }
      const endpoints = async (enabled: boolean) => {
        await db.executeQuery(CompiledQuery.raw('UPDATE webhooks SET enabled = $1, disabled_reason = CASE WHEN $1 THEN NULL ELSE \'bench\' END', [enabled]))
      }
      // One run unrecorded, for the server's code to warm up; then A B B A, so that
      // a drift of the machine over the four runs weighs on both alike.
      await load({ url: api.url, pid: api.pid, operation: 'update_name', targets, connections: 10, seconds: options.duration, database: DATABASE })
      const runs: Record<'plain' | 'subscribed', LoadResult[]> = { plain: [], subscribed: [] }
      for (const which of ['plain', 'subscribed', 'subscribed', 'plain'] as const) {
        await endpoints(which === 'subscribed')
        runs[which].push(await run(which === 'plain' ? 'no endpoint' : `${ENDPOINTS} endpoints per company`))
      }
      const mean = (rs: LoadResult[], key: 'rps' | 'p50' | 'p99') => rs.reduce((sum, r) => sum + r[key], 0) / rs.length
      const means = (rs: LoadResult[]): RunFigures => ({ rps: mean(rs, 'rps'), p50: mean(rs, 'p50'), p99: mean(rs, 'p99') })
      figures.rename = { plain: means(runs.plain), subscribed: means(runs.subscribed) }
      say(`  mean of two runs each: no endpoint ${mean(runs.plain, 'rps').toFixed(0)} req/s (p50 ${mean(runs.plain, 'p50').toFixed(0)} ms, p99 ${mean(runs.plain, 'p99').toFixed(0)} ms); ` +
        `${ENDPOINTS} endpoints ${mean(runs.subscribed, 'rps').toFixed(0)} req/s (p50 ${mean(runs.subscribed, 'p50').toFixed(0)} ms, p99 ${mean(runs.subscribed, 'p99').toFixed(0)} ms), ` +
        `${(100 * mean(runs.subscribed, 'rps') / mean(runs.plain, 'rps')).toFixed(0)}% of the throughput without`)
      await api.stop()

      await endpoints(true)

      // 2. Throughput: one worker process drains a backlog of what the runs above
      // queued (the oldest; the rest canceled, their jobs removed).
      await db.executeQuery(CompiledQuery.raw(
        `WITH extra AS (
           SELECT id FROM webhook_deliveries WHERE status = 'pending' ORDER BY inserted_at, id OFFSET $1),
         canceled AS (UPDATE webhook_deliveries d SET status = 'canceled' FROM extra WHERE d.id = extra.id RETURNING d.id)
         DELETE FROM pgboss.job j USING canceled c WHERE j.name = 'webhook-delivery' AND (j.data->>'delivery_id')::uuid = c.id`, [options.backlog]))
      const backlog = await count(db, "SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'")
      step(`${backlog} deliveries waiting; starting a worker (concurrency ${options.concurrency})`)
      const worker = await launchServer({
        entry: [workerEntry], waitUntil: 'started', logFile: path.join(tmp, 'worker.log'),
        env: { ...env, WEBHOOKS_WORKER_CONCURRENCY: String(options.concurrency) }
      })
      processes.push(worker)
      const workerRss = new RssSampler(worker.pid).start()
      const drained = await waitUntil(() => hooks.arrivals.length >= backlog, 600_000).finally(() => workerRss.stop())
      const arrivals = hooks.arrivals.slice(0, backlog)
      const span = (arrivals.at(-1)!.at - arrivals[0]!.at) / 1000
      figures.delivery = { deliveries: backlog, seconds: span, perSecond: backlog / span, drained, workerMaxRssMb: workerRss.max }
      say(`delivery throughput, one worker process, concurrency ${options.concurrency}: ${backlog} deliveries in ${span.toFixed(1)} s = ${(backlog / span).toFixed(0)} deliveries/s${drained ? '' : ' (not all arrived within 10 min)'}, ` +
        `the worker's RSS at most ${workerRss.max.toFixed(0)} MB`)
      const ids = new Set(arrivals.map((a) => a.id))
      say(`  ${arrivals.length} requests for ${ids.size} events × ${ENDPOINTS} endpoints; ${await count(db, "SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'")} left pending`)
      await worker.stop()

      // 3. Latency at a steady rate, delivered by the API process itself.
      const delivering = await startServer({ entry, start, env: { ...env, WEBHOOKS_WORKER_CONCURRENCY: String(options.concurrency) }, logFile: path.join(tmp, 'api-delivering.log') })
      processes.push(delivering)
      // Two seconds unrecorded first: a freshly started process's first deliveries
      // are slower (code not yet optimised, connections not yet open).
      const warm = await paced(delivering, targets, options.rate, 2)
      await waitUntil(() => hooks.arrivals.length >= backlog + warm.ok * ENDPOINTS, 60_000)
      const before = hooks.arrivals.length
      const { sent, ok } = await paced(delivering, targets, options.rate, options.duration)
      const expected = ok * ENDPOINTS
      await waitUntil(() => hooks.arrivals.length - before >= expected, 120_000)
      const latencies = hooks.arrivals.slice(before).map((a) => a.at - a.committedAt).sort((a, b) => a - b)
      figures.latency = { renames: sent, deliveries: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN }
      say(`commit to receiver, API process delivering, ${options.rate} renames/s × ${ENDPOINTS} endpoints for ${options.duration} s (${sent} renames, ${latencies.length} deliveries): ` +
        `p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms`)
      await delivering.stop()
    } finally {
      await db.destroy()
    }
  } finally {
    for (const p of processes) await p.stop()
    await new Promise((resolve) => hooks.server.close(resolve))
    await connected(options.url, (c) => c.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)).catch(() => {})
    await rm(tmp, { recursive: true, force: true })
  }
  return { text: lines.join('\n') + '\n', figures }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  webhookBench(webhookBenchOptions()).then(({ text }) => {
    process.stdout.write(`\nWebhooks\n${text}`)
  }).catch((error: unknown) => {
    process.stderr.write(`webhook bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
