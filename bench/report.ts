// The bench's figures as one table (plus small-vs-large and the per-statement
// pgbench latencies), printed and written to bench/RESULTS.md with the machine
// and the settings. Targets are shown beside the figures; none is asserted.
import { readFileSync } from 'node:fs'
import os from 'node:os'
import type { Capture } from './capture.js'
import type { IdleCpu, LoadResult } from './load.js'
import { ACCEPT_ENCODING, LABELS, OPERATIONS, type OperationName } from './operations.js'
import type { TimedRun, Timing } from './timings.js'
import type { PgbenchResult, Script } from './pgbench.js'
import { PARTS, type ProfiledRun } from './profile.js'
import { redmineRatios, type RedmineFigures } from './redmine.js'
import type { DatasetSize } from './seed.js'
import type { WebhookFigures } from './webhooks.js'
import { FLAGS } from './options.js'

export interface Machine {
  cpu: string
  cpus: number
  ramGiB: number
  os: string
  node: string
  postgres: string
  pglite: string | null
}

export function machine (postgres: string, pglite: string | null): Machine {
  let cpu = os.cpus()[0]?.model ?? 'unknown'
  let system = `${os.type()} ${os.release()}`
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu
  } catch {}
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1]
    if (pretty) system = `${pretty}, kernel ${os.release()}`
  } catch {}
  return {
    cpu,
    cpus: os.cpus().length,
    ramGiB: os.totalmem() / 2 ** 30,
    os: system,
    node: process.version,
    postgres,
    pglite
  }
}

export interface Settings {
  date: Date
  durationS: number
  shortDurationS: number
  warmupS: number
  /** Seconds of each operation at the highest connection count, once on each server as it starts (bench/run.ts, breakIn). */
  breakInS: number
  poolSize: number
  poolSizeWhy: string
  connections: number[]
  size: DatasetSize
  rows: Record<string, number>
  seedSeconds: number
  embedded: { size: DatasetSize, seedSeconds: number } | null
  pgbench: string | null
  totalSeconds: number
  /** The node flags the server ran with (npm run start:prod's). */
  nodeFlags: readonly string[]
  /** The environment it ran in beyond its configuration (npm run start:prod's). */
  nodeEnv: Readonly<Record<string, string>>
  /** Whether autocannon kept every body it read (BENCH_KEEP_BODIES), or only failures' (bench/load.ts). */
  keepsBodies: boolean
  /** The servers' RSS once ready, before any load. */
  idleRssMb: { postgres: number, embedded: number | null }
  /** The servers' CPU in ms a second with no request, after their runs (load.ts, idleCpu). */
  idleCpuMs: { postgres: IdleCpu, embedded: IdleCpu | null }
}

/** The runs with PostgreSQL behind the delaying proxy (bench/proxy.ts). */
export interface Delayed {
  delayMs: number
  /** The server's DB_POOL_SIZE in the delayed runs. */
  poolSize: number
  /** SELECT 1 on one connection, median, direct and through the proxy. */
  roundTripMs: { direct: number, proxied: number }
  results: LoadResult[]
}

/** The top statements by total execution time over the PostgreSQL runs, or why there are none. */
export type StatementStats =
  | {
    available: true
    top: Array<{ calls: number, totalMs: number, meanMs: number, rows: number, query: string }>
    /** Calls of the statements that begin with the token's check: the operations' own. */
    operationCalls: number
    /** What the server was asked meanwhile (run.ts fills it in): responses counted, ETag reads before conditional runs, connections whose last request a run's end cut off. */
    requests?: { counted: number, tagReads: number, cutOff: number }
  }
  | { available: false, reason: string }

/** The reads again on a server that keeps no answers (ANSWER_CACHE_MB=0, src/plugins/answers.ts). */
export interface Unkept {
  results: LoadResult[]
}

export interface Figures {
  postgres: LoadResult[]
  delayed: Delayed | null
  unkept: Unkept | null
  /** Where the server's CPU went in each operation's profiled run (bench/profile.ts); null when not profiled. */
  profiled: ProfiledRun[] | null
  /** The server's own clock on each request, an operation at a time (bench/timings.ts); null when not run. */
  timed: Array<{ operation: OperationName, connections: number, load: LoadResult, timed: TimedRun }> | null
  statements: StatementStats
  webhooks: WebhookFigures | null
  /** The rename beside Redmine's (bench/redmine.ts); a string says why it was not run. */
  redmine: RedmineFigures | string
  embedded: LoadResult[]
  /** The floor (bench/floor.ts): the least a Node.js server does with the same statements, in pgbench's database. */
  floor: LoadResult[]
  pgbench: Map<string, PgbenchResult>
  /** pgbench in the protocol the server does not use, at the lowest connection count. */
  otherProtocol: Map<OperationName, PgbenchResult>
  /** Short runs at 10 connections: set name → result. */
  sizes: { postgres: SizeRun[], embedded: SizeRun[] }
  captures: Record<OperationName, Capture>
  scripts: Record<OperationName, Script>
}

export interface SizeRun {
  operation: OperationName
  set: 'small' | 'small-5' | 'large'
  projects: number
  result: LoadResult
}

export const pgbenchKey = (operation: OperationName, clients: number) => `${operation}@${clients}`

/** How many times Redmine's rename throughput this server's should reach at the highest connection count. */
const REDMINE_TARGET = 15

/** The server ÷ pgbench ratio the targets ask for at the highest connection count. */
const RATIO_TARGET = 0.8

const f = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits)

