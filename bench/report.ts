// The bench's figures as bench/RESULTS.md: how it was run, then per operation each
// side's requests a second (the mean of its turns), the ratio new ÷ old, p99s, CPU
// per request and memory, directly and behind the delay; Redmine and webhooks
// after. Targets are shown beside the figures; none is asserted.
import { readFileSync } from 'node:fs'
import os from 'node:os'
import type { LoadResult } from './load.js'
import { LABELS, OPERATIONS, type OperationName } from './operations.js'
import { redmineRatios, type RedmineFigures } from './redmine.js'
import type { DatasetSize } from './seed.js'
import type { WebhookFigures } from './webhooks.js'
import { observabilitySection, type ObservabilityFigures } from './observability.js'
import { FLAGS } from './options.js'

export type Side = 'new' | 'old'
export type Phase = 'direct' | 'delayed'

/** One measured run of one side. */
export interface Turn {
  side: Side
  phase: Phase
  round: number
  result: LoadResult
}

export interface SideFigures {
  side: Side
  /** The commit measured, as the report names it. */
  label: string
  database: string
  seedSeconds: number
  rows: Record<string, number>
  /** The node flags and environment of its `npm run start:prod`. */
  start: string
  /** Its servers' RSS once ready, before any load, by phase. */
  idleRssMb: Partial<Record<Phase, number>>
}

export interface Figures {
  sides: SideFigures[]
  turns: Turn[]
  delayed: { delayMs: number, poolSize: number, roundTripMs: { direct: number, proxied: number } } | null
  redmine: RedmineFigures | string
  webhooks: WebhookFigures | string | null
  /** What metrics and traces cost; absent or null when skipped. */
  observability?: ObservabilityFigures | string | null
}

export interface Settings {
  date: Date
  totalSeconds: number
  durationS: number
  warmupS: number
  breakInS: number
  rounds: number
  poolSize: number
  connections: number[]
  size: DatasetSize
  keepsBodies: boolean
  /** The machine's 1-minute load average as the measured runs began and ended. */
  loadAverage: { start: number, end: number }
  postgres: string
}

/** An operation's figures on one side in one phase at one connection count: the mean of its turns. */
export interface SideSummary {
  rps: number
  p50: number
  p99: number
  serverCpuMs: number | null
  backendCpuMs: number | null
  maxRssMb: number
  /** Each turn's req/s, in the order taken. */
  turns: number[]
  failures: number
}

export interface Row {
  operation: OperationName
  connections: number
  sides: Partial<Record<Side, SideSummary>>
  /** new ÷ old req/s; null with one side. */
  ratio: number | null
}

/** The throughput ratio under which an operation is called out (issue 62, item 4). */
export const RATIO_TARGET = 0.75
/** The rename's ratio to Redmine's the issue asks for at 50 connections. */
export const REDMINE_TARGET = 12

function mean (values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length
}

function meanOrNull (values: Array<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null)
  return known.length === 0 ? null : mean(known)
}

/** Per operation and connection count, each side's turns of `phase` summed up, and the ratio. */
export function summarize (turns: readonly Turn[], phase: Phase): Row[] {
  const rows: Row[] = []
  const connections = [...new Set(turns.map((t) => t.result.connections))].sort((a, b) => b - a)
  for (const operation of OPERATIONS) {
    for (const c of connections) {
      const row: Row = { operation, connections: c, sides: {}, ratio: null }
      for (const side of ['new', 'old'] as const) {
        const results = turns.filter((t) => t.phase === phase && t.side === side && t.result.operation === operation && t.result.connections === c).map((t) => t.result)
        if (results.length === 0) continue
        row.sides[side] = {
          rps: mean(results.map((r) => r.rps)),
          p50: mean(results.map((r) => r.p50)),
          p99: mean(results.map((r) => r.p99)),
          serverCpuMs: meanOrNull(results.map((r) => r.serverCpuMs)),
          backendCpuMs: meanOrNull(results.map((r) => r.backendCpuMs)),
          maxRssMb: Math.max(...results.map((r) => r.maxRssMb)),
          turns: results.map((r) => r.rps),
          failures: results.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0)
        }
      }
      if (row.sides.new === undefined && row.sides.old === undefined) continue
      if (row.sides.new !== undefined && row.sides.old !== undefined) row.ratio = row.sides.new.rps / row.sides.old.rps
      rows.push(row)
    }
  }
  return rows
}

/** The rows whose ratio is under RATIO_TARGET. */
export function slower (rows: readonly Row[]): Row[] {
  return rows.filter((r) => r.ratio !== null && r.ratio < RATIO_TARGET)
}

