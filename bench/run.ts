// npm run bench: builds, seeds a realistic dataset into PostgreSQL and the embedded
// database (PGlite), captures the SQL the server sends for each operation, then takes
// each operation in turn: drives the production build on PostgreSQL with autocannon,
// replays the captured SQL with pgbench for PostgreSQL's own ceiling (in a copy of the
// database; a read captured again from the copy right before), drives the floor there
// (bench/floor.ts: the least a Node.js server does with the same statements), and drives
// the build on the embedded database. It then runs the main
// operations again with PostgreSQL behind a delaying proxy (bench/proxy.ts), renames projects
// beside a Redmine when one is given (bench/redmine.ts), profiles the server
// (bench/profile.ts), times each request's parts by the server's own clock
// (bench/timings.ts), measures webhooks (bench/webhooks.ts), and writes bench/RESULTS.md,
// the previous run's figures kept below.
//
// Options (environment):
//   DATABASE_URL            PostgreSQL server to use; the bench (re)creates the database
//                           projects_bench on it and leaves it there afterwards (pgbench
//                           works in a copy, projects_bench_replay, dropped at the end)
//                           (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_DURATION          seconds per measured run (default 8)
//   BENCH_SHORT_DURATION    seconds per small-vs-large run (default 4)
//   BENCH_WARMUP            seconds of unrecorded load on each operation right before its runs (default 5)
//   BENCH_BREAK_IN          seconds of unrecorded load on each operation, at the highest
//                           connection count, once on each server as it starts (default 3)
//   BENCH_POOL_SIZE         the server's DB_POOL_SIZE (default 4, see DEFAULT_POOL_SIZE)
//   BENCH_DELAYED_POOL_SIZE its DB_POOL_SIZE behind the simulated network delay (default 8)
//   BENCH_CONNECTIONS       comma-separated connection counts (default 50,10)
//   BENCH_PROJECTS          normal projects on PostgreSQL (default 1000)
//   BENCH_EMBEDDED_PROJECTS normal projects on the embedded database (default 1000)
//   BENCH_PGBENCH           pgbench binary (default pgbench)
//   BENCH_DELAY_MS          the simulated network delay each way between the server and
//                           PostgreSQL for the delayed runs (default 1; bench/proxy.ts)
//   BENCH_REDMINE_*         the Redmine to rename projects on beside this server (bench/redmine.ts)
//   BENCH_KEEP_BODIES       set (to anything) to let autocannon decode every body it reads
//                           into a string, as it does by default (bench/load.ts)
// Flags (npm run bench -- <flags>): FLAGS in bench/options.ts.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CompiledQuery } from 'kysely'
import { loadConfig } from '../src/config.js'
import { createDb, dbOptions, type Db } from '../src/db/index.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { captureStatements, type Capture } from './capture.js'
import { idleCpu, KEEPS_BODIES, load, quiet, quietMachine, PRODUCTION_ENV, PRODUCTION_NODE_FLAGS, startServer, type IdleCpu, type LoadResult, type Server } from './load.js'
import { ACTIVITIES, DELAYED_OPERATIONS, OPERATIONS, LABELS, PER_CONNECTION, TARGET_SETS, UNKEPT_OPERATIONS, type OperationName, type Target, type TargetSet } from './operations.js'
import { pgbenchScript, runPgbench, statementLabel, verifyScript, writeBenchTags, writeScript, type PgbenchOptions, type PgbenchResult, type Protocol, type Script } from './pgbench.js'
import { floorPlan, startFloor } from './floor.js'
import { connected, statementStatsMissing } from './postgres.js'
import { spawnProxy } from './proxy.js'
import { machine, pgbenchKey, previousResults, render, type Delayed, type Figures, type SizeRun, type StatementStats, type Unkept } from './report.js'
import { profileRuns, type ProfiledRun, type Window } from './profile.js'
import { readTimings, TIMINGS_FILE_VARIABLE, TIMINGS_PRELOAD } from './timings.js'
import { DEFAULT_SIZE, seedDataset, writeBenchTargets, writeBenchVersions, type Dataset, type DatasetSize } from './seed.js'
import { checkRedmine, redmineOptions, redmineProcesses, redmineProjectIds, redmineRename, redmineStatements, type RedmineFigures, type RedmineRun } from './redmine.js'
import { webhookBench, webhookBenchOptions, type WebhookFigures } from './webhooks.js'
import { FLAGS, positive } from './options.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url))
const DATABASE = 'projects_bench'
// pgbench replays the captured statements in a copy of the seeded database, made
// before any run: pg_stat_statements then counts the server's statements alone
// (it keeps them by database), and the replay's writes never reach the server's data.
const REPLAY_DATABASE = `${DATABASE}_replay`

// Two cores run the single-threaded server, PostgreSQL and the load generator. A
// request holds a connection only while its statements travel and run, so a couple
// per core keep PostgreSQL busy through the round trips and WAL flushes; more only
// add backends that take turns on the two cores, preempting one another in the
// middle of statements. Measured on an Intel Xeon of 2 cores, 8 s runs taking turns
// (2026-11-26): at 10 connections 4 or 3 connections gave the rename 1.1-1.7 times
// 8's throughput and a p99 of 31-37 ms against 40-70, projects/get a p99 of 25-28 ms
// against 27-38, and the conditional rename, notifications/list and the description
// with mentions as much or more (mentions at 50 connections: p99 303-312 ms against
// 327-598); PostgreSQL's CPU per request fell 10-25 %. 3 was noisier than 4 on a
// page of projects. An earlier machine found 2 too few and 4-10 alike.
const DEFAULT_POOL_SIZE = 4
const POOL_SIZE_WHY = 'about 2 per core: enough to overlap the round trips and WAL flushes, few enough that backends do not take turns on the 2 cores'
// Behind the simulated network delay a statement's connection waits a round trip
// (about 3 ms through the proxy) for every 1-2 ms of PostgreSQL's work, so keeping
// the database busy takes more connections, as it would across a real network.
const DEFAULT_DELAYED_POOL_SIZE = 8