function table (header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((h, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`)
  ].join('\n')
}

/** The same rows as a plain aligned text table, for the terminal. */
function textTable (header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

function find (results: LoadResult[], operation: OperationName, connections: number): LoadResult | undefined {
  return results.find((r) => r.operation === operation && r.connections === connections)
}

function mainTable (figures: Figures, settings: Settings): { header: string[], rows: string[][] } {
  const withEmbedded = figures.embedded.length > 0
  const header = ['operation', 'connections', 'server req/s', 'p50 ms', 'p99 ms', 'pgbench tps', 'server ÷ pgbench', 'server max RSS MB', 'server CPU ms/req', 'PostgreSQL CPU ms/req']
  if (withEmbedded) header.push('embedded req/s', 'embedded p50 ms', 'embedded p99 ms', 'embedded ÷ PostgreSQL', 'embedded max RSS MB')
  const rows: string[][] = []
  for (const operation of OPERATIONS) {
    for (const connections of settings.connections) {
      const pg = find(figures.postgres, operation, connections)
      const bench = figures.pgbench.get(pgbenchKey(operation, connections))
      const row = [
        LABELS[operation], String(connections), f(pg?.rps, 0), f(pg?.p50), f(pg?.p99), f(bench?.tps, 0),
        pg && bench ? f(pg.rps / bench.tps, 2) : '–', f(pg?.maxRssMb, 0), f(pg?.serverCpuMs, 2), f(pg?.backendCpuMs, 2)
      ]
      if (withEmbedded) {
        const em = find(figures.embedded, operation, connections)
        row.push(f(em?.rps, 0), f(em?.p50), f(em?.p99), em && pg ? f(em.rps / pg.rps, 2) : '–', f(em?.maxRssMb, 0))
      }
      rows.push(row)
    }
  }
  return { header, rows }
}

function sizeTable (runs: SizeRun[]): { header: string[], rows: string[][] } {
  const header = ['operation', 'projects', 'req/s', 'p50 ms', 'p99 ms', 'large ÷ this p50']
  const rows = runs.map((run) => {
    const large = runs.find((r) => r.operation === run.operation && r.set === 'large')
    const name = run.set === 'large' ? `${run.projects} large` : run.set === 'small-5' ? `${run.projects} normal (same contention as large)` : `${run.projects} normal`
    return [LABELS[run.operation], name, f(run.result.rps, 0), f(run.result.p50), f(run.result.p99),
      run.set === 'large' || !large ? '' : f(large.result.p50 / run.result.p50, 2)]
  })
  return { header, rows }
}

/** Per operation: the server at the highest connection count beside pgbench there and at the server's pool size. */
function ceilingRows (figures: Figures, settings: Settings): Array<{ op: OperationName, server: number, high: number | null, pooled: number, ratio: number }> {
  const high = Math.max(...settings.connections)
  if (settings.connections.includes(settings.poolSize)) return []
  return OPERATIONS.flatMap((op) => {
    const pg = find(figures.postgres, op, high)
    const pooled = figures.pgbench.get(pgbenchKey(op, settings.poolSize))
    if (!pg || !pooled) return []
    return [{ op, server: pg.rps, high: figures.pgbench.get(pgbenchKey(op, high))?.tps ?? null, pooled: pooled.tps, ratio: pg.rps / pooled.tps }]
  })
}

/**
 * Each operation's server rate at the highest connection count beside pgbench's
 * best rate at any client count it ran (the connection counts and DB_POOL_SIZE).
 * On 2 cores, 50 backends can take turns rather than add throughput: where
 * pgbench at the highest count fell below its own rate at fewer clients, the
 * ratio at that count measures pgbench's fall, not the server.
 */
export function bestPgbenchRatios (figures: Pick<Figures, 'postgres' | 'pgbench'>, settings: Pick<Settings, 'connections' | 'poolSize'>):
Array<{ op: OperationName, clients: number, tps: number, highTps: number | null, ratio: number }> {
  const high = Math.max(...settings.connections)
  const counts = [...new Set([...settings.connections, settings.poolSize])]
  return OPERATIONS.flatMap((op) => {
    const pg = find(figures.postgres, op, high)
    const runs = counts.flatMap((clients) => {
      const run = figures.pgbench.get(pgbenchKey(op, clients))
      return run ? [{ clients, tps: run.tps }] : []
    })
    if (!pg || runs.length === 0) return []
    const best = runs.reduce((a, b) => (b.tps > a.tps ? b : a))
    return [{ op, clients: best.clients, tps: best.tps, highTps: figures.pgbench.get(pgbenchKey(op, high))?.tps ?? null, ratio: pg.rps / best.tps }]
  })
}

/** The floor beside pgbench and the server (bench/floor.ts): each operation and connection count it ran. */
function floorTable (figures: Figures): { header: string[], rows: string[][] } | null {
  if (figures.floor.length === 0) return null
  const rows = figures.floor.map((floor) => {
    const server = find(figures.postgres, floor.operation, floor.connections)
    const bench = figures.pgbench.get(pgbenchKey(floor.operation, floor.connections))
    return [
      LABELS[floor.operation], String(floor.connections), f(floor.rps, 0), f(floor.p50), f(floor.p99),
      f(bench?.tps, 0), f(bench ? floor.rps / bench.tps : null, 2), f(server && bench ? server.rps / bench.tps : null, 2), f(server ? server.rps / floor.rps : null, 2),
      f(floor.serverCpuMs, 2), f(server?.serverCpuMs, 2), f(floor.backendCpuMs, 2), f(floor.loadCpuMs, 2)
    ]
  })
  return {
    header: ['operation', 'connections', 'floor req/s', 'floor p50 ms', 'floor p99 ms', 'pgbench tps', 'floor ÷ pgbench', 'server ÷ pgbench', 'server ÷ floor',
      'floor CPU ms/req', 'server CPU ms/req', 'PostgreSQL CPU ms/req (floor)', 'load generator CPU ms/req (floor)'],
    rows
  }
}

const FLOOR_INTRO = 'The least a Node.js server does with the same statements (bench/floor-server.ts): node:http and node-postgres with a pool of ' +
  'DB_POOL_SIZE connections; each request, the same as the server\'s, runs the server\'s captured statement with a random target\'s values, as pgbench ' +
  'replays it, and gets the first row\'s longest text back as its answer: no routing, validation, JSON or compression. It runs in pgbench\'s copy of the ' +
  'database right after pgbench, under the same load generator, and remembers what the server remembers between requests (a change\'s kept children); ' +
  'a read tells the database the version of its target that pgbench\'s replay tells it. A conditional rename takes its project from the request and ' +
  'keeps each project\'s tag from its last answer (starting from bench_tags), and answers the load generator\'s reads of the tags before the run. ' +
  'Its rate beside pgbench\'s is what HTTP, the driver and one event loop sharing the cores cost before any of the server\'s own work; the server\'s ' +
  'beside the floor\'s is what that work costs.'

/** The parts of a latency by the server's own clock (bench/timings.ts): per operation, the load generator's figures, then the server's. */
function clockTable (figures: Figures): { header: string[], rows: string[][] } | null {
  if (figures.timed === null || figures.timed.length === 0) return null
  const parts = (t: Timing | null) => t === null ? '–' : `${f(t.p50Ms)} / ${f(t.p99Ms)} (${f(t.meanMs)})`
  const header = ['operation', 'connections', 'req/s', 'load generator p50 / p99 ms', 'in the server p50 / p99 (mean) ms',
    'waiting for a connection p50 / p99 (mean) ms', 'the statement\'s round trip p50 / p99 (mean) ms', 'statements per request', 'the rest, mean ms']
  const rows = figures.timed.map(({ operation, connections, load, timed }) => {
    const { request, pool, statement } = timed
    const perRequest = request && statement ? statement.count / request.count : null
    const rest = request && pool && statement && perRequest !== null ? request.meanMs - (pool.count / request.count) * pool.meanMs - perRequest * statement.meanMs : null
    return [LABELS[operation], String(connections), f(load.rps, 0), `${f(load.p50)} / ${f(load.p99)}`, parts(request), parts(pool), parts(statement), f(perRequest, 2), f(rest, 2)]
  })
  return { header, rows }
}

const CLOCK_INTRO = 'The parts of a latency, by the server\'s own clock: each operation again, on a server of its own run with ' +
  '`bench/timings-preload.mjs` (`node --import`), which records for every request the time from its headers parsed to its response ' +
  'handed to the socket (node:http\'s diagnostics channels), each wait for one of the DB_POOL_SIZE connections, and each statement\'s round ' +
  'trip from sending it to its result reaching the code that waits for it: the backend\'s work, its waits for a CPU and the event loop\'s for ' +
  'its turn. The rest is the request\'s mean less the waits and round trips it made (HTTP, checks, JSON, the answer). The load generator\'s ' +
  'figures add the time a request spends in the sockets and in autocannon, which shares the cores.'

/**
 * Per operation at the lowest connection count: the server's latencies beside those
 * of pgbench's transactions there and at the server's pool size (the most statements
 * the server runs at once): the database alone, with no HTTP, JSON or pool.
 */
function latencyTable (figures: Figures, settings: Settings): { header: string[], rows: string[][] } | null {
  const low = Math.min(...settings.connections)
  const pool = settings.poolSize
  const rows = OPERATIONS.flatMap((op) => {
    const pg = find(figures.postgres, op, low)
    const own = figures.pgbench.get(pgbenchKey(op, low))
    const pooled = figures.pgbench.get(pgbenchKey(op, pool))
    if (!pg || !own || own.p99Ms === null) return []
    return [[LABELS[op], f(pg.rps, 0), f(pg.p50), f(pg.p99), f(own.tps, 0), f(own.p50Ms), f(own.p99Ms),
      ...(pool === low ? [] : [f(pooled?.tps, 0), f(pooled?.p50Ms), f(pooled?.p99Ms)])]]
  })
  if (rows.length === 0) return null
  const header = ['operation', `server req/s, ${low} connections`, 'server p50 ms', 'server p99 ms', `pgbench tps, ${low} clients`, 'pgbench p50 ms', 'pgbench p99 ms',
    ...(pool === low ? [] : [`pgbench tps, ${pool} clients`, `pgbench p50 ms, ${pool} clients`, `pgbench p99 ms, ${pool} clients`])]
  return { header, rows }
}

const LATENCY_INTRO = (low: number, pool: number) => `The server's latencies at ${low} connections beside pgbench's replay of its statements ` +
  `at ${low} clients and at ${pool} (DB_POOL_SIZE: the most statements the server runs at once), from pgbench's log of every transaction ` +
  '(`-l`; a transaction also reads its target from `bench_targets`, one more round trip than the server\'s). pgbench\'s are the database\'s ' +
  'own on this machine, with no HTTP, JSON or pool: where its p99 is over a bound, no server that sends these statements meets that bound here.'

/** Per operation: extended tps, prepared tps (the server's protocol starred) and their ratio. */
function protocolRows (figures: Figures, low: number): string[][] {
  return OPERATIONS.map((op) => {
    const own = figures.pgbench.get(pgbenchKey(op, low))
    const other = figures.otherProtocol.get(op)
    const serverPrepared = figures.scripts[op].protocol === 'prepared'
    const extended = serverPrepared ? other : own
    const prepared = serverPrepared ? own : other
    const star = (value: string, mine: boolean) => mine ? `${value}*` : value
    return [LABELS[op], star(f(extended?.tps, 0), !serverPrepared), star(f(prepared?.tps, 0), serverPrepared),
      extended && prepared ? f(prepared.tps / extended.tps, 2) : '–']
  })
}

/** How much CPU other processes took during the measured runs: the noise in the figures. */
function othersLine (figures: Figures): string {
  const range = (results: LoadResult[]) => {
    const values = results.map((r) => r.othersCpuPercent).filter((v) => v !== null)
    if (values.length === 0) return null
    return `${f(Math.min(...values), 0)}–${f(Math.max(...values), 0)} % (mean ${f(values.reduce((a, b) => a + b, 0) / values.length, 0)} %)`
  }
  const pg = range([...figures.postgres, ...figures.sizes.postgres.map((s) => s.result)])
  const em = range([...figures.embedded, ...figures.sizes.embedded.map((s) => s.result)])
  if (!pg && !em) return '- CPU used by other processes during the runs: not measured'
  const all = [...figures.postgres, ...figures.embedded].map((r) => r.othersCpuPercent ?? 0)
  const busy = all.length > 0 && all.reduce((a, b) => a + b, 0) / all.length > 10
  return '- CPU used by other processes (not autocannon, the server or its database backends) during the HTTP runs, ' +
    `as a share of the machine: ${[pg ? `PostgreSQL runs ${pg}` : '', em ? `embedded runs ${em}` : ''].filter(Boolean).join('; ')}` +
    (busy ? ': other work competed for the CPUs, so the figures are lower and noisier than on an idle machine' : '')
}

const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met')

/**
 * What a missed p99 bound asks of throughput. With every connection always waiting
 * on a request (a closed loop, as autocannon runs), the mean latency is the
 * connections ÷ the req/s (Little's law), and the p99 is at least the mean: a p99
 * under `boundMs` needs at least connections ÷ `boundMs` req/s, and more the more
 * the latencies spread.
 */
function littlesLaw (r: LoadResult, boundMs: number): string {
  const meanMs = (1000 * r.connections) / r.rps
  const needed = (1000 * r.connections) / boundMs
  return meanMs >= boundMs
    ? `mean ${f(meanMs, 0)} ms at ${f(r.rps, 0)} req/s: under ${boundMs} ms needs more than ${f(needed, 0)} req/s`
    : `mean ${f(meanMs, 1)} ms, p99 ${f(r.p99 / meanMs, 1)}× the mean`
}

/** Each target beside the figure it is about. */
function targets (figures: Figures, settings: Settings): string[] {
  const lines: string[] = []
  const high = Math.max(...settings.connections)
  const low = Math.min(...settings.connections)
  const ratios = OPERATIONS.map((op) => {
    const pg = find(figures.postgres, op, high)
    const bench = figures.pgbench.get(pgbenchKey(op, high))
    return pg && bench ? { op, value: pg.rps / bench.tps } : null
  }).filter((x) => x !== null)
  if (ratios.length > 0) {
    lines.push(`server ÷ pgbench ≥ ${RATIO_TARGET} at ${high} connections: ` +
      ratios.map((r) => `${LABELS[r.op]} ${f(r.value, 2)} (${verdict(r.value >= RATIO_TARGET)})`).join(', '))
  }
  const best = bestPgbenchRatios(figures, settings)
  if (best.some((r) => r.clients !== high)) {
    lines.push(`the same against pgbench's best rate at any client count it ran (where that is not ${high} clients, pgbench at ${high} fell below its own rate with fewer backends, ` +
      'and the ratio above measures that fall): ' +
      best.map((r) => `${LABELS[r.op]} ${f(r.ratio, 2)} (${verdict(r.ratio >= RATIO_TARGET)}; ${f(r.tps, 0)} tps at ${r.clients} clients` +
        `${r.clients === high || r.highTps === null ? '' : ` against ${f(r.highTps, 0)} at ${high}`})`).join(', '))
  }
  const pooled = ceilingRows(figures, settings)
  if (pooled.length > 0) {
    lines.push(`beside it, the server at ${high} connections ÷ pgbench at ${settings.poolSize} clients (DB_POOL_SIZE: the most statements the server runs at once): ` +
      pooled.map((r) => `${LABELS[r.op]} ${f(r.ratio, 2)}`).join(', '))
  }
  const floors = OPERATIONS.map((op) => {
    const floor = find(figures.floor, op, high)
    const bench = figures.pgbench.get(pgbenchKey(op, high))
    return floor && bench ? `${LABELS[op]} ${f(floor.rps / bench.tps, 2)}` : null
  }).filter((x) => x !== null)
  if (floors.length > 0) {
    lines.push(`beside it, the floor (the least a Node.js server does with the same statements; "The floor" below) ÷ pgbench at ${high} connections: ${floors.join(', ')}`)
  }
  lines.push(`p99 ≤ 25 ms at ${low} connections: ` + OPERATIONS.map((op) => {
    const pg = find(figures.postgres, op, low)
    const alone = figures.pgbench.get(pgbenchKey(op, low))
    const database = alone === undefined || alone.p99Ms === null ? '' : `; pgbench alone at ${low} clients: p99 ${f(alone.p99Ms)} ms at ${f(alone.tps, 0)} tps`
    return pg && pg.requests > 0 ? `${LABELS[op]} ${f(pg.p99)} ms (${verdict(pg.p99 <= 25)}${pg.p99 <= 25 ? '' : `; ${littlesLaw(pg, 25)}${database}`})` : `${LABELS[op]} – (no answer in the run)`
  }).join(', '))
  const sizes = figures.sizes.postgres
  const sizeLine = (['get', 'update_name'] as const).map((op) => {
    const large = sizes.find((r) => r.operation === op && r.set === 'large')
    const small = sizes.find((r) => r.operation === op && r.set === 'small')
    const same = sizes.find((r) => r.operation === op && r.set === 'small-5')
    if (!large || !small) return `${LABELS[op]} –`
    const ratio = large.result.p50 / small.result.p50
    let text = `${LABELS[op]} ${f(ratio, 2)}× (${verdict(ratio <= 2)})`
    if (same) text += `; against 5 normal projects under the same row contention ${f(large.result.p50 / same.result.p50, 2)}×`
    return text
  })
  lines.push(`large p50 ≤ 2× small (PostgreSQL, ${low} connections): ${sizeLine.join('; ')}`)
  if (typeof figures.redmine !== 'string') {
    const ratios = redmineRatios(figures.redmine)
    const top = ratios.find((r) => r.connections === high)
    if (top) {
      lines.push(`rename at ${high} connections ≥ ${REDMINE_TARGET}× Redmine's: ${f(top.ratio, 1)}× (${verdict(top.ratio >= REDMINE_TARGET)}; ` +
        `${f(top.ours, 0)} against ${f(top.redmine, 1)} req/s)` +
        ratios.filter((r) => r !== top).map((r) => `; at ${r.connections} connections ${f(r.ratio, 1)}×`).join(''))
    }
  } else {
    lines.push(`rename at ${high} connections ≥ ${REDMINE_TARGET}× Redmine's: not measured (${figures.redmine})`)
  }
  const rss = Math.max(...figures.postgres.map((r) => r.maxRssMb))
  const delayedRss = figures.delayed ? Math.max(...figures.delayed.results.map((r) => r.maxRssMb)) : null
  lines.push(`server RSS ≤ 200 MB: at most ${f(rss, 0)} MB on PostgreSQL (${verdict(rss <= 200)}; ${f(settings.idleRssMb.postgres, 0)} MB once ready, before any load` +
    (delayedRss === null ? '' : `; at most ${f(delayedRss, 0)} MB behind the delay`) + ')' +
    (figures.embedded.length > 0
      ? `; at most ${f(Math.max(...figures.embedded.map((r) => r.maxRssMb)), 0)} MB embedded (${f(settings.idleRssMb.embedded, 0)} MB before any load; the database runs inside the process)`
      : ''))
  if (figures.embedded.length > 0) {
    const parts: string[] = []
    for (const op of OPERATIONS) {
      for (const c of settings.connections) {
        const pg = find(figures.postgres, op, c)
        const em = find(figures.embedded, op, c)
        if (pg && em) parts.push(`${LABELS[op]}@${c} ${f(em.rps / pg.rps, 2)} (${verdict(em.rps / pg.rps >= 0.5)})`)
      }
    }
    lines.push(`embedded ≥ 0.5 of PostgreSQL req/s: ${parts.join(', ')}`)
    lines.push(`embedded p99 < 500 ms at ${high} connections: ` + OPERATIONS.map((op) => {
      const em = find(figures.embedded, op, high)
      return em && em.requests > 0 ? `${LABELS[op]} ${f(em.p99)} ms (${verdict(em.p99 < 500)}${em.p99 < 500 ? '' : `; ${littlesLaw(em, 500)}`})` : `${LABELS[op]} – (no answer in the run)`
    }).join(', '))
  }
  return lines
}

/** Each turn of the side-by-side with Redmine, then the means and their ratio. */
function redmineTable (figures: Figures): { header: string[], rows: string[][] } | null {
  if (typeof figures.redmine === 'string') return null
  const rows: string[][] = []
  const cpu = (app: number | null, backends: number | null) => `${f(app, 2)} + ${f(backends, 2)}`
  for (const run of figures.redmine.runs) {
    run.ours.forEach((o, i) => {
      const r = run.redmine[i]
      rows.push([String(run.connections), String(i + 1), f(o.rps, 0), `${f(o.p50, 0)} / ${f(o.p99, 0)}`, cpu(o.serverCpuMs, o.backendCpuMs),
        f(r?.rps, 1), r ? `${f(r.p50, 0)} / ${f(r.p99, 0)}` : '–', r ? cpu(r.appCpuMs, r.backendCpuMs) : '–',
        r ? String(r.non2xx + r.errors + r.timeouts) : '–', r ? f(o.rps / r.rps, 1) : '–'])
    })
  }
  for (const r of redmineRatios(figures.redmine)) {
    rows.push([String(r.connections), 'mean', f(r.ours, 0), '', '', f(r.redmine, 1), '', '', '', `**${f(r.ratio, 1)}**`])
  }
  return {
    header: ['connections', 'turn', 'this server req/s', 'p50 / p99 ms', 'CPU ms/req: server + PostgreSQL', 'Redmine req/s', 'Redmine p50 / p99 ms',
      'CPU ms/req: Redmine + PostgreSQL', 'Redmine failures', 'this server ÷ Redmine'],
    rows
  }
}

/** Redmine's costliest statements per rename, or why they are not known. */
function redmineStatementLines (redmine: RedmineFigures): string[] {
  if (typeof redmine.statements === 'string') return [`Redmine's statements: not read (${redmine.statements}).`]
  const rows = redmine.statements.map((s) => [f(s.perRename, 2), f(s.meanMs, 3), f(s.rowsPerCall, 0), f(s.sharePercent, 1),
    `\`${(s.query.length > 110 ? `${s.query.slice(0, 110)}…` : s.query).replaceAll('|', '\\|')}\``])
  return [
    'What Redmine\'s rename does in PostgreSQL: its costliest statements over its recorded turns (pg_stat_statements on its database), ' +
      'per rename (the renames counted by its update of the project\'s name). A mean includes the time a statement waited for a lock.',
    '',
    table(['per rename', 'mean ms', 'rows per call', '% of its statements\' time', 'statement'], rows)
  ]
}

function redmineIntro (redmine: RedmineFigures): string {
  return `The same rename on Redmine at ${redmine.url}, on the same machine and PostgreSQL server (bench/redmine.ts): ` +
    '`PUT /projects/:id.json` with `{"project":{"name":…}}` and an administrator\'s API key, a random one of its ' +
    `${redmine.projects} projects and a new name each time, answered 204 with no body; this server's rename answers the whole project. ` +
    `The two take turns, ${redmine.seconds} s each, ${redmine.rounds} turns a side at each connection count, this server first, ` +
    `after one unrecorded turn a side at the highest connection count; before each run of either side both databases are vacuumed ` +
    `(as autovacuum would, against the dead rows the renames leave) and the machine left to go quiet. ` +
    `Redmine's CPU is that of its processes (${redmine.processes.length > 0 ? redmine.processes.map((p) => `\`${p}\``).join(', ') : 'none found'}) ` +
    'and of its database\'s backends.'
}

/** The delayed runs beside the direct ones. */
function delayedTable (figures: Figures): { header: string[], rows: string[][] } | null {
  const delayed = figures.delayed
  if (!delayed) return null
  const header = ['operation', 'connections', 'direct req/s', 'direct p50 ms', 'direct p99 ms',
    `+${delayed.delayMs} ms req/s`, `+${delayed.delayMs} ms p50 ms`, `+${delayed.delayMs} ms p99 ms`, 'delayed ÷ direct req/s', 'delayed max RSS MB']
  const rows = delayed.results.map((d) => {
    const pg = find(figures.postgres, d.operation, d.connections)
    return [LABELS[d.operation], String(d.connections), f(pg?.rps, 0), f(pg?.p50), f(pg?.p99), f(d.rps, 0), f(d.p50), f(d.p99),
      pg ? f(d.rps / pg.rps, 2) : '–', f(d.maxRssMb, 0)]
  })
  return { header, rows }
}

/** The reads with and without the answers kept in memory. */
function unkeptTable (figures: Figures): { header: string[], rows: string[][] } | null {
  const unkept = figures.unkept
  if (!unkept) return null
  const header = ['operation', 'connections', 'kept req/s', 'kept p99 ms', 'kept server CPU ms/req',
    'not kept req/s', 'not kept p99 ms', 'not kept server CPU ms/req', 'kept ÷ not kept req/s', 'not kept max RSS MB']
  const rows = unkept.results.map((u) => {
    const pg = find(figures.postgres, u.operation, u.connections)
    return [LABELS[u.operation], String(u.connections), f(pg?.rps, 0), f(pg?.p99), f(pg?.serverCpuMs, 2),
      f(u.rps, 0), f(u.p99), f(u.serverCpuMs, 2), pg ? f(pg.rps / u.rps, 2) : '–', f(u.maxRssMb, 0)]
  })
  return { header, rows }
}

const UNKEPT_INTRO = 'projects/get, projects/list and notifications/list write a project or page that the database returns again as the same text ' +
  'from the bytes written before (src/plugins/answers.ts, ANSWER_CACHE_MB, 16 MB by default); the runs above use it as configured by default. ' +
  'Here the same reads on a server started with ANSWER_CACHE_MB=0, which parses, builds and serializes every answer. In the runs above nothing ' +
  'changes what is read, so after the warm-up every answer that fits the bound is written from memory: the figures with it are those of ' +
  'reads of unchanged projects and inboxes, those without it of reads that each follow a change.'

function delayedIntro (delayed: Delayed): string {
  return `PostgreSQL behind a TCP proxy (bench/proxy.ts, its own process) that holds every chunk ${delayed.delayMs} ms in each direction, ` +
    `as a database across a network would: a \`SELECT 1\` round trip took ${f(delayed.roundTripMs.direct, 2)} ms direct and ` +
    `${f(delayed.roundTripMs.proxied, 2)} ms through it (median of 200; the timers add a little to the delay asked for). ` +
    `Each round trip a request makes to the database costs that much more; the server keeps DB_POOL_SIZE connections, so at most that many requests wait on the network at once: ` +
    `${delayed.poolSize} here (BENCH_DELAYED_POOL_SIZE), as a database across a network needs more connections than one on the same cores to stay busy through the round trips.`
}