export function machine (): string {
  let cpu = os.cpus()[0]?.model ?? 'unknown'
  let system = `${os.type()} ${os.release()}`
  try {
    cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu
  } catch {}
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1]
    if (pretty) system = `${pretty}, kernel ${os.release()}`
  } catch {}
  return `${cpu}, ${os.cpus().length} CPUs, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; ${system}; Node ${process.version}`
}

const f0 = (n: number | null | undefined) => n == null ? '' : n.toFixed(0)
const f2 = (n: number | null | undefined) => n == null ? '' : n.toFixed(2)

function table (rows: readonly Row[], both: boolean): string {
  const head = both
    ? ['operation', 'new req/s', 'old req/s', 'new ÷ old', 'new p99 ms', 'old p99 ms', 'new server CPU ms/req', 'old server CPU ms/req', 'new PostgreSQL CPU ms/req', 'old PostgreSQL CPU ms/req', 'new max RSS MB', 'old max RSS MB', 'turns, req/s (new; old)']
    : ['operation', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'PostgreSQL CPU ms/req', 'max RSS MB', 'turns, req/s']
  const lines = [`| ${head.join(' | ')} |`, `| --- |${' ---: |'.repeat(head.length - 1)}`]
  for (const row of rows) {
    const n = row.sides.new
    const o = row.sides.old
    const failures = (n?.failures ?? 0) + (o?.failures ?? 0)
    const label = `${LABELS[row.operation]}${rows.some((r) => r.connections !== row.connections) ? `, ${row.connections} connections` : ''}${failures > 0 ? ` (${failures} failed requests)` : ''}`
    const turns = (s: SideSummary | undefined) => s?.turns.map((t) => t.toFixed(0)).join(', ') ?? ''
    const cells = both
      ? [label, f0(n?.rps), f0(o?.rps), row.ratio === null ? '' : `${f2(row.ratio)}${row.ratio < RATIO_TARGET ? ' ⚠' : ''}`, f0(n?.p99), f0(o?.p99),
          f2(n?.serverCpuMs), f2(o?.serverCpuMs), f2(n?.backendCpuMs), f2(o?.backendCpuMs), f0(n?.maxRssMb), f0(o?.maxRssMb), `${turns(n)}; ${turns(o)}`]
      : [label, f0(n?.rps), f0(n?.p50), f0(n?.p99), f2(n?.serverCpuMs), f2(n?.backendCpuMs), f0(n?.maxRssMb), turns(n)]
    lines.push(`| ${cells.join(' | ')} |`)
  }
  return lines.join('\n')
}

const HOW = `# Benchmarks

How to run: \`npm run bench\` measures this tree's server; \`npm run bench -- --against <rev>\` measures it beside
the server of another commit in one sitting (an A/B). PostgreSQL is \`DATABASE_URL\`'s server (default
postgres://postgres@127.0.0.1:5432/postgres); the bench creates a database per side there (\`bench_new\`, \`bench_old\`)
and drops them at the end.

How it works (bench/run.ts): this tree is built (\`npm run build\`); with \`--against\` the other commit is checked out
with \`git worktree add\` into a temporary directory, installed with its own \`npm ci\` and built. Each side's database is
migrated by its own tree's CLI (\`node dist/src/cli.js migrate\`) and filled by the same seed (bench/seed.ts: plain SQL
into the tables every version shares, tokens stored as their SHA-256 digests), so both sides hold the same data shape.
Each side's server is started as its \`npm run start:prod\` starts it (test/launch.ts), on its own database. Then each
operation in turn is driven with autocannon (bench/load.ts) on each side in alternating turns (new, old, old, new, ...),
each turn a warm-up and a measured run, so that a slow spell of a shared machine weighs on both sides; before each turn
the side's database is vacuumed and PostgreSQL checkpointed. The same again with PostgreSQL behind a proxy that delays
every packet (bench/proxy.ts, 1 ms each way), on fresh servers with a larger pool. Then this tree's renames beside a
Redmine's when one is given (bench/redmine.ts, bench/redmine/setup.sh installs one), and this tree's webhook figures
(bench/webhooks.ts; \`npm run bench:webhooks\` runs them alone), and what metrics and traces cost: this tree's server with both off,
with metrics on and with every request traced, taking turns on the same database (bench/observability.ts). The run rewrites this file; earlier runs are in its
history.

| option | default | meaning |
| --- | --- | --- |
| \`DATABASE_URL\` | postgres://postgres@127.0.0.1:5432/postgres | the PostgreSQL server (the bench works in its databases \`bench_new\` and \`bench_old\`) |
| \`BENCH_DURATION\` | 8 | seconds per measured run |
| \`BENCH_WARMUP\` | 3 | seconds of unrecorded load on the operation right before each measured run, at the same connections |
| \`BENCH_BREAK_IN\` | 3 | seconds of unrecorded load on each operation, once on each server as it starts (V8 compiles a fresh process's code) |
| \`BENCH_ROUNDS\` | 2 | measured turns of each side per operation and phase |
| \`BENCH_CONNECTIONS\` | 50 | comma-separated HTTP connection counts |
| \`BENCH_POOL_SIZE\` | 4 | the servers' \`DB_POOL_SIZE\` (about 2 per core of the 2-core machine the servers, PostgreSQL and autocannon share) |
| \`BENCH_DELAYED_POOL_SIZE\` | 8 | their \`DB_POOL_SIZE\` behind the simulated network delay |
| \`BENCH_DELAY_MS\` | 1 | the delay each way between the servers and PostgreSQL in the delayed runs |
| \`BENCH_PROJECTS\` | 1000 | normal projects |
| \`BENCH_KEEP_BODIES\` | | set: autocannon decodes every body into a string, as it does by default; unset, only failures' (bench/load.ts) |
| \`BENCH_REDMINE_URL\`, \`BENCH_REDMINE_KEY\` | | a Redmine and an administrator's API key (bench/redmine.ts); no side-by-side without them |
| \`BENCH_REDMINE_DATABASE\`, \`BENCH_REDMINE_ROUNDS\` | redmine, 3 | Redmine's database on the same PostgreSQL server, and the turns each side takes |
| \`BENCH_WEBHOOK_*\` | | the webhook part's settings (bench/webhooks.ts) |
${Object.entries(FLAGS).map(([flag, meaning]) => `| \`${flag}\` | | ${meaning} |`).join('\n')}

