// npm run bench [-- --against <rev>]: builds this tree's server (and, for an A/B,
// another commit's in a temporary `git worktree`), gives each side a database of
// its own migrated by its own tree and filled by the same seed, drives each
// operation with autocannon on each side in alternating turns, directly and with
// PostgreSQL behind a delaying proxy, renames projects beside a Redmine when one
// is given, measures webhooks and what metrics and traces cost, and writes bench/RESULTS.md (bench/report.ts says
// how, in the file it writes).
//
// Options (environment): listed in RESULTS.md by bench/report.ts; flags in
// bench/options.ts.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { KEEPS_BODIES, load, quiet, startServer, type LoadResult, type Server } from './load.js'
import { LABELS, OPERATIONS, TARGET_SETS, type OperationName } from './operations.js'
import { parseFlags, positive } from './options.js'
import { checkpoint, dropDatabase, recreateDatabase, roundTripMs, vacuum, withDatabase } from './postgres.js'
import { observabilityBench, type ObservabilityFigures } from './observability.js'
import { spawnProxy, type ProxyProcess } from './proxy.js'
import { redmineOptions, redmineSideBySide, type RedmineFigures } from './redmine.js'
import { render, type Figures, type Phase, type SideFigures, type Turn } from './report.js'
import { DEFAULT_SIZE, seedAt, type Dataset, type DatasetSize } from './seed.js'
import { migrate, otherTree, thisTree, type Tree } from './tree.js'
import { webhookBench, webhookBenchOptions, type WebhookFigures } from './webhooks.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url))

const flags = parseFlags(process.argv.slice(2))
const options = {
  url: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  duration: Math.round(positive('BENCH_DURATION', 8)),
  warmup: Math.round(positive('BENCH_WARMUP', 3)),
  breakIn: Math.round(positive('BENCH_BREAK_IN', 3)),
  rounds: Math.round(positive('BENCH_ROUNDS', 2)),
  poolSize: Math.round(positive('BENCH_POOL_SIZE', 4)),
  delayedPoolSize: Math.round(positive('BENCH_DELAYED_POOL_SIZE', 8)),
  delayMs: positive('BENCH_DELAY_MS', 1),
  connections: (process.env.BENCH_CONNECTIONS || '50').split(',').map((c) => Math.round(Number(c))).filter((c) => c > 0),
  projects: Math.round(positive('BENCH_PROJECTS', DEFAULT_SIZE.projects))
}
if (options.connections.length === 0) throw new Error('BENCH_CONNECTIONS names no connection count')

const started = performance.now()
function say (message: string): void {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}\n`)
}

function describe (r: LoadResult): string {
  return `${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, max RSS ${r.maxRssMb.toFixed(0)} MB` +
    (r.serverCpuMs === null ? '' : `, CPU per request: server ${r.serverCpuMs.toFixed(2)} ms, PostgreSQL ${r.backendCpuMs?.toFixed(2) ?? '?'} ms`) +
    (r.othersCpuPercent === null ? '' : `, others ${r.othersCpuPercent.toFixed(0)}% of the CPU`) +
    (r.non2xx + r.errors + r.timeouts > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts ${r.samples.join(' | ')}` : '')
}

/** One side of the A/B: a tree, its database and its dataset. */
interface Side {
  tree: Tree
  database: string
  /** Its database on PostgreSQL directly (for the bench's own statements). */
  url: string
  dataset: Dataset
}