/** Where the time goes: CPU per request, and the top statements if pg_stat_statements is loaded. */
function cpuLines (figures: Figures, settings: Settings): string[] {
  const low = Math.min(...settings.connections)
  const lines = ['CPU per request (the server\'s process from /proc/<pid>/stat, utime + stime, and the PostgreSQL backends serving the bench database, over each run, divided by its requests), ' +
    `at ${low} connections: ` + OPERATIONS.map((op) => {
    const r = find(figures.postgres, op, low)
    return r ? `${LABELS[op]} server ${f(r.serverCpuMs, 2)} ms + PostgreSQL ${f(r.backendCpuMs, 2)} ms` : `${LABELS[op]} –`
  }).join('; ') + '. On 2 cores, 2,000 ms of CPU a second is the ceiling for all of them together with the load generator.']
  return lines
}

/**
 * CPU per request of each side of the server ÷ pgbench comparison at the highest
 * connection count: the server's run (server, PostgreSQL, load generator) and
 * pgbench's (PostgreSQL, pgbench). The last column is the server's CPU per request
 * at which the run would reach 0.8 of pgbench's rate at the machine's CPU use of
 * the run as measured: that use divided by 0.8 × pgbench's rate, less what
 * PostgreSQL and the load generator took per request. None when they alone take
 * more.
 */
