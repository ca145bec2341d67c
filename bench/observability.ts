// What metrics and traces cost (issue 66): this tree's server in three settings,
// side by side on the same database, taking turns per operation:
//   off      METRICS_PORT=0 and no OTEL_* variables: nothing counted, nothing traced;
//   metrics  the metrics server on (the default), scraped once a second during the
//            runs, far more often than a Prometheus would (15 s in deploy/);
//   tracing  METRICS_PORT=0, every request traced (OTEL_TRACES_SAMPLER=always_on)
//            and its spans exported over OTLP/HTTP to a receiver in this process
//            that counts them and answers 200.
// Each figure is the mean of its turns; the report prints throughput and p99 of
// each setting and its throughput as a share of `off`. Run within npm run bench
// (--no-observability skips it), or alone: npm run bench:observability, which
// builds this tree, seeds the bench data into a database bench_observability
// (dropped after) and prints the section; BENCH_ROUNDS (default 3), BENCH_DURATION
// (8), BENCH_WARMUP (3), BENCH_BREAK_IN (3) and BENCH_POOL_SIZE (4) apply.
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { freePort } from '../test/launch.js'
import { load, quiet, startServer, type LoadResult, type ProductionStart, type Server } from './load.js'
import { LABELS, TARGET_SETS, type OperationName } from './operations.js'
import { positive } from './options.js'
import { checkpoint, dropDatabase, recreateDatabase, vacuum, withDatabase } from './postgres.js'
import { DEFAULT_SIZE, seedAt, type Dataset } from './seed.js'
import { migrate, thisTree } from './tree.js'

export type Setting = 'off' | 'metrics' | 'tracing'
export const SETTINGS: readonly Setting[] = ['off', 'metrics', 'tracing']

/** The operations measured: a rename, a read and a list, the headline figures. */
export const OBSERVED: readonly OperationName[] = ['update_name', 'get', 'list_projects']

/** The most throughput metrics may cost (issue 66, item 3). */
export const METRICS_COST_TARGET = 0.05

export interface ObservabilityRun { setting: Setting, result: LoadResult }

export interface ObservabilityFigures {
  connections: number
  rounds: number
  durationS: number
  runs: ObservabilityRun[]
  /** Spans the receiver took from the traced server, and the scrapes of the metrics server. */
  spans: number
  scrapes: number
}

/** An OTLP/HTTP receiver that counts the spans of each JSON export and answers 200. */
async function spanReceiver (): Promise<{ url: string, spans: () => number, close: () => Promise<void> }> {
  let spans = 0
  const server: HttpServer = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      // A span is one object with a spanId; counting them is cheaper than parsing the export.
      spans += body.split('"spanId"').length - 1
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) }
  }
}

export async function observabilityBench (options: {
  entry: string
  start: ProductionStart
  /** This tree's database: its URL, name and dataset. */
  url: string
  database: string
  dataset: Dataset
  poolSize: number
  connections: number
  rounds: number
  warmup: number
  duration: number
  breakIn: number
  tmp: string
  say: (message: string) => void
}): Promise<ObservabilityFigures> {
  const receiver = await spanReceiver()
  const servers = new Map<Setting, Server>()
  let scrapes = 0
  let scraper: NodeJS.Timeout | undefined
  try {
    const metricsPort = await freePort()
    const env: Record<Setting, Record<string, string>> = {
      off: { METRICS_PORT: '0' },
      metrics: { METRICS_PORT: String(metricsPort) },
      tracing: { METRICS_PORT: '0', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SERVICE_NAME: 'projects-api-bench' }
    }
    for (const setting of SETTINGS) {
      servers.set(setting, await startServer({
        entry: options.entry,
        start: options.start,
        logFile: path.join(options.tmp, `server-observability-${setting}.log`),
        env: { LOG_LEVEL: 'warn', NODE_ENV: 'production', RATE_LIMIT_MAX: '0', DB_POOL_SIZE: String(options.poolSize), DATABASE_URL: options.url, ...env[setting] }
      }))
    }
    scraper = setInterval(() => {
      fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(async (r) => { await r.text(); scrapes++ }, () => {})
    }, 1000)
    const run = (setting: Setting, operation: OperationName, seconds: number) => {
      const server = servers.get(setting)!
      return load({ url: server.url, pid: server.pid, operation, targets: options.dataset[TARGET_SETS[operation]], connections: options.connections, seconds, database: options.database })
    }
    for (const setting of SETTINGS) {
      options.say(`observability: breaking in the ${setting} server`)
      for (const operation of OBSERVED) await run(setting, operation, options.breakIn)
    }
    const runs: ObservabilityRun[] = []
    for (const operation of OBSERVED) {
      for (let round = 1; round <= options.rounds; round++) {
        const order = round % 2 === 1 ? SETTINGS : [...SETTINGS].reverse()
        for (const setting of order) {
          await quiet([...servers.values()].map((s) => s.pid))
          await vacuum(options.url)
          await checkpoint(options.url, options.say)
          await run(setting, operation, options.warmup)
          const result = await run(setting, operation, options.duration)
          options.say(`observability, ${setting}, turn ${round}: ${LABELS[operation]}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms`)
          runs.push({ setting, result })
        }
      }
    }
    return { connections: options.connections, rounds: options.rounds, durationS: options.duration, runs, spans: receiver.spans(), scrapes }
  } finally {
    clearInterval(scraper)
    for (const server of servers.values()) await server.stop()
    await receiver.close()
  }
}