const flags = new Set(process.argv.slice(2))
for (const flag of flags) {
  if (!Object.hasOwn(FLAGS, flag)) {
    throw new Error(`unknown flag ${flag}; the flags are ${Object.keys(FLAGS).join(' ')} (bench/options.ts)`)
  }
}
const options = {
  url: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  duration: Math.round(positive('BENCH_DURATION', 8)),
  shortDuration: Math.round(positive('BENCH_SHORT_DURATION', 4)),
  warmup: Math.round(positive('BENCH_WARMUP', 5)),
  breakIn: Math.round(positive('BENCH_BREAK_IN', 3)),
  poolSize: Math.round(positive('BENCH_POOL_SIZE', DEFAULT_POOL_SIZE)),
  delayedPoolSize: Math.round(positive('BENCH_DELAYED_POOL_SIZE', DEFAULT_DELAYED_POOL_SIZE)),
  connections: (process.env.BENCH_CONNECTIONS || '50,10').split(',').map((c) => Math.round(Number(c))).filter((c) => c > 0),
  projects: Math.round(positive('BENCH_PROJECTS', DEFAULT_SIZE.projects)),
  embeddedProjects: Math.round(positive('BENCH_EMBEDDED_PROJECTS', DEFAULT_SIZE.projects)),
  pgbench: process.env.BENCH_PGBENCH || 'pgbench',
  delayMs: positive('BENCH_DELAY_MS', 1),
  delay: !flags.has('--no-delay'),
  unkept: !flags.has('--no-unkept'),
  profile: !flags.has('--no-profile'),
  timings: !flags.has('--no-timings'),
  webhooks: !flags.has('--no-webhooks'),
  embedded: !flags.has('--no-embedded'),
  build: !flags.has('--no-build'),
  keep: flags.has('--keep') || flags.has('--cpu-prof'),
  drop: flags.has('--drop'),
  cpuProf: flags.has('--cpu-prof')
}
if (options.connections.length === 0) throw new Error('BENCH_CONNECTIONS names no connection count')
const SIZE_CONNECTIONS = Math.min(...options.connections)

const started = performance.now()
function step (message: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(0).padStart(4)
  process.stderr.write(`[${seconds} s] ${message}\n`)
}

function describe (r: LoadResult): string {
  return `${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, max RSS ${r.maxRssMb.toFixed(0)} MB` +
    (r.serverCpuMs === null ? '' : `, CPU per request: server ${r.serverCpuMs.toFixed(2)} ms` + (r.backendCpuMs === null ? '' : `, PostgreSQL ${r.backendCpuMs.toFixed(2)} ms`) + (r.loadCpuMs === null ? '' : `, load generator ${r.loadCpuMs.toFixed(2)} ms`)) +
    (r.othersCpuPercent === null ? '' : `, other processes ${r.othersCpuPercent.toFixed(0)}% of the CPU`) +
    (r.non2xx > 0 || r.errors > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors ${JSON.stringify(r.statusCodes)} ${r.samples.join(' | ')}` : '')
}

function withDatabase (url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/** The bench database anew (and no replay copy); PostgreSQL's version. */
async function recreateDatabase (url: string): Promise<string> {
  return await connected(url, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${REPLAY_DATABASE} WITH (FORCE)`)
    await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${DATABASE}`)
    const { rows } = await client.query<{ version: string }>('SELECT version()')
    return rows[0]!.version.replace(/ on .*$/, '')
  })
}

async function dropDatabase (url: string, database: string): Promise<void> {
  await connected(url, async (client) => { await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`) })
}

/**
 * VACUUM of a bench database, as autovacuum would keep it between runs: without it
 * every rename and description change leaves dead rows (and dead TOAST chunks of the
 * old description) that later runs read past, and PostgreSQL may run with autovacuum
 * off (this machine's does). Called before each operation's runs, before the floor's
 * (pgbench's runs leave dead rows in its copy) and before each later part.
 */
async function vacuum (url: string): Promise<void> {
  await connected(url, async (client) => { await client.query('VACUUM') })
}

/** Why PostgreSQL refused the bench's CHECKPOINT, once it has (the bench then goes on without). */
let checkpointRefused: string | null = null

/**
 * A CHECKPOINT of the PostgreSQL server, right before each series of runs (the
 * server's, pgbench's and the floor's of an operation), so that each series begins
 * in the same state of the write-ahead log. The first change of a page after a
 * checkpoint writes the whole page to the log; without this, a checkpoint that the
 * seeding's gigabyte of log or an earlier series' changes set off falls in whichever
 * series comes next, and only that side of a ratio pays for it (seen here: three
 * rename runs right after a CHECKPOINT wrote 2,818 whole pages to the log where three
 * without one wrote 33, and ran at 1,081-1,155 req/s against 1,187-1,285).
 * Needs a superuser or pg_checkpoint; refused, the bench says so once and goes on.
 */
async function checkpoint (url: string): Promise<void> {
  if (checkpointRefused !== null) return
  try {
    await connected(url, async (client) => { await client.query('CHECKPOINT') })
  } catch (error) {
    checkpointRefused = (error as Error).message
    step(`  CHECKPOINT refused (${checkpointRefused}): series may begin in different states of the write-ahead log`)
  }
}

/** The replay's copy of the seeded database (nothing may be connected to it meanwhile). */
async function copyDatabase (url: string): Promise<void> {
  await dropDatabase(url, REPLAY_DATABASE)
  await connected(url, async (client) => { await client.query(`CREATE DATABASE ${REPLAY_DATABASE} TEMPLATE ${DATABASE}`) })
}