function budgetTable (figures: Figures, settings: Settings): { header: string[], rows: string[][], connections: number } | null {
  const high = Math.max(...settings.connections)
  const header = ['operation', 'server', 'PostgreSQL', 'load generator', 'all', 'pgbench: PostgreSQL', 'pgbench itself', 'all (pgbench)', `server CPU for ${RATIO_TARGET} of pgbench`]
  const rows: string[][] = []
  for (const operation of OPERATIONS) {
    const r = find(figures.postgres, operation, high)
    const b = figures.pgbench.get(pgbenchKey(operation, high))
    if (!r || r.serverCpuMs === null || r.backendCpuMs === null || r.loadCpuMs === null) continue
    const all = r.serverCpuMs + r.backendCpuMs + r.loadCpuMs
    const pgbenchAll = b && b.backendCpuMs !== null && b.clientCpuMs !== null ? b.backendCpuMs + b.clientCpuMs : null
    let budget = '–'
    if (b) {
      const allowed = (r.rps * all) / (RATIO_TARGET * b.tps)
      const left = allowed - r.backendCpuMs - r.loadCpuMs
      budget = left > 0 ? f(left, 2) : 'none'
    }
    rows.push([LABELS[operation], f(r.serverCpuMs, 2), f(r.backendCpuMs, 2), f(r.loadCpuMs, 2), f(all, 2),
      f(b?.backendCpuMs, 2), f(b?.clientCpuMs, 2), f(pgbenchAll, 2), budget])
  }
  return rows.length > 0 ? { header, rows, connections: high } : null
}

/**
 * The server's event loop per request in the PostgreSQL runs: time on a CPU and time
 * runnable but waiting for one, at each connection count. The waiting is latency
 * the server's own code does not cause: the 2 cores are busy with PostgreSQL's
 * backends and the load generator, and a write that wakes a backend may hand it the
 * CPU at once.
 */
