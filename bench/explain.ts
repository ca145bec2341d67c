// npm run bench:explain: where each operation's statement spends its time inside the
// database, on PostgreSQL and on the embedded database (PGlite) side by side. The
// statement is the one the server sends for a request of the operation (captured
// as the bench captures it, bench/capture.ts), on the bench's dataset (bench/seed.ts)
// seeded into both; it runs as the server runs it, prepared with its generic plan,
// under EXPLAIN ANALYZE, in a transaction rolled back, ROUNDS times with a new name
// or description each time, after 30 times uncounted. Printed, never asserted.
//
// Each figure is a median over the rounds. "untimed" is the statement's execution
// under EXPLAIN (ANALYZE, TIMING FALSE), about what it costs when the server sends
// it; the rest comes from EXPLAIN (ANALYZE) with its clock read around every node
// and trigger, which makes the statement slower (much slower in WebAssembly), so it
// is given as shares of that timed execution: the foreign-key checks (each a
// trigger call per row written), the other triggers, and the plan nodes that took
// the most time of their own (bench/plan.ts).
//
// The conditional rename is left out: its captured If-Match no longer holds once
// the capture has renamed the project, and its statement is the rename's with the
// tag compared.
//
// Options (environment): DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres;
// the database projects_bench_explain is recreated on it and dropped at the end),
// EXPLAIN_ROUNDS (default 9), BENCH_PROJECTS (default 1000, as the bench), EXPLAIN_PLANS (a
// directory to write each plan of median execution to, as JSON).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { CompiledQuery, sql } from 'kysely'
import { loadConfig } from '../src/config.js'
import { createDb, dbOptions } from '../src/db/index.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { captureStatements, locationEnv, type Capture, type DatabaseLocation } from './capture.js'
import { LABELS, OPERATIONS, TARGET_SETS, newDescription, newName, type OperationName, type Target } from './operations.js'
import { positive } from './options.js'
import { connected } from './postgres.js'
import { explainPrepared, summarizePlan, withPrepared, type ExplainedPlan, type PlanSummary } from './plan.js'
import { DEFAULT_SIZE, seedDataset, type Dataset } from './seed.js'

const URL_ = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
const DATABASE = 'projects_bench_explain'
const ROUNDS = Math.round(positive('EXPLAIN_ROUNDS', 9))
/** Executions of each statement before the counted ones. */
const WARM = 30
const PROJECTS = Math.round(positive('BENCH_PROJECTS', DEFAULT_SIZE.projects))
/** Where to write each plan of median execution as JSON (EXPLAIN_PLANS), for a reader or a plan visualizer. */
const PLANS = process.env.EXPLAIN_PLANS || null
const EXPLAINED: readonly OperationName[] = OPERATIONS.filter((operation) => operation !== 'update_name_if_match')

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/**
 * The captured statement's parameters with a new revision in place of the
 * captured one: the name or description the capture wrote is already the
 * project's, and the same again would change nothing.
 */
function revised (capture: Capture, target: Target, revision: number): unknown[] {
  const [statement] = capture.statements
  const replaced = new Map<unknown, string>([
    [newName(capture.revision), newName(revision)],
    [newDescription(capture.revision, target.mentions), newDescription(revision, target.mentions)]
  ])
  return statement!.parameters.map((value) => replaced.get(value) ?? value)
}

interface Explained {
  untimedMs: number
  timed: PlanSummary
}

/** Each operation's statement, ROUNDS times untimed and timed; the timed round of median execution. */
async function explainAll (where: DatabaseLocation, dataset: Dataset): Promise<Map<OperationName, Explained>> {
  const targets = Object.fromEntries(EXPLAINED.map((operation) => [operation, dataset[TARGET_SETS[operation]][0]!])) as Record<OperationName, Target>
  const captures = await captureStatements(where, targets, {}, EXPLAINED)
  const db = await open(where)
  const results = new Map<OperationName, Explained>()
  try {
    let revision = 1_000_000_000
    for (const operation of EXPLAINED) {
      const capture = captures[operation]
      if (capture.statements.length !== 1) throw new Error(`${operation} sent ${capture.statements.length} statements, not one`)
      const parameters = () => revised(capture, targets[operation], revision++)
      // Prepared once and planned generically, as the server's statements are. The
      // first executions are not counted: the first builds the plan, and the embedded
      // database runs code it has not run before several times slower until V8 has
      // compiled it fully (a rename: 15 ms, then 2 ms after 20).
      const explained = await db.connection().execute(async (connection) => await withPrepared(connection, capture.statements[0]!.sql, async () => {
        for (let i = 0; i < WARM; i++) await explainPrepared(connection, parameters(), { timing: false })
        const untimed: number[] = []
        const timed: Array<{ plan: ExplainedPlan, summary: PlanSummary }> = []
        for (let round = 0; round < ROUNDS; round++) {
          untimed.push((await explainPrepared(connection, parameters(), { timing: false }))['Execution Time'])
          const plan = await explainPrepared(connection, parameters(), { timing: true })
          timed.push({ plan, summary: summarizePlan(plan) })
        }
        timed.sort((a, b) => a.summary.executionMs - b.summary.executionMs)
        const middle = timed[Math.floor(timed.length / 2)]!
        if (PLANS !== null) {
          await mkdir(PLANS, { recursive: true })
          await writeFile(path.join(PLANS, `${operation}.${typeof where === 'string' ? 'postgres' : 'embedded'}.json`), JSON.stringify([middle.plan], null, 2))
        }
        return { untimedMs: median(untimed), timed: middle.summary }
      }))
      results.set(operation, explained)
    }
  } finally {
    await db.destroy()
  }
  return results
}