/** The round trip of `SELECT 1` on one connection, median of 200, in ms. */
async function roundTripMs (url: string): Promise<number> {
  return await connected(url, async (client) => {
    const times: number[] = []
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now()
      await client.query('SELECT 1')
      times.push(performance.now() - t0)
    }
    return times.sort((a, b) => a - b)[100]!
  })
}

/**
 * pg_stat_statements in the bench database, when the server loads it
 * (shared_preload_libraries; the bench never changes that setting): reset before the
 * PostgreSQL runs, read after. Otherwise the reason it is not there.
 */
async function statementStats (url: string, action: 'reset' | 'read'): Promise<StatementStats> {
  return await connected(url, async (client): Promise<StatementStats> => {
    try {
      const missing = await statementStatsMissing(client)
      if (missing !== null) return { available: false, reason: missing }
      if (action === 'reset') {
        await client.query('SELECT pg_stat_statements_reset()')
        return { available: true, top: [], operationCalls: 0 }
      }
      const { rows: [own] } = await client.query<{ calls: string | null }>(
        `SELECT sum(calls) AS calls FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE 'with "token" as %'`)
      const { rows } = await client.query<{ calls: string, total: number, mean: number, rows: string, query: string }>(
        `SELECT calls, total_exec_time AS total, mean_exec_time AS mean, rows, query FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         ORDER BY total_exec_time DESC LIMIT 8`)
      return { available: true, top: rows.map((r) => ({ calls: Number(r.calls), totalMs: r.total, meanMs: r.mean, rows: Number(r.rows), query: r.query })), operationCalls: Number(own!.calls ?? 0) }
    } catch (error) {
      return { available: false, reason: `pg_stat_statements could not be read: ${(error as Error).message}` }
    }
  })
}

/** bench_tags anew, for a conditional pgbench run: the runs before changed the projects. */
async function refreshTags (url: string, targets: readonly Target[]): Promise<void> {
  const db = await createDb(dbOptions(loadConfig({ DATABASE_URL: url, DB_POOL_SIZE: '1', DB_STATEMENT_TIMEOUT_MS: '10000' })))
  try {
    await writeBenchTags(db, 'normal', targets)
  } finally {
    await db.destroy()
  }
}

/** bench_targets' versions anew, for a read's pgbench run: the runs before changed the projects. */
async function refreshVersions (url: string): Promise<void> {
  const db = await createDb(dbOptions(loadConfig({ DATABASE_URL: url, DB_POOL_SIZE: '1', DB_STATEMENT_TIMEOUT_MS: '10000' })))
  try {
    await writeBenchVersions(db)
  } finally {
    await db.destroy()
  }
}

async function count (db: Db, table: string): Promise<number> {
  const result = await db.executeQuery<{ n: string }>(CompiledQuery.raw(`SELECT count(*) AS n FROM ${table}`))
  return Number(result.rows[0]!.n)
}

/**
 * Unrecorded load on each of `operations` (the warm-up before their runs): what it
 * was asked is counted too. The answers the server keeps (src/plugins/answers.ts,
 * 16 MB by default) hold a few hundred of the bench's projects: the operations before this one
 * left theirs, and a run right after a short warm-up paid for writing its own again.
 * On a 2-core machine, renames at 50 connections right after 4 s of projects/get
 * took 1.01-1.07 ms of the server's CPU each after 1 s of warm-up, 0.73-0.92 ms
 * after 5 s (turns of each, one server). Five seconds at 10 connections ask for
 * each of 1,000 targets about three times.
 */
async function warm (server: Server, dataset: Dataset, database: string | null, operations: readonly OperationName[]): Promise<LoadResult[]> {
  return await unrecorded(server, dataset, database, operations, 10, options.warmup)
}

/** Each of `operations` in turn, for `seconds` at `connections`, its figures not reported. */
async function unrecorded (server: Server, dataset: Dataset, database: string | null, operations: readonly OperationName[], connections: number, seconds: number): Promise<LoadResult[]> {
  const all: LoadResult[] = []
  for (const operation of operations) {
    all.push(await load({ url: server.url, pid: server.pid, operation, targets: dataset[TARGET_SETS[operation]], connections, seconds, database }))
  }
  return all
}

/**
 * A server just started runs code V8 has not compiled yet: each operation in turn
 * at the highest connection count, unrecorded, once, before any of its runs. On a
 * 2-core machine a fresh server's renames climbed from 317 to 673 a second over
 * 12 s of load at 50 connections, its compiler threads busy for the first 6 s: a
 * warm-up of one operation at 10 connections for 2 s left most of that climb in
 * the first operation's measured runs, which then showed the compiler's cost, not
 * the server's. A server in service has long passed it.
 */
async function breakIn (server: Server, dataset: Dataset, where: string, database: string | null, operations: readonly OperationName[] = OPERATIONS): Promise<LoadResult[]> {
  const connections = Math.max(...options.connections)
  step(`${where}: breaking in, ${operations.length === 1 ? LABELS[operations[0]!] : 'each operation'} at ${connections} connections for ${options.breakIn} s`)
  return await unrecorded(server, dataset, database, operations, connections, options.breakIn)
}

/** The measured runs of one operation, at each connection count. */
async function measure (server: Server, dataset: Dataset, where: string, database: string | null, operation: OperationName): Promise<LoadResult[]> {
  const results: LoadResult[] = []
  for (const connections of options.connections) {
    step(`${where}: ${LABELS[operation]} at ${connections} connections for ${options.duration} s`)
    const result = await load({ url: server.url, pid: server.pid, operation, targets: dataset[TARGET_SETS[operation]], connections, seconds: options.duration, database })
    step(`  ${describe(result)}`)
    results.push(result)
  }
  return results
}