Nothing here is asserted: the targets (new ÷ old at least ${RATIO_TARGET}, a rename at least ${REDMINE_TARGET} times Redmine's) are printed beside the figures.
`

function dataset (size: DatasetSize, rows: Record<string, number>): string {
  return `${size.projects} projects in ${size.companies} companies (${size.spacesPerCompany} spaces and ${size.peoplePerCompany} people each), each with ` +
    `${size.milestones} milestones, ${size.contributors} contributors, ${size.subscribers} subscribers, ${size.checkIns} check-ins, ${size.keyResources} key resources; ` +
    `${size.largeProjects} large projects (${size.largeMilestones} milestones, ${size.largeContributors} contributors); ` +
    `${size.notifiedProjects} projects with ${size.notifiedSubscribers} subscribers whose new descriptions mention ${size.mentions} people; ` +
    `${size.readers} readers with ${size.readerNotifications} notifications each. Rows: ${Object.entries(rows).map(([t, n]) => `${t} ${n}`).join(', ')}`
}

function redmineSection (redmine: RedmineFigures | string): string {
  if (typeof redmine === 'string') return `### Beside Redmine\n\n${redmine}\n`
  const lines = [
    '### Beside Redmine',
    '',
    `This tree's update_name against Redmine's \`PUT /projects/:id.json\` (${redmine.url}, ${redmine.projects} projects; ${redmine.processes.length} puma processes), ` +
    `on the same PostgreSQL server, ${redmine.rounds} turns each of ${redmine.seconds} s, taking turns.`,
    '',
    '| connections | this server req/s | Redmine req/s | ratio | this server p99 ms | Redmine p99 ms |',
    '| ---: | ---: | ---: | ---: | ---: | ---: |'
  ]
  const ratios = redmineRatios(redmine)
  for (const [i, run] of redmine.runs.entries()) {
    const r = ratios[i]!
    lines.push(`| ${run.connections} | ${f0(r.ours)} | ${r.redmine.toFixed(1)} | ${r.ratio.toFixed(1)}${r.ratio < REDMINE_TARGET ? ' ⚠' : ''} | ` +
      `${f0(mean(run.ours.map((o) => o.p99)))} | ${f0(mean(run.redmine.map((o) => o.p99)))} |`)
  }
  return lines.join('\n') + '\n'
}

function webhookSection (webhooks: WebhookFigures | string | null): string {
  if (webhooks === null) return ''
  if (typeof webhooks === 'string') return `### Webhooks (this tree)\n\n${webhooks}\n`
  const w = webhooks
  return [
    '### Webhooks (this tree)',
    '',
    `- update_name at 10 connections, mean of two ${w.durationS} s runs each, the API not delivering: no endpoint ${f0(w.rename.plain.rps)} req/s (p99 ${f0(w.rename.plain.p99)} ms); ` +
    `${w.endpoints} endpoints per company ${f0(w.rename.subscribed.rps)} req/s (p99 ${f0(w.rename.subscribed.p99)} ms), ${f0(100 * w.rename.subscribed.rps / w.rename.plain.rps)} % of the throughput without`,
    `- Delivery throughput, one worker process (concurrency ${w.concurrency}) to a local receiver: ${w.delivery.deliveries} deliveries in ${w.delivery.seconds.toFixed(1)} s = ` +
    `${f0(w.delivery.perSecond)} a second${w.delivery.drained ? '' : ' (not all arrived)'}, the worker's RSS at most ${f0(w.delivery.workerMaxRssMb)} MB`,
    `- Commit to receiver, the API process delivering, ${w.rate} renames a second × ${w.endpoints} endpoints for ${w.durationS} s: ` +
    `p50 ${w.latency.p50} ms, p99 ${w.latency.p99} ms, max ${w.latency.max} ms`,
    ''
  ].join('\n')
}