/** The servers of one phase, one per side, each on its database at `urlOf(side)`. */
async function startServers (sides: readonly Side[], phase: Phase, tmp: string, poolSize: number, urlOf: (side: Side) => string): Promise<Map<Side, Server>> {
  const servers = new Map<Side, Server>()
  for (const side of sides) {
    const server = await startServer({
      entry: side.tree.entry,
      start: side.tree.start,
      logFile: path.join(tmp, `server-${side.tree.side}-${phase}.log`),
      nodeArgs: flags.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.join(tmp, `profile-${side.tree.side}-${phase}`)}`] : [],
      env: { LOG_LEVEL: 'warn', NODE_ENV: 'production', RATE_LIMIT_MAX: '0', DB_POOL_SIZE: String(poolSize), DATABASE_URL: urlOf(side) }
    })
    servers.set(side, server)
    say(`${side.tree.side} server (${phase}) ready; RSS ${server.idleRssMb.toFixed(0)} MB before any load`)
  }
  return servers
}

/**
 * Each operation in turn on each side, in alternating turns (new, old, then old,
 * new, ...), each turn a warm-up and a measured run at each connection count, the
 * side's database vacuumed and PostgreSQL checkpointed before it. A server just
 * started runs code V8 has not compiled yet: each takes each operation once,
 * unrecorded, first.
 */
async function turns (sides: readonly Side[], servers: Map<Side, Server>, phase: Phase, also: readonly number[]): Promise<Turn[]> {
  const high = Math.max(...options.connections)
  const run = (side: Side, operation: OperationName, connections: number, seconds: number) => {
    const server = servers.get(side)!
    return load({ url: server.url, pid: server.pid, operation, targets: side.dataset[TARGET_SETS[operation]], connections, seconds, database: side.database, also })
  }
  for (const side of sides) {
    say(`${side.tree.side} (${phase}): breaking in, each operation at ${high} connections for ${options.breakIn} s`)
    for (const operation of OPERATIONS) await run(side, operation, high, options.breakIn)
  }
  const all: Turn[] = []
  for (const operation of OPERATIONS) {
    for (let round = 1; round <= options.rounds; round++) {
      const order = round % 2 === 1 ? sides : [...sides].reverse()
      for (const side of order) {
        for (const connections of options.connections) {
          await quiet([...servers.values()].map((s) => s.pid))
          await vacuum(side.url)
          await checkpoint(side.url, say)
          await run(side, operation, connections, options.warmup)
          const result = await run(side, operation, connections, options.duration)
          say(`${side.tree.side} (${phase}), turn ${round}: ${LABELS[operation]} at ${connections} connections: ${describe(result)}`)
          all.push({ side: side.tree.side, phase, round, result })
        }
      }
    }
  }
  return all
}

async function stopAll (servers: Map<Side, Server>): Promise<void> {
  for (const server of servers.values()) await server.stop()
}

async function main (): Promise<void> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'projects-bench-'))
  const log = path.join(tmp, 'build.log')
  const size: DatasetSize = { ...DEFAULT_SIZE, projects: options.projects }
  const trees: Tree[] = []
  const databases: string[] = []
  const sides: Side[] = []
  let servers = new Map<Side, Server>()
  let proxy: ProxyProcess | null = null
  try {
    say(flags.build ? 'building this tree (npm run build)' : 'this tree as built (--no-build)')
    trees.push(thisTree(ROOT, { build: flags.build, log }))
    if (flags.against !== null) {
      say(`checking out ${flags.against} into a temporary worktree, npm ci and npm run build there (a minute or two; output in ${log})`)
      trees.push(otherTree(ROOT, flags.against, { dir: path.join(tmp, 'other-tree'), log }))
    }
    let postgres = ''
    const sideFigures: SideFigures[] = []
    for (const tree of trees) {
      const database = `bench_${tree.side}`
      const url = withDatabase(options.url, database)
      say(`${tree.side} (${tree.label}): recreating ${database}, migrating it with its own tree, seeding`)
      databases.push(database)
      postgres = await recreateDatabase(options.url, database)
      migrate(tree, url, log)
      const dataset = await seedAt(url, size)
      say(`  seeded in ${dataset.seconds.toFixed(1)} s: ${JSON.stringify(dataset.rows)}`)
      sides.push({ tree, database, url, dataset })
      const start = [...Object.entries(tree.start.env).map(([k, v]) => `${k}=${v}`), 'node', ...tree.start.nodeFlags].join(' ')
      sideFigures.push({ side: tree.side, label: tree.label, database, seedSeconds: dataset.seconds, rows: dataset.rows, start, idleRssMb: {} })
    }
    const figureOf = (side: Side) => sideFigures.find((f) => f.side === side.tree.side)!

    const loadAverage = { start: os.loadavg()[0]!, end: 0 }
    const all: Turn[] = []
    servers = await startServers(sides, 'direct', tmp, options.poolSize, (side) => side.url)
    for (const [side, server] of servers) figureOf(side).idleRssMb.direct = server.idleRssMb
    all.push(...await turns(sides, servers, 'direct', []))

    // The rename beside Redmine's, on this tree's server, still warm from its turns.
    let redmine: RedmineFigures | string = 'No Redmine was given (BENCH_REDMINE_URL and BENCH_REDMINE_KEY; bash bench/redmine/setup.sh installs one).'
    const redmineSettings = redmineOptions()
    if (redmineSettings) {
      try {
        const ours = sides[0]!
        redmine = await redmineSideBySide(redmineSettings, {
          server: servers.get(ours)!, targets: ours.dataset.normal, url: options.url, database: ours.database, connections: options.connections, seconds: options.duration, say
        })
      } catch (error) {
        redmine = `Redmine at ${redmineSettings.url} failed: ${(error as Error).message}`
        say(redmine)
      }
    }
    await stopAll(servers)
    servers = new Map()

    // What metrics and traces cost, on this tree's server and database.
    let observability: ObservabilityFigures | string | null = null
    if (flags.observability) {
      say('metrics and traces (bench/observability.ts), this tree')
      const ours = sides[0]!
      try {
        observability = await observabilityBench({
          entry: ours.tree.entry, start: ours.tree.start, url: ours.url, database: ours.database, dataset: ours.dataset, poolSize: options.poolSize,
          connections: Math.max(...options.connections), rounds: options.rounds, warmup: options.warmup, duration: options.duration, breakIn: options.breakIn, tmp, say
        })
      } catch (error) {
        observability = `The metrics and traces bench failed: ${(error as Error).message}`
        say(observability)
      }
    }

    // The same servers with PostgreSQL behind a simulated network delay (bench/proxy.ts).
    let delayed: Figures['delayed'] = null
    if (flags.delay) {
      const target = new URL(options.url)
      proxy = await spawnProxy(options.delayMs, target.hostname, Number(target.port || 5432))
      const proxied = (side: Side) => {
        const u = new URL(side.url)
        u.hostname = '127.0.0.1'
        u.port = String(proxy!.port)
        return u.toString()
      }
      const roundTrip = { direct: await roundTripMs(sides[0]!.url), proxied: await roundTripMs(proxied(sides[0]!)) }
      say(`proxy: ${options.delayMs} ms each way; SELECT 1 takes ${roundTrip.direct.toFixed(2)} ms directly, ${roundTrip.proxied.toFixed(2)} ms through the proxy`)
      servers = await startServers(sides, 'delayed', tmp, options.delayedPoolSize, proxied)
      for (const [side, server] of servers) figureOf(side).idleRssMb.delayed = server.idleRssMb
      all.push(...await turns(sides, servers, 'delayed', [proxy.pid]))
      await stopAll(servers)
      servers = new Map()
      await proxy.stop()
      proxy = null
      delayed = { delayMs: options.delayMs, poolSize: options.delayedPoolSize, roundTripMs: roundTrip }
    }
    loadAverage.end = os.loadavg()[0]!

    let webhooks: WebhookFigures | string | null = null
    if (flags.webhooks) {
      say('webhooks (bench/webhooks.ts), this tree')
      try {
        webhooks = (await webhookBench({ ...webhookBenchOptions(), url: options.url, duration: options.duration, build: false })).figures
      } catch (error) {
        webhooks = `The webhook bench failed: ${(error as Error).message}`
        say(webhooks)
      }
    }

    const markdown = render({ sides: sideFigures, turns: all, delayed, redmine, webhooks, observability }, {
      date: new Date(),
      totalSeconds: (performance.now() - started) / 1000,
      durationS: options.duration,
      warmupS: options.warmup,
      breakInS: options.breakIn,
      rounds: options.rounds,
      poolSize: options.poolSize,
      connections: options.connections,
      size,
      keepsBodies: KEEPS_BODIES,
      loadAverage,
      postgres
    })
    process.stdout.write(markdown)
    await writeFile(RESULTS, markdown)
    say(`wrote ${path.relative(ROOT, RESULTS)}`)
  } finally {
    await stopAll(servers)
    await proxy?.stop()
    if (flags.keep) {
      say(`kept ${tmp} and the databases ${databases.join(', ')}`)
    } else {
      for (const database of databases) await dropDatabase(options.url, database).catch((error: Error) => { say(`could not drop ${database}: ${error.message}`) })
      for (const tree of trees) tree.remove()
      await rm(tmp, { recursive: true, force: true })
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exitCode = 1
})