/**
 * Each operation once more on a server of a pass of its own (the profile, the
 * timings): its warm-up, then one run, with autocannon's span on the monotonic clock
 * (without the waits and the conditional rename's reads of the current tags before it).
 */
async function eachOperationOnce (server: Server, dataset: Dataset, what: string, connections: number, seconds: number): Promise<Array<Window & { operation: OperationName, load: LoadResult }>> {
  const runs: Array<Window & { operation: OperationName, load: LoadResult }> = []
  await breakIn(server, dataset, what, DATABASE)
  for (const operation of OPERATIONS) {
    await warm(server, dataset, DATABASE, [operation])
    step(`${what}: ${LABELS[operation]} at ${connections} connections for ${seconds} s`)
    const result = await load({ url: server.url, pid: server.pid, operation, targets: dataset[TARGET_SETS[operation]], connections, seconds, database: DATABASE })
    runs.push({ label: LABELS[operation], startUs: result.startedUs, endUs: result.endedUs, operation, load: result })
  }
  return runs
}

/** The small-vs-large runs. */
async function sizeRuns (server: Server, dataset: Dataset, where: string, database: string | null): Promise<SizeRun[]> {
  const { normal, large } = dataset
  const sizes: SizeRun[] = []
  if (large.length === 0) return sizes
  // Five normal projects spread over the companies, to match the large set's contention.
  const few = Array.from({ length: large.length }, (_, i) => normal[(Math.floor((i * normal.length) / large.length) + i) % normal.length]!)
  const runs: Array<[OperationName, SizeRun['set'], Target[]]> = [
    ['get', 'small', normal], ['get', 'large', large],
    ['update_name', 'small', normal], ['update_name', 'small-5', few], ['update_name', 'large', large]
  ]
  for (const [operation, set, targets] of runs) {
    step(`${where}: ${LABELS[operation]} on ${targets.length} ${set === 'large' ? 'large' : 'normal'} projects, ${SIZE_CONNECTIONS} connections, ${options.shortDuration} s`)
    const result = await load({ url: server.url, pid: server.pid, operation, targets, connections: SIZE_CONNECTIONS, seconds: options.shortDuration, database })
    step(`  ${describe(result)}`)
    sizes.push({ operation, set, projects: targets.length, result })
  }
  return sizes
}

/** For each operation, its warm-up, then its measured runs at each connection count. */
async function drive (server: Server, dataset: Dataset, where: string, database: string | null, operations: readonly OperationName[]): Promise<{ results: LoadResult[] }> {
  const results: LoadResult[] = []
  for (const operation of operations) {
    await warm(server, dataset, database, [operation])
    results.push(...await measure(server, dataset, where, database, operation))
  }
  return { results }
}

/** The production server's settings for a measured run: quiet logs, no rate limit, the pool under test (on a free loopback port). */
function serverEnv (poolSize: number): Record<string, string> {
  return { LOG_LEVEL: 'warn', NODE_ENV: 'production', RATE_LIMIT_MAX: '0', DB_POOL_SIZE: String(poolSize) }
}

