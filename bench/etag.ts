// npm run bench:etag: what the entity tag costs the statements, on PostgreSQL, one
// connection, one statement after another (no HTTP, no concurrency: the statement
// alone, as the server sends it, named and prepared). Printed, never asserted.
//
//   get, as before the tag   the aggregate and the access level, as projects/get read
//                            them before conditional requests (rebuilt here)
//   get                      projects/get's statement: the same, fenced, and its tag
//   rename                   update_name without If-Match (the tag of the answer only)
//   rename, If-Match         with the tag of the previous answer: the tag of the row
//                            before the change too
//   rename, stale If-Match   412: the tag before the change, no write, no answer built
//
// On a normal project of the bench dataset, a large one (200 milestones, 100
// contributors) and a normal one whose description is 512 KiB. Each figure is the
// median over ROUNDS rounds of the mean time of CALLS calls, in microseconds; the
// statements of a project take turns round by round, so that a slower moment of a
// shared machine falls on all of them. The session runs with synchronous_commit off:
// a mutation's time is then its work, not the disk's flush of the commit (which
// the tag does not change, and which on a shared disk varies more than all of it).
//
// Options (environment): DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres;
// the database projects_bench_etag is recreated on it and dropped at the end),
// ETAG_BENCH_CALLS (default 400), ETAG_BENCH_ROUNDS (default 5).
import { CompiledQuery, sql } from 'kysely'
import { loadConfig } from '../src/config.js'
import { ACCESS, accessLevel } from '../src/projects/access.js'
import { createDb, dbOptions, type Db } from '../src/db/index.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { findProject, projectAggregate, projectSource } from '../src/db/project-aggregate.js'
import { updateProjectField } from '../src/db/project-mutations.js'
import { nameStatement } from '../src/db/statement-names.js'
import { connected } from './postgres.js'
import { DEFAULT_SIZE, seedDataset } from './seed.js'

const URL_ = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
const DATABASE = 'projects_bench_etag'
const CALLS = Number(process.env.ETAG_BENCH_CALLS ?? 400)
const ROUNDS = Number(process.env.ETAG_BENCH_ROUNDS ?? 5)

async function admin (query: string): Promise<void> {
  await connected(URL_, async (client) => { await client.query(query) })
}

/** projects/get's statement before conditional requests: no fence, no tag. */
function untaggedGet (db: Db, projectId: string, personId: string) {
  return projectAggregate(db, projectSource('projects'), sql<string>`${personId}::uuid`)
    .innerJoinLateral((eb) => eb.selectFrom('people as me')
      .where('me.id', '=', personId)
      .select((eb) => accessLevel(eb.table('p'), eb.table('me')).as('level'))
      .as('acc'), (join) => join.onTrue())
    .where('p.id', '=', projectId)
    .where('acc.level', '>=', ACCESS.view)
    .select('acc.level')
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

type Call = (i: number) => Promise<unknown>

/** For each statement, the median over the rounds of the mean microseconds per call. */
async function measure (calls: Array<[string, Call]>): Promise<Array<[string, number]>> {
  let n = 0
  for (const [, call] of calls) for (let i = 0; i < Math.min(50, CALLS); i++) await call(n++) // warm: plans, caches
  const means = calls.map(() => [] as number[])
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, [, call]] of calls.entries()) {
      const started = performance.now()
      for (let i = 0; i < CALLS; i++) await call(n++)
      means[k]!.push((performance.now() - started) * 1000 / CALLS)
    }
  }
  return calls.map(([name], k) => [name, median(means[k]!)])
}

await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
await admin(`CREATE DATABASE ${DATABASE}`)
const url = new URL(URL_)
url.pathname = `/${DATABASE}`
const db = await createDb(dbOptions(loadConfig({ DATABASE_URL: url.toString(), DB_POOL_SIZE: '1', DB_STATEMENT_TIMEOUT_MS: '10000' })))
try {
  await migrateToLatest(db)
  const dataset = await seedDataset(db, { ...DEFAULT_SIZE, projects: 50, largeProjects: 1 }, { tokenConcurrency: 1 })
  const normal = dataset.normal[0]!
  const large = dataset.large[0]!
  const big = dataset.normal[1]!
  await db.updateTable('projects').set({ description: JSON.stringify({ type: 'doc', text: 'x'.repeat(512 * 1024 - 30) }) })
    .where('id', '=', big.projectId).execute()
  await db.executeQuery(CompiledQuery.raw('ANALYZE'))
  // One connection (DB_POOL_SIZE 1): the setting holds for every statement below.
  await db.executeQuery(CompiledQuery.raw('SET synchronous_commit = off'))

  const rows: Array<[string, string, number]> = []
  for (const [label, target] of [['normal', normal], ['large', large], ['512 KiB description', big]] as const) {
    const { projectId, personId } = target
    const rename = (i: number, ifMatch: string[] | null) => updateProjectField(db, {
      projectId, personId, tokenId: target.tokenId, field: 'name', value: `Renamed ${label} ${i}`, ifMatch
    })
    // Compiled once and prepared by name, as the service's own statements are.
    const before = untaggedGet(db, projectId, personId).compile()
    nameStatement(before.sql)
    let tag = (await findProject(db, projectId, personId))!.etag
    const figures = await measure([
      ['get, as before the tag', () => db.executeQuery(before)],
      ['get', () => findProject(db, projectId, personId)],
      // Each change answers the tag the next If-Match sends.
      ['rename', async (i) => {
        const result = await rename(i, null)
        if (result.outcome === 'done') tag = result.project.etag
      }],
      ['rename, If-Match', async (i) => {
        const result = await rename(i, [tag])
        if (result.outcome !== 'done') throw new Error(`a matching If-Match was ${result.outcome}`)
        tag = result.project.etag
      }],
      ['rename, stale If-Match (412)', async (i) => {
        const result = await rename(i, ['stale'])
        if (result.outcome !== 'precondition_failed') throw new Error(`a stale If-Match was ${result.outcome}`)
      }]
    ])
    for (const [what, us] of figures) rows.push([label, what, us])
  }

  const version = (await sql<{ v: string }>`SELECT current_setting('server_version') AS v`.execute(db)).rows[0]!.v
  console.log(`PostgreSQL ${version}; Node ${process.version}; ${CALLS} calls × ${ROUNDS} rounds per figure (median of the rounds' means)\n`)
  console.log('| project | statement | µs per call |')
  console.log('| --- | --- | ---: |')
  for (const [label, what, us] of rows) console.log(`| ${label} | ${what} | ${Math.round(us)} |`)
} finally {
  await db.destroy()
  await admin(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
}