const share = (ms: number, of: number) => `${(100 * ms / of).toFixed(0)} %`

function row (operation: OperationName, database: string, { untimedMs, timed }: Explained): string {
  const fk = timed.foreignKeys.reduce((sum, k) => sum + k.ms, 0)
  const fkCalls = timed.foreignKeys.reduce((sum, k) => sum + k.calls, 0)
  const other = timed.otherTriggers.reduce((sum, k) => sum + k.ms, 0)
  const nodes = timed.nodes.slice(0, 4).map((n) => `${n.node} ${share(n.ms, timed.executionMs)}`).join('; ')
  return `| ${LABELS[operation]} | ${database} | ${untimedMs.toFixed(2)} | ${timed.executionMs.toFixed(2)} | ${share(fk, timed.executionMs)} (${fkCalls}) | ${share(other, timed.executionMs)} | ${nodes} |`
}

const admin = async (query: string) => { await connected(URL_, async (client) => { await client.query(query) }) }
/** The database at `where`, with the server's settings but for a longer statement timeout (seeding, EXPLAIN). */
const open = async (where: DatabaseLocation) => await createDb(dbOptions({ ...loadConfig(locationEnv(where)), DB_STATEMENT_TIMEOUT_MS: 60_000 }))
const size = { ...DEFAULT_SIZE, projects: PROJECTS }
const tmp = await mkdtemp(path.join(os.tmpdir(), 'projects-explain-'))
const dataDir = path.join(tmp, 'pglite')
await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
await admin(`CREATE DATABASE ${DATABASE}`)
try {
  const url = new URL(URL_)
  url.pathname = `/${DATABASE}`
  const seeded: Array<{ where: DatabaseLocation, dataset: Dataset, version: string }> = []
  for (const where of [url.toString(), { dataDir }]) {
    const db = await open(where)
    try {
      await migrateToLatest(db)
      process.stderr.write(`seeding ${typeof where === 'string' ? 'PostgreSQL' : 'the embedded database'} (${size.projects} projects and the rest of the bench's dataset)\n`)
      const dataset = await seedDataset(db, size, { tokenConcurrency: 1 })
      await db.executeQuery(CompiledQuery.raw('VACUUM ANALYZE'))
      const version = (await sql<{ v: string }>`SELECT current_setting('server_version') AS v`.execute(db)).rows[0]!.v
      seeded.push({ where, dataset, version })
    } finally {
      await db.destroy()
    }
  }
  const [pg, em] = seeded as [typeof seeded[0], typeof seeded[0]]
  const [postgres, embedded] = [await explainAll(pg.where, pg.dataset), await explainAll(em.where, em.dataset)]
  console.log(`PostgreSQL ${pg.version}; embedded: PGlite (PostgreSQL ${em.version}); Node ${process.version}; ${os.cpus()[0]?.model ?? 'CPU unknown'}, ${os.cpus().length} CPUs; ` +
    `${size.projects} projects; each figure the median of ${ROUNDS} rounds\n`)
  console.log('| operation | database | untimed ms | timed ms | foreign-key checks (calls) | other triggers | most time of their own, share of the timed |')
  console.log('| --- | --- | ---: | ---: | ---: | ---: | --- |')
  for (const operation of EXPLAINED) {
    console.log(row(operation, 'PostgreSQL', postgres.get(operation)!))
    console.log(row(operation, 'embedded', embedded.get(operation)!))
  }
} finally {
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
  await rm(tmp, { recursive: true, force: true })
}