async function main (): Promise<void> {
  if (options.build) {
    step('npm run build')
    const built = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' })
    if (built.status !== 0) throw new Error('npm run build failed')
  }
  const entry = path.join(ROOT, 'dist/src/server.js')
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build`)
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'projects-bench-'))
  const servers: Server[] = []
  const nodeArgs = (name: string) => options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.join(tmp, `profile-${name}`)}`] : []
  const benchUrl = withDatabase(options.url, DATABASE)
  const size: DatasetSize = { ...DEFAULT_SIZE, projects: options.projects }
  try {
    // PostgreSQL: seed, capture, verify the scripts, then HTTP and pgbench.
    step(`recreating ${DATABASE}`)
    const postgresVersion = await recreateDatabase(options.url)
    // Seeding runs statements longer than a request's.
    const db = await createDb(dbOptions(loadConfig({ DATABASE_URL: benchUrl, DB_POOL_SIZE: '8', DB_STATEMENT_TIMEOUT_MS: '10000' })))
    let dataset: Dataset
    let captures: Record<OperationName, Capture>
    const scripts = {} as Record<OperationName, Script>
    const files = {} as Record<OperationName, string>
    const replayUrl = withDatabase(options.url, REPLAY_DATABASE)
    const pgbenchOptions = (clients: number, protocol: Protocol): PgbenchOptions => ({ binary: options.pgbench, url: replayUrl, clients, threads: 2, protocol })
    const pgbenchAvailable = spawnSync(options.pgbench, ['--version']).status === 0
    let first: (operation: OperationName) => Target
    let captureWarmUp: Partial<Record<OperationName, readonly Target[]>>
    try {
      await migrateToLatest(db)
      step(`seeding ${size.projects} + ${size.largeProjects} large + ${size.notifiedProjects} notified projects, ${size.readers} readers`)
      dataset = await seedDataset(db, size, { tokenConcurrency: 8 })
      await writeBenchTargets(db, dataset)
      step(`  seeded in ${dataset.seconds.toFixed(1)} s: ${JSON.stringify(dataset.rows)}`)
      const sets: Record<TargetSet, Target[]> = dataset
      first = (operation) => sets[TARGET_SETS[operation]][0]!

      // Normal projects go round the companies: their first champions are one of each,
      // whose first pages the server holds under load.
      captureWarmUp = { list_projects: sets[TARGET_SETS.list_projects].slice(0, size.companies) }
      step('capturing the SQL of one request of each operation')
      captures = await captureStatements(benchUrl, Object.fromEntries(OPERATIONS.map((op) => [op, first(op)])) as Record<OperationName, Target>, captureWarmUp)
      for (const operation of OPERATIONS) {
        const statements = captures[operation].statements
        const targets = sets[TARGET_SETS[operation]].length
        scripts[operation] = pgbenchScript(operation, captures[operation], first(operation), targets)
        step(`  ${LABELS[operation]}: ${statements.length} statement(s), ${scripts[operation].protocol === 'prepared' ? 'named (pgbench -M prepared)' : 'unnamed (pgbench -M extended)'}, ` +
          `${captures[operation].notified} notification(s) written: ` + statements.map((s) => statementLabel(s.sql)).join(' | '))
        for (const warning of scripts[operation].warnings) step(`  warning: ${warning}`)
        files[operation] = await writeScript(tmp, operation, scripts[operation])
      }
    } finally {
      await db.destroy()
    }

    if (!pgbenchAvailable) {
      step(`${options.pgbench} is not available: no pgbench columns`)
    } else {
      // The capture renamed projects: the copy starts from the data the server's runs start from.
      step(`copying ${DATABASE} to ${REPLAY_DATABASE} for pgbench`)
      await copyDatabase(options.url)
      const replayDb = await createDb(dbOptions(loadConfig({ DATABASE_URL: replayUrl, DB_POOL_SIZE: '1', DB_STATEMENT_TIMEOUT_MS: '10000' })))
      try {
        const sets: Record<TargetSet, Target[]> = dataset
        await writeBenchTags(replayDb, 'normal', dataset.normal)
        await writeBenchVersions(replayDb)
        for (const operation of OPERATIONS) {
          const check = pgbenchScript(operation, captures[operation], first(operation), sets[TARGET_SETS[operation]].length, true)
          const file = await writeScript(tmp, `${operation}-verify`, check)
          const before = { activities: await count(replayDb, 'activities'), notifications: await count(replayDb, 'notifications') }
          await verifyScript(pgbenchOptions(1, check.protocol), file)
          const written = (await count(replayDb, 'activities')) - before.activities
          const notified = (await count(replayDb, 'notifications')) - before.notifications
          // Every target of a set is seeded alike, so a random one notifies as many as the captured one.
          if (written !== ACTIVITIES[operation] || notified !== captures[operation].notified) {
            throw new Error(`the ${operation} script wrote ${written} activities and ${notified} notifications, not ` +
              `${ACTIVITIES[operation]} and ${captures[operation].notified}: it does not replay the server's work`)
          }
          step(`  ${operation}: pgbench script verified (-t 1, every one-row statement returned its row, ${written} activity and ${notified} notification(s) written)`)
        }
      } finally {
        await replayDb.destroy()
      }
    }

    // Embedded: the same dataset in a PGlite directory, for the same HTTP runs.
    let embeddedData: Dataset | null = null
    let embeddedSettings = null
    let pgliteVersion: string | null = null
    const dataDir = path.join(tmp, 'pglite')
    if (options.embedded) {
      const embeddedSize: DatasetSize = { ...DEFAULT_SIZE, projects: options.embeddedProjects }
      step(`seeding the embedded database (${embeddedSize.projects} + ${embeddedSize.largeProjects} large + ${embeddedSize.notifiedProjects} notified projects, ${embeddedSize.readers} readers)`)
      const edb = await createDb(dbOptions(loadConfig({ DATA_DIR: dataDir, DB_STATEMENT_TIMEOUT_MS: '10000' })))
      try {
        await migrateToLatest(edb)
        embeddedData = await seedDataset(edb, embeddedSize, { tokenConcurrency: 1 })
        const version = await edb.executeQuery<{ server_version: string }>(CompiledQuery.raw('SHOW server_version'))
        pgliteVersion = `(PostgreSQL ${version.rows[0]!.server_version})`
      } finally {
        // The server locks the directory: this process lets go of it first.
        await edb.destroy()
      }
      step(`  seeded in ${embeddedData.seconds.toFixed(1)} s`)
      try {
        const pkg = JSON.parse(readFileSync(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string }
        pgliteVersion = `${pkg.version} ${pgliteVersion}`
      } catch {}
      embeddedSettings = { size: embeddedSize, seedSeconds: embeddedData.seconds }
    }

    const statsBefore = await statementStats(benchUrl, 'reset')
    /**
     * A server of the build with the bench's settings (the pool of `poolSize`) and
     * `env`, its log `server-<name>.log`, stopped at the end whatever happens.
     */
    const start = async (name: string, env: Record<string, string>, settings: { poolSize?: number, nodeArgs?: string[] } = {}): Promise<Server> => {
      const server = await startServer({
        entry,
        logFile: path.join(tmp, `server-${name}.log`),
        nodeArgs: settings.nodeArgs ?? nodeArgs(name),
        env: { ...serverEnv(settings.poolSize ?? options.poolSize), ...env }
      })
      servers.push(server)
      step(`  ready; RSS ${server.idleRssMb.toFixed(0)} MB before any load`)
      return server
    }
    step(`starting the server on PostgreSQL (DB_POOL_SIZE ${options.poolSize}, node ${PRODUCTION_NODE_FLAGS.join(' ')})`)
    const pgServer = await start('postgres', { DATABASE_URL: benchUrl })
    let emServer: Server | null = null
    if (embeddedData !== null) {
      step('starting the server on the embedded database')
      emServer = await start('embedded', { DATA_DIR: dataDir })
    }
    // Its requests count among those the statements counted below were sent for.
    const brokenIn = await breakIn(pgServer, dataset, 'PostgreSQL', DATABASE)
    if (emServer !== null) await breakIn(emServer, embeddedData!, 'embedded', null)

    // pgbench at each connection count, and at the server's own concurrency: the
    // server never runs more than DB_POOL_SIZE statements at once, whatever the
    // connections, where pgbench at 50 clients runs 50 backends on the machine's cores.
    const pgbench = new Map<string, PgbenchResult>()
    const pgbenchClients = options.connections.includes(options.poolSize) ? options.connections : [...options.connections, options.poolSize]
    // A read's statement carries what the server holds: projects/list's, the versions
    // of the projects whose shared parts the database need not send. The runs before
    // it change the copy's projects (and which are on each first page), so a read is
    // captured again from the copy right before pgbench replays it: its statement then
    // carries the versions the copy has, as the server's carry the ones it holds under
    // load. Captured once at the start, pgbench built every page whole.
    const recapture = async (operation: OperationName) => {
      if (ACTIVITIES[operation] !== 0) return
      await refreshVersions(replayUrl)
      const fresh = await captureStatements(replayUrl, { [operation]: first(operation) } as Record<OperationName, Target>, captureWarmUp, [operation])
      captures[operation] = fresh[operation]
      scripts[operation] = pgbenchScript(operation, captures[operation], first(operation), (dataset as Record<TargetSet, Target[]>)[TARGET_SETS[operation]].length)
      files[operation] = await writeScript(tmp, operation, scripts[operation])
    }
    const replay = async (operation: OperationName) => {
      try {
        await recapture(operation)
      } catch (error) {
        step(`pgbench: ${LABELS[operation]} not replayed: ${(error as Error).message}`)
        return
      }
      await checkpoint(replayUrl)
      for (const clients of pgbenchClients) {
        step(`pgbench: ${LABELS[operation]} at ${clients} clients${clients === options.poolSize ? ' (DB_POOL_SIZE)' : ''} for ${options.duration} s`)
        try {
          if (PER_CONNECTION.has(operation)) await refreshTags(replayUrl, dataset.normal)
          const result = await runPgbench(pgbenchOptions(clients, scripts[operation].protocol), files[operation], options.duration)
          pgbench.set(pgbenchKey(operation, clients), result)
          step(`  ${result.tps.toFixed(0)} tps, latency ${result.latencyMs} ms${result.failed > 0 ? `, ${result.failed} failed` : ''}`)
        } catch (error) {
          step(`  ${(error as Error).message}`)
        }
      }
    }

    // The floor (bench/floor.ts): the least a Node.js server does with the same
    // statements, in pgbench's database right after pgbench, at each connection count.
    const floor: LoadResult[] = []
    const floorRuns = async (operation: OperationName) => {
      let server: Server
      try {
        const plan = floorPlan(operation, captures[operation], first(operation), (dataset as Record<TargetSet, Target[]>)[TARGET_SETS[operation]])
        // A conditional rename's floor starts from each project's tag as it is now.
        if (PER_CONNECTION.has(operation)) await refreshTags(replayUrl, dataset.normal)
        // pgbench's runs left dead rows in the copy: the floor begins as the server did.
        await vacuum(replayUrl)
        await checkpoint(replayUrl)
        server = await startFloor(plan, { dir: tmp, url: replayUrl, poolSize: options.poolSize })
      } catch (error) {
        step(`floor: ${LABELS[operation]} not run: ${(error as Error).message.split('\n')[0]}`)
        return
      }
      try {
        await breakIn(server, dataset, 'floor', REPLAY_DATABASE, [operation])
        await warm(server, dataset, REPLAY_DATABASE, [operation])
        floor.push(...await measure(server, dataset, 'floor', REPLAY_DATABASE, operation))
      } finally {
        await server.stop()
      }
    }

    // Each operation in turn on the server on PostgreSQL, then pgbench's replay of
    // its statements and the floor, then the server on the embedded database (each one idle while
    // another runs): figures set side by side come from the same minutes, so a slow
    // spell of a shared machine weighs on both sides of each ratio.
    // Each server takes each operation for a warm-up right before its runs, which
    // then follow its own load rather than other operations' and the minute or
    // more the server sat idle while pgbench and the other server ran.
    const postgres = { results: [] as LoadResult[], sizes: [] as SizeRun[], all: [...brokenIn] }
    const embedded = { results: [] as LoadResult[], sizes: [] as SizeRun[] }
    for (const operation of OPERATIONS) {
      await vacuum(benchUrl)
      if (pgbenchAvailable) await vacuum(replayUrl)
      await checkpoint(benchUrl)
      postgres.all.push(...await warm(pgServer, dataset, DATABASE, [operation]))
      const results = await measure(pgServer, dataset, 'PostgreSQL', DATABASE, operation)
      postgres.results.push(...results)
      postgres.all.push(...results)
      if (pgbenchAvailable) await replay(operation)
      if (pgbenchAvailable) await floorRuns(operation)
      if (emServer !== null) {
        await warm(emServer, embeddedData!, null, [operation])
        embedded.results.push(...await measure(emServer, embeddedData!, 'embedded', null, operation))
      }
    }
    postgres.sizes = await sizeRuns(pgServer, dataset, 'PostgreSQL', DATABASE)
    postgres.all.push(...postgres.sizes.map((s) => s.result))
    if (emServer !== null) embedded.sizes = await sizeRuns(emServer, embeddedData!, 'embedded', null)
    const pgIdleCpu = await idleCpu(pgServer.pid)
    step(`  PostgreSQL: idle after the runs: ${pgIdleCpu.median.toFixed(1)} ms of CPU a second (median; busiest second ${pgIdleCpu.max.toFixed(1)} ms)`)
    await pgServer.stop()
    let embeddedIdleCpu: IdleCpu | null = null
    if (emServer !== null) {
      embeddedIdleCpu = await idleCpu(emServer.pid)
      step(`  embedded: idle after the runs: ${embeddedIdleCpu.median.toFixed(1)} ms of CPU a second (median; busiest second ${embeddedIdleCpu.max.toFixed(1)} ms)`)
      await emServer.stop()
    }
    const embeddedIdleRss = emServer?.idleRssMb ?? null
    const statements = statsBefore.available ? await statementStats(benchUrl, 'read') : statsBefore
    if (statements.available) {
      const sum = (pick: (r: LoadResult) => number) => postgres.all.reduce((total, r) => total + pick(r), 0)
      statements.requests = { counted: sum((r) => r.requests), tagReads: sum((r) => r.tagReads), cutOff: sum((r) => r.connections) }
    }
    step(statements.available ? `pg_stat_statements: ${statements.top.length} statements read` : statements.reason)

    // The same server with PostgreSQL behind a simulated network delay (bench/proxy.ts).
    let delayed: Delayed | null = null
    if (options.delay) {
      await vacuum(benchUrl)
      await checkpoint(benchUrl)
      const target = new URL(benchUrl)
      const proxy = await spawnProxy(options.delayMs, target.hostname, Number(target.port || 5432))
      try {
        const proxied = new URL(benchUrl)
        proxied.hostname = '127.0.0.1'
        proxied.port = String(proxy.port)
        const direct = await roundTripMs(benchUrl)
        const through = await roundTripMs(proxied.toString())
        step(`proxy: ${options.delayMs} ms each way; SELECT 1 round trip ${direct.toFixed(2)} ms direct, ${through.toFixed(2)} ms through the proxy`)
        const server = await start('delayed', { DATABASE_URL: proxied.toString() }, { poolSize: options.delayedPoolSize })
        await breakIn(server, dataset, 'delayed', DATABASE, DELAYED_OPERATIONS)
        const run = await drive(server, dataset, `PostgreSQL +${options.delayMs} ms each way`, DATABASE, DELAYED_OPERATIONS)
        await server.stop()
        delayed = { delayMs: options.delayMs, poolSize: options.delayedPoolSize, roundTripMs: { direct, proxied: through }, results: run.results }
      } finally {
        await proxy.stop()
      }
    }

    // The reads again on a server that keeps no answers (src/plugins/answers.ts).
    let unkept: Unkept | null = null
    if (options.unkept) {
      await vacuum(benchUrl)
      await checkpoint(benchUrl)
      const server = await start('unkept', { DATABASE_URL: benchUrl, ANSWER_CACHE_MB: '0' })
      await breakIn(server, dataset, 'unkept', DATABASE, UNKEPT_OPERATIONS)
      const run = await drive(server, dataset, 'PostgreSQL, ANSWER_CACHE_MB=0', DATABASE, UNKEPT_OPERATIONS)
      await server.stop()
      unkept = { results: run.results }
    }

    // The rename beside Redmine's (bench/redmine.ts), on a server of its own: the
    // statements counted above are the main runs' only.
    let redmine: RedmineFigures | string = 'no Redmine given (BENCH_REDMINE_URL and BENCH_REDMINE_KEY; bench/redmine/setup.sh installs one)'
    const redmineSettings = redmineOptions()
    if (redmineSettings) {
      try {
        const ids = await redmineProjectIds(redmineSettings)
        if (ids.length === 0) throw new Error('it has no project')
        await checkRedmine(redmineSettings, ids[0]!)
        const processes = redmineProcesses()
        step(`Redmine at ${redmineSettings.url}: ${ids.length} projects, ${processes.length} puma processes`)
        const server = await start('redmine', { DATABASE_URL: benchUrl })
        const targets = dataset.normal
        const redmineUrl = withDatabase(options.url, redmineSettings.database)
        // Before each run of either side: the other side quiet, both databases
        // vacuumed, as autovacuum would keep them (bench/redmine.ts), and a checkpoint. load() then waits
        // for a quiet machine; Redmine's runs wait here.
        const settle = async (others: number | readonly number[]) => {
          await quiet(others)
          await vacuum(benchUrl)
          await vacuum(redmineUrl).catch((error: Error) => { step(`  VACUUM of Redmine's database failed: ${error.message}`) })
          await checkpoint(benchUrl)
        }
        const redmineTurn = async () => {
          await settle(server.pid)
          const waited = await quietMachine()
          if (waited !== null) step(`  ${waited}`)
        }
        const pumas = processes.map((p) => p.pid)
        // One unrecorded turn a side at the highest connection count (bench/redmine.ts).
        const high = Math.max(...options.connections)
        step(`  warm-up turns at ${high} connections, ${options.duration} s a side`)
        await settle(pumas)
        await load({ url: server.url, pid: server.pid, operation: 'update_name', targets, connections: high, seconds: options.duration, database: DATABASE })
        await redmineTurn()
        await redmineRename(redmineSettings, ids, high, options.duration)
        const reset = await redmineStatements(benchUrl, redmineSettings, 'reset')
        const runs: RedmineFigures['runs'] = []
        for (const connections of options.connections) {
          const ours: LoadResult[] = []
          const theirs: RedmineRun[] = []
          for (let round = 1; round <= redmineSettings.rounds; round++) {
            await settle(pumas)
            const o = await load({ url: server.url, pid: server.pid, operation: 'update_name', targets, connections, seconds: options.duration, database: DATABASE })
            ours.push(o)
            step(`  beside Redmine, turn ${round} at ${connections} connections: this server ${o.rps.toFixed(0)} req/s, p99 ${o.p99} ms`)
            await redmineTurn()
            const r = await redmineRename(redmineSettings, ids, connections, options.duration)
            theirs.push(r)
            step(`  Redmine ${r.rps.toFixed(1)} req/s, p99 ${r.p99} ms${r.non2xx + r.errors + r.timeouts > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts` : ''}`)
          }
          runs.push({ connections, ours, redmine: theirs })
        }
        await server.stop()
        await quiet(pumas)
        const answered = runs.reduce((sum, run) => sum + run.redmine.reduce((n, r) => n + r.requests, 0), 0)
        const statements = reset ?? await redmineStatements(benchUrl, redmineSettings, 'read', answered)
        redmine = { url: redmineSettings.url, projects: ids.length, processes: processes.map((p) => p.command), rounds: redmineSettings.rounds, seconds: options.duration, runs, statements }
      } catch (error) {
        redmine = `Redmine at ${redmineSettings.url} failed: ${(error as Error).message}`
        step(redmine)
      }
    }

    // Where the server's CPU goes: each operation again on a server run with
    // --cpu-prof, its profile cut into the runs (bench/profile.ts).
    let profiled: ProfiledRun[] | null = null
    if (options.profile) {
      await vacuum(benchUrl)
      await checkpoint(benchUrl)
      const dir = path.join(tmp, 'profile-runs')
      const connections = Math.max(...options.connections)
      const server = await start('profile', { DATABASE_URL: benchUrl }, { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] })
      const windows = (await eachOperationOnce(server, dataset, 'profiled', connections, options.shortDuration))
        .map((run) => ({ ...run, label: `${run.label} (${run.load.rps.toFixed(0)} req/s)` }))
      // The profile is written as the server exits.
      await server.stop()
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
      profiled = file === undefined ? null : profileRuns(path.join(dir, file), windows)
      step(profiled === null ? '  the server wrote no profile' : `  profile read: ${profiled.length} runs`)
    }

    // The server's own clock on each request (bench/timings.ts): each operation again
    // at the lowest connection count, on a server of its own that records how long each
    // request took in it, waited for a connection, and waited on its statement.
    let timed: Figures['timed'] = null
    if (options.timings) {
      await vacuum(benchUrl)
      await checkpoint(benchUrl)
      const file = path.join(tmp, 'timings.json')
      const connections = SIZE_CONNECTIONS
      const server = await start('timings', { DATABASE_URL: benchUrl, [TIMINGS_FILE_VARIABLE]: file }, { nodeArgs: ['--import', TIMINGS_PRELOAD] })
      const runs = await eachOperationOnce(server, dataset, 'timed', connections, options.duration)
      // The timings are written as the server exits.
      await server.stop()
      const read = existsSync(file) ? readTimings(file, runs) : null
      timed = read === null ? null : runs.map((run, i) => ({ operation: run.operation, connections, load: run.load, timed: read[i]! }))
      step(timed === null ? '  the server wrote no timings' : `  timings read: ${timed.length} runs`)
    }

    // The same scripts in the other protocol: how much of PostgreSQL's work is
    // parsing and planning each statement anew (extended) rather than once per
    // connection (prepared).
    const otherProtocol = new Map<OperationName, PgbenchResult>()
    if (pgbenchAvailable) {
      for (const operation of OPERATIONS) {
        const protocol: Protocol = scripts[operation].protocol === 'prepared' ? 'extended' : 'prepared'
        step(`pgbench -M ${protocol}: ${LABELS[operation]} at ${SIZE_CONNECTIONS} clients for ${options.duration} s`)
        try {
          await recapture(operation)
          if (PER_CONNECTION.has(operation)) await refreshTags(replayUrl, dataset.normal)
          const result = await runPgbench(pgbenchOptions(SIZE_CONNECTIONS, protocol), files[operation], options.duration)
          otherProtocol.set(operation, result)
          step(`  ${result.tps.toFixed(0)} tps, latency ${result.latencyMs} ms${result.failed > 0 ? `, ${result.failed} failed` : ''}`)
        } catch (error) {
          step(`  ${(error as Error).message}`)
        }
      }
    }

    let webhooks: WebhookFigures | null = null
    if (options.webhooks) {
      step('webhooks (bench/webhooks.ts)')
      webhooks = (await webhookBench({ ...webhookBenchOptions(), url: options.url, duration: options.duration, build: false })).figures
    }

    const figures: Figures = {
      postgres: postgres.results,
      delayed,
      unkept,
      profiled,
      timed,
      statements,
      webhooks,
      redmine,
      embedded: embedded.results,
      floor,
      pgbench,
      otherProtocol,
      sizes: { postgres: postgres.sizes, embedded: embedded.sizes },
      captures,
      scripts
    }
    const { text, markdown } = render(figures, {
      date: new Date(),
      durationS: options.duration,
      shortDurationS: options.shortDuration,
      warmupS: options.warmup,
      breakInS: options.breakIn,
      poolSize: options.poolSize,
      poolSizeWhy: options.poolSize === DEFAULT_POOL_SIZE ? POOL_SIZE_WHY : 'set by BENCH_POOL_SIZE',
      connections: options.connections,
      size,
      rows: dataset.rows,
      seedSeconds: dataset.seconds,
      embedded: embeddedSettings,
      pgbench: pgbenchAvailable ? options.pgbench : null,
      totalSeconds: (performance.now() - started) / 1000,
      nodeFlags: PRODUCTION_NODE_FLAGS,
      nodeEnv: PRODUCTION_ENV,
      keepsBodies: KEEPS_BODIES,
      idleRssMb: { postgres: pgServer.idleRssMb, embedded: embeddedIdleRss },
      idleCpuMs: { postgres: pgIdleCpu, embedded: embeddedIdleCpu }
    }, machine(postgresVersion, pgliteVersion))
    process.stdout.write(text)
    // This run's figures first, the previous run's below them.
    const previous = existsSync(RESULTS) ? previousResults(await readFile(RESULTS, 'utf8')) : null
    await writeFile(RESULTS, markdown + (previous ? `\n${previous}` : ''))
    step(`wrote ${path.relative(ROOT, RESULTS)}`)
  } finally {
    for (const server of servers) await server.stop()
    // The replay's copy is of no use afterwards.
    await dropDatabase(options.url, REPLAY_DATABASE).catch((error: Error) => { step(`could not drop ${REPLAY_DATABASE}: ${error.message}`) })
    if (options.drop) {
      await dropDatabase(options.url, DATABASE)
      step(`dropped ${DATABASE}`)
    } else {
      step(`left the database ${DATABASE} in place (recreated on the next run)`)
    }
    if (options.keep) step(`kept ${tmp}`)
    else await rm(tmp, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exitCode = 1
})