function eventLoopTable (figures: Figures, settings: Settings): { header: string[], rows: string[][] } | null {
  const rows: string[][] = []
  for (const operation of OPERATIONS) {
    for (const connections of settings.connections) {
      const r = find(figures.postgres, operation, connections)
      if (!r || r.eventLoopOnCpuMs === null || r.eventLoopWaitMs === null) continue
      rows.push([LABELS[operation], String(connections), f(r.eventLoopOnCpuMs, 2), f(r.eventLoopWaitMs, 2),
        f(r.eventLoopWaitMs / r.eventLoopOnCpuMs, 2), f((r.rps * r.eventLoopWaitMs) / 10, 0)])
    }
  }
  return rows.length > 0
    ? { header: ['operation', 'connections', 'on a CPU ms/req', 'waiting for a CPU ms/req', 'waiting ÷ on a CPU', 'waiting, % of the run'], rows }
    : null
}

/**
 * The server's CPU per request by thread, PostgreSQL's runs and the embedded ones
 * side by side: what the event loop does, what the embedded database's thread does
 * (one statement at a time: 1,000 ms over its ms per request is the most requests a
 * second it can serve), and what V8's helper threads do besides.
 */
function threadTable (figures: Figures, settings: Settings): { header: string[], rows: string[][] } | null {
  const withEmbedded = figures.embedded.some((r) => r.serverThreadsCpuMs !== null)
  const rows: string[][] = []
  for (const operation of OPERATIONS) {
    for (const connections of settings.connections) {
      const pg = find(figures.postgres, operation, connections)?.serverThreadsCpuMs ?? null
      const em = find(figures.embedded, operation, connections)?.serverThreadsCpuMs ?? null
      if (pg === null && em === null) continue
      const row = [LABELS[operation], String(connections), f(pg?.eventLoop, 2), f(pg?.other, 2), pg ? f(100 * pg.other / (pg.eventLoop + pg.database + pg.other), 0) : '–']
      if (withEmbedded) {
        row.push(f(em?.eventLoop, 2), f(em?.database, 2), f(em?.other, 2), em ? f(100 * em.other / (em.eventLoop + em.database + em.other), 0) : '–',
          em && em.database > 0 ? f(1000 / em.database, 0) : '–')
      }
      rows.push(row)
    }
  }
  if (rows.length === 0) return null
  const header = ['operation', 'connections', 'PostgreSQL: event loop', 'PostgreSQL: other threads', 'PostgreSQL: other threads, % of the server']
  if (withEmbedded) header.push('embedded: event loop', 'embedded: database thread', 'embedded: other threads', 'embedded: other threads, % of the server', 'embedded: the database thread\'s ceiling, req/s')
  return { header, rows }
}

const THREAD_INTRO = 'The server\'s CPU ms per request by thread (/proc/<pid>/task/<tid>/stat, utime + stime, over each run): its main thread, which runs ' +
  'the event loop (HTTP, the app, the driver, and the garbage collection V8 does there); the embedded database\'s thread, named ' +
  '`embedded-db` (src/db/thread-name.ts); and every other thread, mostly V8\'s helpers, which collect garbage in parallel with the main ' +
  'thread and compile. The embedded database runs one statement at a time on its thread, so 1,000 ms over that thread\'s ms per request is ' +
  'the most requests a second the embedded server can answer, however idle the rest of the machine; at 50 connections a p99 under 500 ms ' +
  'needs more than 100 a second.'

const EVENT_LOOP_INTRO = 'The server\'s main thread, which runs its event loop, per request in the PostgreSQL runs (/proc/<pid>/schedstat): ' +
  'the time it ran on a CPU, and the time it was ready to run but waited for a CPU, every request in the process waiting with it. ' +
  'The waiting comes from sharing 2 cores with PostgreSQL\'s backends and the load generator: a write to a backend\'s socket wakes it, ' +
  'and the kernel often gives it the CPU the server was on. The profile\'s socket I/O share above holds that wait.'

function budgetIntro (connections: number): string {
  return `CPU ms per request at ${connections} connections, the server's runs beside pgbench's replay of the same statements (pgbench's own CPU from bash's \`times\`). ` +
    `The last column is the server's CPU per request at which its run would reach ${RATIO_TARGET} of pgbench's rate, at the CPU the run used: ` +
    `that CPU a second divided by ${RATIO_TARGET} × pgbench's rate, less PostgreSQL's and the load generator's share per request ` +
    '(an estimate: a cheaper server would also change how the three share the 2 cores).'
}

/** A statement's text with every constant and parameter as `?`: pg_stat_statements writes constants (null and booleans too) as parameters. */
function shape (sql: string): string {
  return sql.replace(/'(?:[^']|'')*'|\$\d+|\b\d+(?:\.\d+)?\b|\b(?:true|false|null)\b/gi, '?').replace(/\s+/g, ' ').trim()
}

/** The operations whose captured statement has this text's shape, for the table of top statements. */
function operationsOf (query: string, captures: Record<OperationName, Capture>): string {
  const wanted = shape(query)
  const names = OPERATIONS.filter((o) => captures[o].statements.some((s) => shape(s.sql) === wanted)).map((o) => LABELS[o])
  return names.length > 0 ? names.join(', ') : 'other'
}

function statementLines (stats: StatementStats, captures: Record<OperationName, Capture>): string[] {
  if (!stats.available) return [`Top statements: ${stats.reason}.`]
  if (stats.top.length === 0) return ['Top statements: pg_stat_statements recorded none.']
  const r = stats.requests
  const sent = r === undefined ? 0 : r.counted + r.tagReads + r.cutOff
  return [
    ...(r === undefined ? [] : [
      `Statements per request under load (pg_stat_statements): over the PostgreSQL HTTP runs, break-in and warm-ups included, the server was sent ${sent} requests ` +
        `(${r.counted} responses the load generator counted, ${r.tagReads} ETag reads before the conditional runs, and ${r.cutOff} requests in flight when a run ended, ` +
        'one per connection, which the server serves but the load generator does not count) and PostgreSQL ran ' +
        `${stats.operationCalls} statements that begin with the token's check: ${f(stats.operationCalls / sent, 3)} a request.`,
      ''
    ]),
    'Top statements over the PostgreSQL HTTP runs (pg_stat_statements, by total execution time):',
    '',
    table(['calls', 'total ms', 'mean ms', 'rows', 'operation', 'statement'], stats.top.map((s) => [
      String(s.calls), f(s.totalMs, 0), f(s.meanMs, 3), String(s.rows), operationsOf(s.query, captures),
      `\`${s.query.replace(/\s+/g, ' ').slice(0, 100).replaceAll('|', '\\|').replaceAll('`', "'")}…\``
    ]))
  ]
}

function webhookLines (w: WebhookFigures | null): string[] {
  if (!w) return ['Not run (--no-webhooks).']
  const run = (r: { rps: number, p50: number, p99: number }) => `${f(r.rps, 0)} req/s, p50 ${f(r.p50, 0)} ms, p99 ${f(r.p99, 0)} ms`
  return [
    `bench/webhooks.ts on its own database (${w.projects} projects), the same build and flags:`,
    '',
    `- Mutation cost: update_name at 10 connections, ${w.durationS} s, mean of two runs each (A B B A): no endpoint ${run(w.rename.plain)}; ` +
      `${w.endpoints} endpoints per company (the rename writes ${w.endpoints} deliveries and their jobs in its statement, the API not delivering) ${run(w.rename.subscribed)}, ` +
      `${f((100 * w.rename.subscribed.rps) / w.rename.plain.rps, 0)} % of the throughput without. The statement alone, one at a time: ` +
      `p50 ${f(w.statement.plain[0], 2)} ms / p99 ${f(w.statement.plain[1], 2)} ms without, p50 ${f(w.statement.subscribed[0], 2)} ms / p99 ${f(w.statement.subscribed[1], 2)} ms with ${w.endpoints} endpoints.`,
    `- Delivery throughput: one worker process (WEBHOOKS_WORKER_CONCURRENCY ${w.concurrency}) to a local receiver answering 200 at once: ` +
      `${w.delivery.deliveries} deliveries in ${f(w.delivery.seconds, 1)} s = ${f(w.delivery.perSecond, 0)} deliveries/s${w.delivery.drained ? '' : ' (not all arrived within 10 minutes)'}; ` +
      `the worker's resident memory at most ${f(w.delivery.workerMaxRssMb, 0)} MB (\`npm run start:worker:prod\`, node without flags).`,
    `- Commit to receiver: ${w.rate} renames/s × ${w.endpoints} endpoints for ${w.durationS} s, the API process delivering (${w.latency.renames} renames, ${w.latency.deliveries} deliveries): ` +
      `p50 ${f(w.latency.p50, 0)} ms, p99 ${f(w.latency.p99, 0)} ms, max ${f(w.latency.max, 0)} ms (the receiver's clock at arrival minus the event's timestamp, the database's now() of the change).`
  ]
}

