// npm run bench: builds, seeds a realistic dataset into PostgreSQL, captures the SQL
// the server sends for each operation, drives the production build with autocannon,
// replays the captured SQL with pgbench for PostgreSQL's own ceiling, does the same
// HTTP runs on the embedded database (PGlite), and writes bench/RESULTS.md.
//
// Options (environment):
//   DATABASE_URL            PostgreSQL server to use; the bench (re)creates the database
//                           projects_bench on it and leaves it there afterwards
//                           (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_DURATION          seconds per measured run (default 8)
//   BENCH_SHORT_DURATION    seconds per small-vs-large run (default 4)
//   BENCH_WARMUP            seconds of unrecorded load per operation after a server start (default 2)
//   BENCH_POOL_SIZE         the server's DB_POOL_SIZE (default 8, see DEFAULT_POOL_SIZE)
//   BENCH_CONNECTIONS       comma-separated connection counts (default 50,10)
//   BENCH_PROJECTS          normal projects on PostgreSQL (default 1000)
//   BENCH_EMBEDDED_PROJECTS normal projects on the embedded database (default 1000)
//   BENCH_PGBENCH           pgbench binary (default pgbench)
// Flags (npm run bench -- <flags>):
//   --embedded / --no-embedded  include the embedded runs (default: included)
//   --no-build                  skip npm run build
//   --keep                      keep the temporary directory (scripts, logs, PGlite data)
//   --drop                      drop projects_bench at the end
//   --cpu-prof                  run the servers with --cpu-prof; profiles stay in the kept directory
//   --no-webhooks               skip bench/webhooks.ts (printed at the end, not in RESULTS.md)
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CompiledQuery } from 'kysely'
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { createDb, dbOptions, type Db } from '../src/db/index.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { captureStatements, type Capture } from './capture.js'
import { load, startServer, type LoadResult, type Server } from './load.js'
import { ACTIVITIES, OPERATIONS, LABELS, TARGET_SETS, type OperationName, type Target, type TargetSet } from './operations.js'
import { pgbenchScript, runPgbench, statementLabel, verifyScript, writeScript, type PgbenchOptions, type PgbenchResult, type Protocol, type Script } from './pgbench.js'
import { machine, pgbenchKey, render, type Figures, type SizeRun } from './report.js'
import { DEFAULT_SIZE, seedDataset, writeBenchTargets, type Dataset, type DatasetSize } from './seed.js'
import { webhookBench, webhookBenchOptions } from './webhooks.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url))
const DATABASE = 'projects_bench'

// Two cores run both the single-threaded server and PostgreSQL. A request holds a
// connection only while its statements travel and run, so a few per core keep
// PostgreSQL busy through the round trips and WAL flushes; more only queue inside
// PostgreSQL on two cores. Measured on this machine: 2 left PostgreSQL idle
// (about half the throughput), 4-10 were within noise of each other, and 16-32
// gave no more throughput but a worse p99 at 50 connections.
const DEFAULT_POOL_SIZE = 8
const POOL_SIZE_WHY = 'about 4 per core: enough to overlap the round trips and WAL flushes, few enough that 2 cores do not queue backends'

function positive (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`)
  return value
}

const flags = new Set(process.argv.slice(2))
for (const flag of flags) {
  if (!['--embedded', '--no-embedded', '--no-build', '--keep', '--drop', '--cpu-prof', '--no-webhooks'].includes(flag)) {
    throw new Error(`unknown flag ${flag}; see the header of bench/run.ts`)
  }
}
const options = {
  url: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  duration: Math.round(positive('BENCH_DURATION', 8)),
  shortDuration: Math.round(positive('BENCH_SHORT_DURATION', 4)),
  warmup: Math.round(positive('BENCH_WARMUP', 2)),
  poolSize: Math.round(positive('BENCH_POOL_SIZE', DEFAULT_POOL_SIZE)),
  connections: (process.env.BENCH_CONNECTIONS || '50,10').split(',').map((c) => Math.round(Number(c))).filter((c) => c > 0),
  projects: Math.round(positive('BENCH_PROJECTS', DEFAULT_SIZE.projects)),
  embeddedProjects: Math.round(positive('BENCH_EMBEDDED_PROJECTS', DEFAULT_SIZE.projects)),
  pgbench: process.env.BENCH_PGBENCH || 'pgbench',
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
    (r.othersCpuPercent === null ? '' : `, other processes ${r.othersCpuPercent.toFixed(0)}% of the CPU`) +
    (r.non2xx > 0 || r.errors > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors ${JSON.stringify(r.statusCodes)} ${r.samples.join(' | ')}` : '')
}