function mean (values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length
}

/** Per operation and setting: mean req/s, mean p99, and req/s as a share of `off`. */
export function observabilityRows (figures: ObservabilityFigures): Array<{ operation: OperationName, setting: Setting, rps: number, p99: number, share: number, turns: number[] }> {
  const rows = []
  for (const operation of OBSERVED) {
    const of = (setting: Setting) => figures.runs.filter((r) => r.setting === setting && r.result.operation === operation).map((r) => r.result)
    if (of('off').length === 0) continue
    const base = mean(of('off').map((r) => r.rps))
    for (const setting of SETTINGS) {
      const results = of(setting)
      if (results.length === 0) continue
      const rps = mean(results.map((r) => r.rps))
      rows.push({ operation, setting, rps, p99: mean(results.map((r) => r.p99)), share: rps / base, turns: results.map((r) => r.rps) })
    }
  }
  return rows
}

const DESCRIBED: Record<Setting, string> = {
  off: 'metrics off, tracing off',
  metrics: 'metrics on, scraped every second',
  tracing: 'tracing at 100 %, metrics off'
}

export function observabilitySection (figures: ObservabilityFigures | string | null): string {
  if (figures === null) return ''
  if (typeof figures === 'string') return `### Metrics and traces (this tree)\n\n${figures}\n`
  const lines = [
    '### Metrics and traces (this tree)',
    '',
    `This tree's server in three settings on the same database, ${figures.rounds} turns each of ${figures.durationS} s at ${figures.connections} connections, ` +
    `taking turns (bench/observability.ts). The traced server exported ${figures.spans} spans to a receiver in the bench; the metrics server was scraped ${figures.scrapes} times. ` +
    `Target: metrics on costs at most ${METRICS_COST_TARGET * 100} % of the throughput.`,
    '',
    '| operation | setting | req/s | p99 ms | of off | turns, req/s |',
    '| --- | --- | ---: | ---: | ---: | ---: |'
  ]
  for (const row of observabilityRows(figures)) {
    const over = row.setting === 'metrics' && row.share < 1 - METRICS_COST_TARGET ? ' ⚠' : ''
    lines.push(`| ${LABELS[row.operation]} | ${DESCRIBED[row.setting]} | ${row.rps.toFixed(0)} | ${row.p99.toFixed(0)} | ${(100 * row.share).toFixed(0)} %${over} | ${row.turns.map((r) => r.toFixed(0)).join(', ')} |`)
  }
  return lines.join('\n') + '\n'
}

/** npm run bench:observability: this phase alone, on a database of its own. */
async function main (): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const base = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
  const database = 'bench_observability'
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'projects-observability-'))
  const say = (message: string) => { process.stderr.write(`${message}\n`) }
  try {
    say('building this tree (npm run build), seeding bench_observability')
    const tree = thisTree(root, { build: true, log: path.join(tmp, 'build.log') })
    const url = withDatabase(base, database)
    await recreateDatabase(base, database)
    migrate(tree, url, path.join(tmp, 'build.log'))
    const dataset = await seedAt(url, DEFAULT_SIZE)
    const figures = await observabilityBench({
      entry: tree.entry, start: tree.start, url, database, dataset, poolSize: Math.round(positive('BENCH_POOL_SIZE', 4)), connections: 50,
      rounds: Math.round(positive('BENCH_ROUNDS', 3)), warmup: Math.round(positive('BENCH_WARMUP', 3)), duration: Math.round(positive('BENCH_DURATION', 8)),
      breakIn: Math.round(positive('BENCH_BREAK_IN', 3)), tmp, say
    })
    process.stdout.write(observabilitySection(figures))
  } finally {
    await dropDatabase(base, database).catch(() => {})
    await rm(tmp, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
    process.exitCode = 1
  })
}