/**
 * The results section of the file this run replaces, to keep below this run's:
 * its first `## Results of` section, headed as the previous run and its headings
 * one level down. Null when the file has none.
 */
export function previousResults (markdown: string): string | null {
  const start = markdown.search(/^## Results of /m)
  if (start < 0) return null
  const rest = markdown.slice(start)
  const end = rest.search(/^## Previous results/m)
  const section = (end < 0 ? rest : rest.slice(0, end)).trimEnd()
  const [heading, ...body] = section.split('\n')
  const when = heading!.replace(/^## Results of /, '')
  return [`## Previous results: the run of ${when}`, '',
    'The figures this run replaced, as that run wrote them (its machine and settings in its first lines).', '',
    ...body.map((line) => (/^#{2,5} /.test(line) ? `#${line}` : line))].join('\n').trimEnd() + '\n'
}

function failures (figures: Figures): string[] {
  const lines: string[] = []
  const all = [
    ...figures.postgres.map((r) => ({ r, where: 'PostgreSQL' })),
    ...figures.embedded.map((r) => ({ r, where: 'embedded' })),
    ...figures.floor.map((r) => ({ r, where: 'floor' })),
    ...(figures.delayed?.results ?? []).map((r) => ({ r, where: `PostgreSQL +${figures.delayed!.delayMs} ms` })),
    ...figures.sizes.postgres.map((s) => ({ r: s.result, where: `PostgreSQL ${s.set}` })),
    ...figures.sizes.embedded.map((s) => ({ r: s.result, where: `embedded ${s.set}` }))
  ]
  for (const { r, where } of all) {
    if (r.non2xx > 0 || r.errors > 0) {
      lines.push(`${where} ${LABELS[r.operation]} at ${r.connections} connections: ${r.non2xx} non-2xx, ${r.errors} errors ` +
        `(${r.timeouts} timeouts); status codes ${JSON.stringify(r.statusCodes)}` +
        (r.samples.length > 0 ? `; first bodies: ${r.samples.map((s) => JSON.stringify(s)).join(' ')}` : ''))
    }
  }
  for (const [key, result] of figures.pgbench) {
    if (result.failed > 0) lines.push(`pgbench ${key}: ${result.failed} failed transactions`)
  }
  return lines
}

function statementsSection (figures: Figures, settings: Settings): string {
  const low = Math.min(...settings.connections)
  const parts: string[] = []
  for (const op of OPERATIONS) {
    const script = figures.scripts[op]
    const bench = figures.pgbench.get(pgbenchKey(op, low))
    const statements = figures.captures[op].statements
    const notified = figures.captures[op].notified
    parts.push(`**${LABELS[op]}**: ${statements.length} statement(s) per request, ` +
      `${script.protocol === 'prepared' ? 'named (prepared once per connection)' : 'unnamed (parsed and planned on every call)'}` +
      (notified > 0 ? `, ${notified} notifications written by each` : '') +
      (bench ? `; average latency of each pgbench command at ${low} clients:` : ''))
    if (bench) {
      parts.push(table(['command', 'ms'], script.commands.map((c, i) => [c, f(bench.statementMs[i], 3)])))
    }
    parts.push('<details><summary>captured SQL</summary>\n\n' + statements.map((s, i) =>
      `${i + 1}. parameters ${JSON.stringify(s.parameters.map(shorten))}\n\n   \`\`\`sql\n   ${s.sql.replace(/\s+/g, ' ')}\n   \`\`\``).join('\n\n') +
      '\n\n</details>')
    if (script.warnings.length > 0) parts.push(`Warnings: ${script.warnings.join('; ')}`)
  }
  return parts.join('\n\n')
}

function shorten (value: unknown): unknown {
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`
  if (typeof value === 'string' && value.length > 60) return `${value.slice(0, 40)}… (${value.length} chars)`
  return value
}

function sizeLine (size: DatasetSize): string {
  return `${size.projects} projects in ${size.companies} companies (${size.spacesPerCompany} spaces and ` +
    `${size.peoplePerCompany} people each), each with ${size.milestones} milestones, ${size.contributors} contributors ` +
    `(a champion and a reviewer among them), ${size.subscribers} subscribers, ${size.checkIns} check-ins, ` +
    `${size.keyResources} key resources, 4 task statuses, 2 unread notifications for the champion; plus ` +
    `${size.largeProjects} large projects with ${size.largeMilestones} milestones and ${size.largeContributors} contributors; ` +
    `${size.notifiedProjects} projects like the normal ones but with ${size.notifiedSubscribers} subscribers (every tenth a ` +
    '`mentioned` one, every twentieth canceled); ' +
    `${size.readers} readers, on no project, each with ${size.readerNotifications} notifications (the newest 30 unread)`
}

export const HOW_TO_RUN = `# Benchmarks

How to run: \`npm run bench\` (PostgreSQL at \`DATABASE_URL\`, else postgres://postgres@127.0.0.1:5432/postgres;
the bench recreates the database \`projects_bench\` there and leaves it in place afterwards; pgbench works in a copy, \`projects_bench_replay\`, dropped at the end).
It builds (\`npm run build\`), seeds PostgreSQL and the embedded database (PGlite), captures the SQL the server sends, then takes each operation in turn:
drives \`node dist/src/server.js\` on PostgreSQL with autocannon, replays the captured SQL with pgbench (at each connection count and at the server's DB_POOL_SIZE),
drives the floor (bench/floor-server.ts: the least a Node.js server does with the same statements) in pgbench's copy,
and drives the same build on the embedded database, so that the figures each ratio compares come from the same minutes (it measures both servers' CPU at rest after the runs).
It then runs the main operations again with PostgreSQL behind a proxy that delays every packet (1 ms each way),
runs bench/webhooks.ts, renames projects beside a Redmine when one is given (bench/redmine.ts), and rewrites this file, keeping the previous run's figures below this one's.
The default run takes twenty to thirty minutes on 2 cores.

| option | default | meaning |
| --- | --- | --- |
| \`DATABASE_URL\` | postgres://postgres@127.0.0.1:5432/postgres | the PostgreSQL server to use (the bench works in its database \`projects_bench\`) |
| \`BENCH_DURATION\` | 8 | seconds per measured run (autocannon and pgbench) |
| \`BENCH_SHORT_DURATION\` | 4 | seconds per small-vs-large run |
| \`BENCH_WARMUP\` | 5 | seconds of unrecorded load (10 connections) on each operation right before its runs, on each server: long enough to ask for each of its targets a few times, so that its runs find what it keeps in memory as its own load leaves it, not as the operations before it did |
| \`BENCH_BREAK_IN\` | 3 | seconds of unrecorded load on each operation at the highest connection count, once on each server (and each floor) as it starts, so that no measured run holds V8's compiling of a fresh process |
| \`BENCH_POOL_SIZE\` | 4 | the server's \`DB_POOL_SIZE\` (about 2 per core of the machine the server, PostgreSQL and the load generator share; see bench/run.ts) |
| \`BENCH_DELAYED_POOL_SIZE\` | 8 | the server's \`DB_POOL_SIZE\` in the runs behind the simulated network delay |
| \`BENCH_CONNECTIONS\` | 50,10 | HTTP connections and pgbench clients per run |
| \`BENCH_PROJECTS\` | 1000 | normal projects (PostgreSQL) |
| \`BENCH_EMBEDDED_PROJECTS\` | 1000 | normal projects (embedded) |
| \`BENCH_PGBENCH\` | pgbench | the pgbench binary; the pgbench columns stay empty when it is missing |
| \`BENCH_DELAY_MS\` | 1 | the simulated network delay each way between the server and PostgreSQL in the delayed runs |
| \`BENCH_WEBHOOK_*\` | | the webhook part's settings (see bench/webhooks.ts) |
| \`BENCH_KEEP_BODIES\` | | set (to anything): autocannon decodes every body it reads into a string, as it does by default; unset, it keeps only the bodies of failures (bench/load.ts) |
| \`BENCH_REDMINE_URL\`, \`BENCH_REDMINE_KEY\` | | a Redmine to rename projects on beside this server, and an administrator's API key (bench/redmine.ts; bench/redmine/setup.sh installs one); no side-by-side without them |
| \`BENCH_REDMINE_DATABASE\`, \`BENCH_REDMINE_ROUNDS\` | redmine, 3 | Redmine's database on the same PostgreSQL server (for its backends' CPU, its statements, and the VACUUM before each run), and the turns each side takes at each connection count |
${Object.entries(FLAGS).map(([flag, meaning]) => `| \`${flag}\` | | ${meaning} |`).join('\n')}

Nothing here is asserted: the targets are printed beside the figures.
`

/** The profiled runs: each part's share of the server's samples, idle included, then the busiest functions. */
function profileTable (runs: ProfiledRun[] | null): { header: string[], rows: string[][] } | null {
  if (runs === null || runs.length === 0) return null
  return {
    header: ['run', ...PARTS.map((p) => `${p} %`), 'functions with the most samples of their own'],
    rows: runs.map((r) => [r.label, ...PARTS.map((p) => f(r.parts[p], 1)),
      r.top.map((t) => `${t.name.replace(/\|/g, '\\|')} ${f(t.percent, 1)} %`).join('; ')])
  }
}

const PROFILE_INTRO = 'A V8 CPU profile of the server (`node --cpu-prof`, sampling its main thread) while each operation runs again at the ' +
  'highest connection count, on a server of its own started with the same flags and settings (bench/profile.ts). Each sample counts under the ' +
  'part of the stack it fell in: the app\'s own code (dist/src), Fastify with its compiled serializers and validators, the database driver ' +
  '(pg, pg-protocol, kysely), other packages, Node\'s own JavaScript (HTTP parsing and writing, streams, timers), the system calls that read and ' +
  'write sockets (kernel time spent in them, and the wait for a CPU when the write wakes another process on these 2 cores), built-ins ' +
  '(JSON.parse, hashing, buffers), garbage collection, and idle (waiting for the database or the client). The profiler slows the server by a few per cent.'

export function render (figures: Figures, settings: Settings, m: Machine): { text: string, markdown: string } {
  const main = mainTable(figures, settings)
  const sizesPg = sizeTable(figures.sizes.postgres)
  const sizesEm = sizeTable(figures.sizes.embedded)
  const targetLines = targets(figures, settings)
  const failureLines = failures(figures)
  const low = Math.min(...settings.connections)
  const delayed = delayedTable(figures)
  const unkept = unkeptTable(figures)
  const redmine = redmineTable(figures)
  const budget = budgetTable(figures, settings)
  const profile = profileTable(figures.profiled)
  const eventLoop = eventLoopTable(figures, settings)
  const threads = threadTable(figures, settings)
  const ceiling = ceilingRows(figures, settings)
  const floor = floorTable(figures)
  const latency = latencyTable(figures, settings)
  const clock = clockTable(figures)

  const text = [
    '',
    textTable(main.header, main.rows),
    '',
    `p50 small vs large project (PostgreSQL, ${low} connections, ${settings.shortDurationS} s each):`,
    textTable(sizesPg.header, sizesPg.rows),
    ...(figures.sizes.embedded.length > 0 ? ['', 'p50 small vs large project (embedded):', textTable(sizesEm.header, sizesEm.rows)] : []),
    ...(figures.otherProtocol.size > 0
      ? ['', `pgbench at ${low} clients, unnamed statements (-M extended) vs named (-M prepared); the server's protocol marked *: ` +
          protocolRows(figures, low).map((r) => `${r[0]} ${r[1]} vs ${r[2]} tps`).join(', ')]
      : []),
    ...(delayed ? ['', `Behind a simulated network delay (${figures.delayed!.delayMs} ms each way; SELECT 1 round trip ${f(figures.delayed!.roundTripMs.direct, 2)} ms direct, ${f(figures.delayed!.roundTripMs.proxied, 2)} ms through the proxy):`, textTable(delayed.header, delayed.rows)] : []),
    ...(unkept ? ['', 'The reads without the answers kept in memory (ANSWER_CACHE_MB=0):', textTable(unkept.header, unkept.rows)] : []),
    ...(redmine ? ['', 'The rename beside Redmine\'s:', textTable(redmine.header, redmine.rows)] : []),
    '',
    ...cpuLines(figures, settings),
    ...(latency ? ['', `Latency at ${low} connections beside pgbench's (the database alone):`, textTable(latency.header, latency.rows)] : []),
    ...(clock ? ['', 'The parts of a latency, by the server\'s own clock (bench/timings-preload.mjs):', textTable(clock.header, clock.rows)] : []),
    ...(budget ? ['', `CPU ms per request at ${budget.connections} connections, and the server's CPU per request that ${RATIO_TARGET} of pgbench would need:`, textTable(budget.header, budget.rows)] : []),
    ...(profile ? ['', 'Where the server\'s CPU goes (a CPU profile of each operation, % of samples):', textTable(profile.header, profile.rows)] : []),
    ...(eventLoop ? ['', 'The server\'s event loop per request, on a CPU and waiting for one:', textTable(eventLoop.header, eventLoop.rows)] : []),
    ...(threads ? ['', 'The server\'s CPU ms per request by thread:', textTable(threads.header, threads.rows)] : []),
    ...statementLines(figures.statements, figures.captures).filter((l) => !l.startsWith('|') && l !== ''),
    ...(figures.statements.available ? [textTable(['calls', 'total ms', 'mean ms', 'rows', 'operation'], figures.statements.top.map((t) => [String(t.calls), f(t.totalMs, 0), f(t.meanMs, 3), String(t.rows), operationsOf(t.query, figures.captures)]))] : []),
    '',
    'Webhooks:',
    ...webhookLines(figures.webhooks).filter((l) => l !== ''),
    '',
    'Targets (not assertions):',
    ...targetLines.map((l) => `  - ${l}`),
    '',
    failureLines.length > 0 ? `Non-2xx responses or errors:\n${failureLines.map((l) => `  - ${l}`).join('\n')}` : 'Non-2xx responses: none in any run.',
    ''
  ].join('\n')

  const markdown = [
    HOW_TO_RUN,
    `## Results of ${settings.date.toISOString().replace('T', ' ').slice(0, 16)} UTC`,
    '',
    `- Machine: ${m.cpu}, ${m.cpus} CPUs, ${f(m.ramGiB, 1)} GiB RAM; ${m.os}; Node ${m.node}; ${m.postgres}` +
      (m.pglite ? `; PGlite ${m.pglite}` : ''),
    `- Settings: ${settings.durationS} s per run (${settings.shortDurationS} s small vs large; each server, and each floor, broken in as it starts with ${settings.breakInS} s of each of its operations at ${Math.max(...settings.connections)} connections, unrecorded; ${settings.warmupS} s warm-up of each operation right before its runs), ` +
      `connections ${settings.connections.join(' and ')}, server DB_POOL_SIZE ${settings.poolSize} (${settings.poolSizeWhy}), ` +
      `rate limit off, LOG_LEVEL=warn, NODE_ENV=production, \`${Object.entries(settings.nodeEnv).map(([name, value]) => `${name}=${value} `).join('')}node ${settings.nodeFlags.join(' ')}\` (npm run start:prod's environment and flags); pgbench ${settings.pgbench ? `\`${settings.pgbench}\`` : 'not run'}; ` +
      `autocannon ${settings.keepsBodies ? 'decoding every body it reads into a string, as it does by default (BENCH_KEEP_BODIES)' : 'keeping only the bodies of failures, a success\'s bytes received, parsed and counted but not decoded (bench/load.ts)'}; ` +
      `the whole bench took ${Math.round(settings.totalSeconds)} s`,
    othersLine(figures),
    `- The server idle, after its runs (15 one-second windows with no request, /proc/<pid>/stat): at the median ${f(settings.idleCpuMs.postgres.median, 1)} ms of CPU a second on PostgreSQL` +
      (settings.idleCpuMs.embedded === null ? '' : `, ${f(settings.idleCpuMs.embedded.median, 1)} ms embedded (the database's thread included)`) +
      '; what it does then is its own background work, mostly the webhook workers\' looks for jobs they were not told of (once a second). ' +
      `The busiest second: ${f(settings.idleCpuMs.postgres.max, 1)} ms on PostgreSQL` +
      (settings.idleCpuMs.embedded === null ? '' : `, ${f(settings.idleCpuMs.embedded.max, 1)} ms embedded`) +
      `; over all 15: ${f(settings.idleCpuMs.postgres.mean, 1)} ms a second on PostgreSQL` +
      (settings.idleCpuMs.embedded === null ? '' : `, ${f(settings.idleCpuMs.embedded.mean, 1)} ms embedded`) +
      '. The busiest second holds what runs once: the full collection V8 makes some seconds after allocation stops (its memory reducer), ' +
      'and on the embedded database its upkeep\'s pass (db/embedded-upkeep.ts). /proc counts CPU time in clock ticks (usually 10 ms), so a window shows 0, 10, 20 ms and so on.',
    `- Dataset (PostgreSQL, seeded in ${f(settings.seedSeconds, 1)} s including tokens): ${sizeLine(settings.size)}. ` +
      `Rows: ${Object.entries(settings.rows).map(([k, v]) => `${k} ${v}`).join(', ')}`,
    settings.embedded
      ? `- Dataset (embedded, seeded in ${f(settings.embedded.seedSeconds, 1)} s): ${settings.embedded.size.projects === settings.size.projects ? 'the same' : sizeLine(settings.embedded.size)}`
      : '- Embedded: not run',
    `- Requests: every one carries \`Accept-Encoding: ${ACCEPT_ENCODING}\`, as Operately's CLI asks (\`gzip, …\`), so pages (projects/list, notifications/list) come gzip-compressed and the load generator counts their compressed bytes; ` +
      'each picks a random project of the normal set and its champion\'s write token; updates send a new name, or a new ~3 KB JSON description, every time, so each one writes the row and an activity ' +
      `(a description change also notifies the project's subscribers: ${figures.captures.update_description.notified} people on a normal project). ` +
      `${LABELS.update_description_mentions}: the same on a random project of the ${settings.size.notifiedProjects} with ${settings.size.notifiedSubscribers} subscribers, ` +
      `the description mentioning ${settings.size.mentions} people of the company: a quarter \`mentioned\` subscribers, a quarter other subscribers, ` +
      'half not on the list, who become `mentioned` subscribers at the project\'s first change; the mentions stay the same, so every change after the first ' +
      `notifies the same ${figures.captures.update_description_mentions.notified} people and the list stops growing. ` +
      `${LABELS.list_notifications}: a random reader asks for the first page at the default size; nothing notifies readers during the run, so their inbox keeps its size. ` +
      `${LABELS.list_projects}: a random champion asks for the first page at the default size, 20 whole projects of their company. ` +
      `${LABELS.update_name_if_match}: a rename with \`If-Match\` carrying the project's current tag, so every one succeeds: a random project of the normal set that no other request is renaming at that moment, ` +
      'with the ETag of its last answer (read with projects/get before the run, then taken from each answer); ' +
      'each pgbench client renames only projects of its own (the k-th of N clients the k-th, (k + N)-th, ...) and keeps their tags in an unlogged table `bench_tags`, one extra statement per transaction.',
    '',
    table(main.header, main.rows),
    '',
    `### p50 small vs large project (${low} connections, ${settings.shortDurationS} s each)`,
    '',
    'PostgreSQL:',
    '',
    table(sizesPg.header, sizesPg.rows),
    ...(figures.sizes.embedded.length > 0 ? ['', 'Embedded:', '', table(sizesEm.header, sizesEm.rows)] : []),
    '',
    'The 5 large projects take all the updates of their run, so rows are locked against each other more often than across 1,000; ' +
      'the "same contention" row spreads the same load over 5 normal projects to tell size from contention.',
    '',
    ...(delayed && figures.delayed
      ? [`### Behind a simulated network delay (${figures.delayed.delayMs} ms each way)`, '', delayedIntro(figures.delayed), '', table(delayed.header, delayed.rows), '']
      : ['### Behind a simulated network delay', '', 'Not run (--no-delay).', '']),
    ...(unkept ? ['### Reads without the answers kept in memory', '', UNKEPT_INTRO, '', table(unkept.header, unkept.rows), ''] : []),
    '### Beside Redmine',
    '',
    ...(redmine && typeof figures.redmine !== 'string'
      ? [redmineIntro(figures.redmine), '', table(redmine.header, redmine.rows), '', ...redmineStatementLines(figures.redmine), '']
      : [`Not run: ${figures.redmine as string}.`, '']),
    '### Where the time goes',
    '',
    ...cpuLines(figures, settings),
    '',
    ...(latency ? [LATENCY_INTRO(low, settings.poolSize), '', table(latency.header, latency.rows), ''] : []),
    ...(clock ? [CLOCK_INTRO, '', table(clock.header, clock.rows), ''] : []),
    ...(budget ? [budgetIntro(budget.connections), '', table(budget.header, budget.rows), ''] : []),
    ...(profile ? ['Where the server\'s CPU goes. ' + PROFILE_INTRO, '', table(profile.header, profile.rows), ''] : []),
    ...(eventLoop ? [EVENT_LOOP_INTRO, '', table(eventLoop.header, eventLoop.rows), ''] : []),
    ...(threads ? [THREAD_INTRO, '', table(threads.header, threads.rows), ''] : []),
    ...statementLines(figures.statements, figures.captures),
    '',
    '### Webhooks',
    '',
    ...webhookLines(figures.webhooks),
    '',
    '### Targets (not assertions)',
    '',
    ...targetLines.map((l) => `- ${l}`),
    '',
    failureLines.length > 0 ? `### Non-2xx responses or errors\n\n${failureLines.map((l) => `- ${l}`).join('\n')}` : 'Non-2xx responses: none in any run.',
    '',
    ...(ceiling.length > 0
      ? [
          `### The database at the server's concurrency (pgbench, ${settings.poolSize} clients)`,
          '',
          `The server runs at most DB_POOL_SIZE (${settings.poolSize}) statements at once, however many connections it serves; pgbench at ` +
            `${Math.max(...settings.connections)} clients runs as many backends, which on ${m.cpus} cores take turns and contend for PostgreSQL's locks ` +
            `rather than add throughput. The same scripts at ${settings.poolSize} clients give what PostgreSQL does with the statements at the ` +
            'concurrency the server gives it:',
          '',
          table(['operation', `server req/s, ${Math.max(...settings.connections)} connections`, `pgbench tps, ${Math.max(...settings.connections)} clients`,
            `pgbench tps, ${settings.poolSize} clients`, `server ÷ pgbench at ${settings.poolSize}`],
          ceiling.map((r) => [LABELS[r.op], f(r.server, 0), f(r.high, 0), f(r.pooled, 0), f(r.ratio, 2)])),
          ''
        ]
      : []),
    ...(floor ? ['### The floor: the least a Node.js server does with the same statements', '', FLOOR_INTRO, '', table(floor.header, floor.rows), ''] : []),
    ...(figures.otherProtocol.size > 0
      ? [
          `### Parsing and planning (pgbench, ${low} clients)`,
          '',
          'An unnamed statement (`-M extended`) is parsed and planned on every call; a named one (`-M prepared`) once per connection ' +
            '(pgbench\'s sessions, like the server\'s, set `plan_cache_mode = force_generic_plan`). ' +
            'The same scripts in both protocols show how much of PostgreSQL\'s work that is; * marks the protocol the server uses ' +
            '(the main table\'s pgbench column):',
          '',
          table(['operation', 'pgbench tps, -M extended', 'pgbench tps, -M prepared', 'prepared ÷ extended'], protocolRows(figures, low)),
          ''
        ]
      : []),
    '### Notes',
    '',
    `- pgbench's figure is PostgreSQL serving the same statements with no HTTP, JSON or pool in between, from as many backends ` +
      `as connections (${settings.connections.join(' or ')}); the server uses at most DB_POOL_SIZE (${settings.poolSize}). ` +
      `On ${m.cpus} cores, backends beyond a few per core take turns rather than add throughput. ` +
      'Each pgbench transaction also reads its target from `bench_targets`.',
    '- Autocannon, the server and PostgreSQL share the same CPUs, so every figure here is for all three on one machine.',
    '- The bench databases are vacuumed after seeding, before each operation\'s runs and before each later part, as autovacuum would keep them ' +
      '(PostgreSQL may run with autovacuum off). Each series of runs (the server\'s, pgbench\'s and the floor\'s of an operation, and each later part) ' +
      'begins right after a `CHECKPOINT`, so that all begin in the same state of the write-ahead log: the first change of a page after a checkpoint ' +
      'writes the whole page to the log, and a checkpoint set off by the seeding or an earlier series would otherwise fall in one side of a ratio.',
    '- Runs go in the table\'s order, each operation on PostgreSQL, then pgbench\'s replay of it (in a copy of the database made before any run, ' +
      '`projects_bench_replay`, so that pg_stat_statements counts the server\'s statements alone), then the floor in that copy, then on the embedded database; the server not being driven ' +
      'stays up and idle. Every description change adds notifications (about 100 each on the projects with long lists), ' +
      'so the notifications table grows through the run; the readers\' inboxes do not.',
    ...(figures.embedded.length > 0
      ? ['- The embedded database (PGlite) runs in a thread of the server\'s process, one statement at a time: its figures are ' +
          'one PostgreSQL backend\'s, beside the server\'s own event loop, and its resident memory is the server\'s plus the database\'s.']
      : []),
    '',
    '### The statements (captured from the server, replayed by pgbench)',
    '',
    'pgbench runs `-n -M <the server\'s protocol> -r -l -c <connections> -j 2 -T <duration>` (`-l`: a log of every transaction, for its latencies); each transaction first reads its random target from ' +
      '`bench_targets` (one primary-key lookup that the server does not make), then sends the captured statements. A read is ' +
      'captured after the same read of other targets: projects/list after every company\'s first page, so that its statement ' +
      'carries the versions of the projects the server holds, as under load (README, "Answers already written"). The runs ' +
      'before a read change the projects of pgbench\'s copy, so each read is captured again from the copy right before pgbench ' +
      'replays it: projects/list\'s statement then carries the copy\'s versions, and the database sends the shared parts of ' +
      'none of the page\'s projects, for the server as for pgbench.',
    '',
    statementsSection(figures, settings),
    ''
  ].join('\n')
  return { text, markdown }
}