function withDatabase (url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

async function recreateDatabase (url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${DATABASE}`)
    const { rows } = await client.query<{ version: string }>('SELECT version()')
    return rows[0]!.version.replace(/ on .*$/, '')
  } finally {
    await client.end()
  }
}

async function dropDatabase (url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
  } finally {
    await client.end()
  }
}

async function count (db: Db, table: string): Promise<number> {
  const result = await db.executeQuery<{ n: string }>(CompiledQuery.raw(`SELECT count(*) AS n FROM ${table}`))
  return Number(result.rows[0]!.n)
}

/** Warm-up, the measured runs at each connection count, then the small-vs-large runs. */
async function drive (server: Server, dataset: Dataset, where: string, database: string | null): Promise<{ results: LoadResult[], sizes: SizeRun[] }> {
  const { normal, large } = dataset
  for (const operation of OPERATIONS) {
    await load({ url: server.url, pid: server.pid, operation, targets: dataset[TARGET_SETS[operation]], connections: 10, seconds: options.warmup, database })
  }
  const results: LoadResult[] = []
  for (const operation of OPERATIONS) {
    const targets = dataset[TARGET_SETS[operation]]
    for (const connections of options.connections) {
      step(`${where}: ${LABELS[operation]} at ${connections} connections for ${options.duration} s`)
      const result = await load({ url: server.url, pid: server.pid, operation, targets, connections, seconds: options.duration, database })
      step(`  ${describe(result)}`)
      results.push(result)
    }
  }
  const sizes: SizeRun[] = []
  if (large.length > 0) {
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
  }
  return { results, sizes }
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
    const pgbenchOptions = (clients: number, protocol: Protocol): PgbenchOptions => ({ binary: options.pgbench, url: benchUrl, clients, threads: 2, protocol })
    const pgbenchAvailable = spawnSync(options.pgbench, ['--version']).status === 0
    try {
      await migrateToLatest(db)
      step(`seeding ${size.projects} + ${size.largeProjects} large + ${size.notifiedProjects} notified projects, ${size.readers} readers`)
      dataset = await seedDataset(db, size, { tokenConcurrency: 8 })
      await writeBenchTargets(db, dataset)
      step(`  seeded in ${dataset.seconds.toFixed(1)} s: ${JSON.stringify(dataset.rows)}`)
      const sets: Record<TargetSet, Target[]> = dataset
      const first = (operation: OperationName) => sets[TARGET_SETS[operation]][0]!

      step('capturing the SQL of one request of each operation')
      captures = await captureStatements(benchUrl, Object.fromEntries(OPERATIONS.map((op) => [op, first(op)])) as Record<OperationName, Target>)
      for (const operation of OPERATIONS) {
        const statements = captures[operation].statements
        const targets = sets[TARGET_SETS[operation]].length
        scripts[operation] = pgbenchScript(operation, captures[operation], first(operation), targets)
        step(`  ${LABELS[operation]}: ${statements.length} statement(s), ${scripts[operation].protocol === 'prepared' ? 'named (pgbench -M prepared)' : 'unnamed (pgbench -M extended)'}, ` +
          `${captures[operation].notified} notification(s) written: ` + statements.map((s) => statementLabel(s.sql)).join(' | '))
        for (const warning of scripts[operation].warnings) step(`  warning: ${warning}`)
        files[operation] = await writeScript(tmp, operation, scripts[operation])
      }
      if (!pgbenchAvailable) {
        step(`${options.pgbench} is not available: no pgbench columns`)
      } else {
        for (const operation of OPERATIONS) {
          const check = pgbenchScript(operation, captures[operation], first(operation), sets[TARGET_SETS[operation]].length, true)
          const file = await writeScript(tmp, `${operation}-verify`, check)
          const before = { activities: await count(db, 'activities'), notifications: await count(db, 'notifications') }
          await verifyScript(pgbenchOptions(1, check.protocol), file)
          const written = (await count(db, 'activities')) - before.activities
          const notified = (await count(db, 'notifications')) - before.notifications
          // Every target of a set is seeded alike, so a random one notifies as many as the captured one.
          if (written !== ACTIVITIES[operation] || notified !== captures[operation].notified) {
            throw new Error(`the ${operation} script wrote ${written} activities and ${notified} notifications, not ` +
              `${ACTIVITIES[operation]} and ${captures[operation].notified}: it does not replay the server's work`)
          }
          step(`  ${operation}: pgbench script verified (-t 1, every one-row statement returned its row, ${written} activity and ${notified} notification(s) written)`)
        }
      }
    } finally {
      await db.destroy()
    }

    step(`starting the server on PostgreSQL (DB_POOL_SIZE ${options.poolSize})`)
    const pgServer = await startServer({
      entry,
      logFile: path.join(tmp, 'server-postgres.log'),
      nodeArgs: nodeArgs('postgres'),
      env: {
        ...serverEnv(options.poolSize), DATABASE_URL: benchUrl
      }
    })
    servers.push(pgServer)
    step(`  ready; RSS ${pgServer.idleRssMb.toFixed(0)} MB before any load`)
    const postgres = await drive(pgServer, dataset, 'PostgreSQL', DATABASE)
    await pgServer.stop()

    const pgbench = new Map<string, PgbenchResult>()
    if (pgbenchAvailable) {
      for (const operation of OPERATIONS) {
        for (const clients of options.connections) {
          step(`pgbench: ${LABELS[operation]} at ${clients} clients for ${options.duration} s`)
          try {
            const result = await runPgbench(pgbenchOptions(clients, scripts[operation].protocol), files[operation], options.duration)
            pgbench.set(pgbenchKey(operation, clients), result)
            step(`  ${result.tps.toFixed(0)} tps, latency ${result.latencyMs} ms${result.failed > 0 ? `, ${result.failed} failed` : ''}`)
          } catch (error) {
            step(`  ${(error as Error).message}`)
          }
        }
      }
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
          const result = await runPgbench(pgbenchOptions(SIZE_CONNECTIONS, protocol), files[operation], options.duration)
          otherProtocol.set(operation, result)
          step(`  ${result.tps.toFixed(0)} tps, latency ${result.latencyMs} ms${result.failed > 0 ? `, ${result.failed} failed` : ''}`)
        } catch (error) {
          step(`  ${(error as Error).message}`)
        }
      }
    }

    // Embedded: the same dataset in a PGlite directory, then the same HTTP runs.
    let embedded: { results: LoadResult[], sizes: SizeRun[] } = { results: [], sizes: [] }
    let embeddedSettings = null
    let pgliteVersion: string | null = null
    let embeddedIdleRss: number | null = null
    if (options.embedded) {
      const dataDir = path.join(tmp, 'pglite')
      const embeddedSize: DatasetSize = { ...DEFAULT_SIZE, projects: options.embeddedProjects }
      step(`seeding the embedded database (${embeddedSize.projects} + ${embeddedSize.largeProjects} large + ${embeddedSize.notifiedProjects} notified projects, ${embeddedSize.readers} readers)`)
      const edb = await createDb(dbOptions(loadConfig({ DATA_DIR: dataDir, DB_STATEMENT_TIMEOUT_MS: '10000' })))
      let embeddedData: Dataset
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

      step('starting the server on the embedded database')
      const emServer = await startServer({
        entry,
        logFile: path.join(tmp, 'server-embedded.log'),
        nodeArgs: nodeArgs('embedded'),
        env: {
          ...serverEnv(options.poolSize), DATA_DIR: dataDir
        }
      })
      servers.push(emServer)
      embeddedIdleRss = emServer.idleRssMb
      step(`  ready; RSS ${emServer.idleRssMb.toFixed(0)} MB before any load`)
      embedded = await drive(emServer, embeddedData, 'embedded', null)
      await emServer.stop()
    }

    const figures: Figures = {
      postgres: postgres.results,
      embedded: embedded.results,
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
      poolSize: options.poolSize,
      poolSizeWhy: options.poolSize === DEFAULT_POOL_SIZE ? POOL_SIZE_WHY : 'set by BENCH_POOL_SIZE',
      connections: options.connections,
      size,
      rows: dataset.rows,
      seedSeconds: dataset.seconds,
      embedded: embeddedSettings,
      pgbench: pgbenchAvailable ? options.pgbench : null,
      totalSeconds: (performance.now() - started) / 1000,
      idleRssMb: { postgres: pgServer.idleRssMb, embedded: embeddedIdleRss }
    }, machine(postgresVersion, pgliteVersion))
    process.stdout.write(text)
    await writeFile(RESULTS, markdown)
    step(`wrote ${path.relative(ROOT, RESULTS)}`)
    if (!flags.has('--no-webhooks')) {
      process.stdout.write(`\nWebhooks\n${await webhookBench({ ...webhookBenchOptions(), url: options.url, duration: options.duration, build: false })}`)
    }
  } finally {
    for (const server of servers) await server.stop()
    if (options.drop) {
      await dropDatabase(options.url)
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