/** RESULTS.md: how to run, then this run's figures. */
export function render (figures: Figures, settings: Settings): string {
  const both = figures.sides.length === 2
  const others = figures.turns.map((t) => t.result.othersCpuPercent).filter((p): p is number => p !== null)
  const direct = summarize(figures.turns, 'direct')
  const delayed = summarize(figures.turns, 'delayed')
  const out = [HOW, `## Results of ${settings.date.toISOString().slice(0, 16).replace('T', ' ')} UTC`, '']
  out.push(
    `- Machine: ${machine()}; ${settings.postgres}`,
    `- Code: ${figures.sides.map((s) => `**${s.side}** ${s.label}`).join('; ')}`,
    `- Load from others: the machine is shared; other processes used ${others.length === 0 ? '?' : `${f0(Math.min(...others))}–${f0(Math.max(...others))} % (mean ${f0(mean(others))} %)`} ` +
    `of its CPU during the measured runs; 1-minute load average ${settings.loadAverage.start.toFixed(1)} as they began, ${settings.loadAverage.end.toFixed(1)} as they ended`,
    `- Settings: ${settings.durationS} s per measured run after ${settings.warmupS} s of warm-up, ${settings.rounds} turns per side${both ? ' in alternating order' : ''}; ` +
    `each server broken in with ${settings.breakInS} s of each operation as it starts; connections ${settings.connections.join(', ')}; DB_POOL_SIZE ${settings.poolSize}` +
    `${figures.delayed ? ` (${figures.delayed.poolSize} behind the delay)` : ''}; rate limit off, LOG_LEVEL=warn, NODE_ENV=production; ` +
    `${figures.sides.map((s) => `${s.side}: \`${s.start}\``).join(', ')}; autocannon ${settings.keepsBodies ? 'keeping every body' : 'keeping only the bodies of failures'}; the whole bench took ${f0(settings.totalSeconds)} s`,
    `- Dataset (each side's database, seeded in ${figures.sides.map((s) => `${s.seedSeconds.toFixed(1)} s ${s.side}`).join(', ')}): ${dataset(settings.size, figures.sides[0]!.rows)}`,
    '- Requests: every one carries a champion\'s write token and `Accept-Encoding: gzip, deflate, br`; updates send a new name or a new ~3 KB description each time. ' +
    'update_name, If-Match: the project\'s current ETag, so every one succeeds. update_description (100 subscribers, 20 mentions): each change notifies about 100 people. ' +
    'notifications/list: a reader\'s first page (nothing notifies readers during the run). projects/list: the first page, 20 whole projects of the company.',
    ''
  )
  out.push(`### Directly on PostgreSQL`, '', table(direct, both), '')
  if (figures.delayed) {
    const d = figures.delayed
    out.push(`### PostgreSQL behind ${d.delayMs} ms each way`, '',
      `bench/proxy.ts delays every packet; \`SELECT 1\` takes ${d.roundTripMs.direct.toFixed(2)} ms directly and ${d.roundTripMs.proxied.toFixed(2)} ms through it. Fresh servers, DB_POOL_SIZE ${d.poolSize}.`, '',
      table(delayed, both), '')
  }
  if (both) {
    const low = [...slower(direct).map((r) => ({ r, where: 'directly' })), ...slower(delayed).map((r) => ({ r, where: 'behind the delay' }))]
    out.push(`### Under ${RATIO_TARGET} of the old throughput`, '',
      low.length === 0 ? 'None.' : low.map(({ r, where }) => `- ${LABELS[r.operation]} at ${r.connections} connections, ${where}: ${f2(r.ratio)}`).join('\n'), '')
  }
  const idle = figures.sides.map((s) => `${s.side} ${Object.entries(s.idleRssMb).map(([phase, mb]) => `${f0(mb)} MB (${phase})`).join(', ')}`)
  out.push('### Memory', '', `The servers' RSS once ready, before any load: ${idle.join('; ')}. At most under load: the max RSS columns above.`, '')
  out.push(redmineSection(figures.redmine))
  const hooks = webhookSection(figures.webhooks)
  if (hooks !== '') out.push(hooks)
  const observed = observabilitySection(figures.observability ?? null)
  if (observed !== '') out.push(observed)
  return out.join('\n')
}
