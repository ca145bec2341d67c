// The embedded database has neither autovacuum nor a checkpointer (PGlite is
// PostgreSQL in single-user mode): its thread does their work, by their rules and
// settings (src/db/embedded-upkeep.ts). Runs on PGlite whatever DATABASE_URL says.
import t from 'tap'
import { EmbeddedDatabase, type ThreadOptions, type UpkeepReport, type UpkeepTiming } from '../../src/db/embedded.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface TableStats {
  n_dead_tup: number
  n_mod_since_analyze: number
  last_vacuum: string | null
  last_analyze: string | null
}

/** An embedded database in memory whose thread does its upkeep on its own by `timing` (by default only when asked), with PostgreSQL `settings`. */
async function open (t: Tap, timing: Partial<UpkeepTiming & Pick<ThreadOptions, 'settings'>> = { upkeepIntervalMs: 3_600_000 }): Promise<EmbeddedDatabase> {
  const database = await EmbeddedDatabase.open(null, timing)
  t.teardown(() => database.close())
  return database
}

async function run (database: EmbeddedDatabase, sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  return (await database.query(database.session(), sql, params)).rows as Array<Record<string, unknown>>
}

async function stats (database: EmbeddedDatabase, table: string): Promise<TableStats> {
  await run(database, 'SELECT pg_stat_force_next_flush()')
  const [row] = await run(database, `SELECT n_dead_tup::int, n_mod_since_analyze::int, last_vacuum::text, last_analyze::text
    FROM pg_stat_user_tables WHERE relname = $1`, [table])
  return row as unknown as TableStats
}

/** The report's entries for one table. */
function about (report: UpkeepReport, table: string) {
  return {
    vacuumed: report.vacuumed.includes(table),
    analyzed: report.analyzed.includes(table),
    failed: report.failed.filter((f) => f.table === table)
  }
}

/** Runs a pass now; what it did to one table. */
async function pass (database: EmbeddedDatabase, table: string) {
  return about(await database.upkeep(), table)
}

/** The table's row count as PostgreSQL last recorded it (-1: unknown, never analyzed nor vacuumed). */
async function reltuples (database: EmbeddedDatabase, table: string): Promise<unknown> {
  return (await run(database, 'SELECT reltuples FROM pg_class WHERE relname = $1', [table]))[0]?.reltuples
}

/** The dead rows of a table's TOAST table: the chunks of values replaced. */
async function deadChunks (database: EmbeddedDatabase, table: string): Promise<unknown> {
  await run(database, 'SELECT pg_stat_force_next_flush()')
  return (await run(database, `SELECT s.n_dead_tup::int AS chunks FROM pg_class c JOIN pg_stat_all_tables s ON s.relid = c.reltoastrelid
    WHERE c.relname = $1`, [table]))[0]?.chunks
}

t.test('a table is vacuumed once its dead rows pass autovacuum\'s threshold, analyzed once its changes do, and left alone otherwise', async (t) => {
  const database = await open(t)
  await run(database, 'CREATE TABLE churn (id int PRIMARY KEY, n int NOT NULL)')
  await run(database, 'INSERT INTO churn SELECT g, 0 FROM generate_series(1, 200) g')

  // 200 rows inserted: changes enough to analyze (50 + 10 % of rows), too few
  // inserted rows to vacuum for (1,000 + 20 %), no dead rows.
  t.same(await pass(database, 'public.churn'), { vacuumed: false, analyzed: true, failed: [] }, 'a new table is analyzed, not vacuumed')
  let s = await stats(database, 'churn')
  t.ok(s.last_analyze, 'PostgreSQL records the analyze')
  t.equal(s.last_vacuum, null)
  t.equal(s.n_mod_since_analyze, 0)

  // 40 dead rows: under the 50 + 20 % of 200 = 90 that call for a vacuum.
  await run(database, 'UPDATE churn SET n = n + 1 WHERE id <= 40')
  t.same(await pass(database, 'public.churn'), { vacuumed: false, analyzed: false, failed: [] }, 'under both thresholds: nothing')
  t.equal((await stats(database, 'churn')).n_dead_tup, 40, 'the dead rows are still there')

  // 40 + 200 dead rows, 240 changes: both due.
  await run(database, 'UPDATE churn SET n = n + 1')
  t.same(await pass(database, 'public.churn'), { vacuumed: true, analyzed: true, failed: [] })
  s = await stats(database, 'churn')
  t.equal(s.n_dead_tup, 0, 'the dead rows are gone')
  t.ok(s.last_vacuum, 'PostgreSQL records the vacuum')
  t.equal((await run(database, 'SELECT count(*)::int AS n, sum(n)::int AS total FROM churn'))[0]?.total, 240, 'nothing of the table is lost')

  t.same(await pass(database, 'public.churn'), { vacuumed: false, analyzed: false, failed: [] }, 'nothing changed since: nothing due')
})

t.test('a table never analyzed nor vacuumed is analyzed, however few its changes (its statistics may have gone with an earlier process)', async (t) => {
  const database = await open(t)
  await run(database, 'CREATE TABLE few (id int PRIMARY KEY)')
  await run(database, 'INSERT INTO few SELECT generate_series(1, 10)')
  t.equal(await reltuples(database, 'few'), -1, 'its row count is unknown')
  t.same(await pass(database, 'public.few'), { vacuumed: false, analyzed: true, failed: [] }, '10 changes, under 50, but never analyzed')
  t.equal(await reltuples(database, 'few'), 10)
  t.same(await pass(database, 'public.few'), { vacuumed: false, analyzed: false, failed: [] }, 'once is enough')
})

t.test('a table whose old values pile up in its TOAST table is vacuumed, though its own dead rows are few', async (t) => {
  const database = await open(t)
  // A description's way: long text kept out of line, each change leaving the old
  // text's chunks behind (stored uncompressed here, so that each value takes 4 chunks).
  await run(database, 'CREATE TABLE documents (id int PRIMARY KEY, body text NOT NULL)')
  await run(database, 'ALTER TABLE documents ALTER COLUMN body SET STORAGE EXTERNAL')
  await run(database, `INSERT INTO documents SELECT g, repeat('x', 7000) FROM generate_series(1, 100) g`)
  await database.upkeep()
  // 40 rows changed: 40 dead rows (under 50 + 20 % of 100 = 70), 160 dead chunks
  // (over 50 + 20 % of 400 = 130).
  await run(database, `UPDATE documents SET body = repeat('y', 7000) WHERE id <= 40`)
  t.equal(await deadChunks(database, 'documents'), 160, 'the old values\' chunks are dead')
  t.equal((await stats(database, 'documents')).n_dead_tup, 40)

  t.equal((await pass(database, 'public.documents')).vacuumed, true, 'vacuumed for its TOAST table')
  t.equal(await deadChunks(database, 'documents'), 0, 'the dead chunks are gone')
  const rows = await run(database, `SELECT count(*) FILTER (WHERE body = repeat('y', 7000))::int AS changed, count(*)::int AS total FROM documents`)
  t.same(rows[0], { changed: 40, total: 100 })
})

t.test('a pass waits for an open transaction to end, and the transaction is untouched by it', async (t) => {
  const database = await open(t)
  await run(database, 'CREATE TABLE churn (id int PRIMARY KEY, n int NOT NULL)')
  await run(database, 'INSERT INTO churn SELECT g, 0 FROM generate_series(1, 200) g')
  await run(database, 'UPDATE churn SET n = 1')

  const session = database.session()
  await database.query(session, 'BEGIN', [])
  await database.query(session, 'UPDATE churn SET n = 2 WHERE id = 1', [])
  let over = false
  const running = database.upkeep().then((report) => { over = true; return report })
  // The transaction's own statements go on meanwhile.
  const [row] = (await database.query(session, 'SELECT n FROM churn WHERE id = 1', [])).rows as Array<{ n: number }>
  t.equal(row?.n, 2)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(over, false, 'no upkeep while the transaction is open')
  t.equal(database.inTransaction(session), true)
  await database.query(session, 'COMMIT', [])
  const report = await running
  t.equal(about(report, 'public.churn').vacuumed, true, 'then the pass runs')
  t.same(await run(database, 'SELECT n, count(*)::int AS rows FROM churn GROUP BY n ORDER BY n'), [{ n: 1, rows: 199 }, { n: 2, rows: 1 }], 'the commit holds')
})

/** A table of 200 rows, each changed once: 200 dead rows, over the 90 that call for a vacuum. */
async function churned (database: EmbeddedDatabase): Promise<void> {
  await run(database, 'CREATE TABLE churn (id int PRIMARY KEY, n int NOT NULL)')
  await run(database, 'INSERT INTO churn SELECT g, 0 FROM generate_series(1, 200) g')
  await run(database, 'UPDATE churn SET n = 1')
}

const sleep = async (ms: number) => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/**
 * Looks at the churned table's statistics every `everyMs` (each look a statement)
 * until it is vacuumed, for at most 10 s; then it must have been, its dead rows gone.
 */
async function vacuumedOnItsOwn (t: Tap, database: EmbeddedDatabase, everyMs: number, message: string): Promise<void> {
  let s = await stats(database, 'churn')
  for (const start = Date.now(); s.last_vacuum === null && Date.now() - start < 10_000;) {
    await sleep(everyMs)
    s = await stats(database, 'churn')
  }
  t.ok(s.last_vacuum, message)
  t.equal(s.n_dead_tup, 0, 'its dead rows are gone')
}

t.test('the thread looks for upkeep on its own, once statements have run', async (t) => {
  const database = await open(t, { upkeepIntervalMs: 100, upkeepQuietMs: 20 })
  await churned(database)
  await vacuumedOnItsOwn(t, database, 100, 'vacuumed without being asked')
})

t.test('a pass the thread began itself waits while statements keep coming, and runs once they pause', async (t) => {
  const database = await open(t, { upkeepIntervalMs: 50, upkeepQuietMs: 300, upkeepMaxWaitMs: 60_000 })
  await churned(database)
  // A statement every 50 ms for 1.5 s: never 300 ms without one.
  for (const start = Date.now(); Date.now() - start < 1500;) {
    await run(database, 'SELECT 1')
    await sleep(50)
  }
  t.equal((await stats(database, 'churn')).last_vacuum, null, 'not vacuumed while the statements came')
  // A look every 500 ms: quiet enough.
  await vacuumedOnItsOwn(t, database, 500, 'vacuumed in the pause')
})

t.test('a pass that finds no quiet moment runs between statements once it has waited its longest', async (t) => {
  const database = await open(t, { upkeepIntervalMs: 50, upkeepQuietMs: 3_600_000, upkeepMaxWaitMs: 300 })
  await churned(database)
  // A look every 20 ms: never an hour's quiet.
  await vacuumedOnItsOwn(t, database, 20, 'vacuumed while the statements came')
})

t.test('a pass asked for joins one the thread began, and hurries it', async (t) => {
  const database = await open(t, { upkeepIntervalMs: 50, upkeepQuietMs: 3_600_000, upkeepMaxWaitMs: 3_600_000 })
  await churned(database)
  await sleep(300)
  t.equal((await stats(database, 'churn')).last_vacuum, null, 'the thread\'s own pass waits (for an hour\'s quiet)')
  t.equal(about(await database.upkeep(), 'public.churn').vacuumed, true, 'asked for, it runs now')
  t.equal((await stats(database, 'churn')).n_dead_tup, 0)
})

t.test('a statement sent during a pass waits for the table under way, not for the whole pass', async (t) => {
  const database = await open(t)
  for (const table of ['a', 'b', 'c', 'd']) {
    await run(database, `CREATE TABLE ${table} AS SELECT g AS id, repeat('x', 100) AS pad FROM generate_series(1, 50000) g`)
    await run(database, `UPDATE ${table} SET pad = 'y' WHERE id % 2 = 0`)
  }
  let over = false
  const running = database.upkeep().then((report) => { over = true; return report })
  const [row] = await run(database, 'SELECT 1 AS one')
  t.same(row, { one: 1 })
  t.equal(over, false, 'answered while the pass goes on')
  const report = await running
  t.same(report.vacuumed, ['public.a', 'public.b', 'public.c', 'public.d'], 'then the pass does every table')
})

t.test('a pass asked for once the database is closed fails as a statement would', async (t) => {
  const database = await EmbeddedDatabase.open(null, { upkeepIntervalMs: 3_600_000 })
  await database.close()
  await t.rejects(database.upkeep(), { code: '57P01' })
})

// PostgreSQL in single-user mode never checkpoints on its own: the thread does the
// checkpointer's work by its rules (src/db/embedded-upkeep.ts).

/** The log written since the last checkpoint's redo point, in bytes, and that point. */
async function sinceCheckpoint (database: EmbeddedDatabase): Promise<{ bytes: number, redo: string }> {
  const [row] = await run(database, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 AS bytes, redo_lsn::text AS redo
    FROM pg_control_checkpoint()`)
  return row as { bytes: number, redo: string }
}

/** About 26 MB of log: 100,000 rows of 200 bytes, inserted in a statement of their own (not in the transaction that made the table). */
async function writeLog (database: EmbeddedDatabase): Promise<void> {
  await run(database, 'CREATE TABLE IF NOT EXISTS logged (id int, pad text)')
  await run(database, `INSERT INTO logged SELECT g, repeat('x', 200) FROM generate_series(1, 100000) g`)
}

t.test('a checkpoint is made once the log since the last one reaches max_wal_size ÷ (1 + checkpoint_completion_target), and not before', async (t) => {
  // 32 MB: two segments of 16 MB, so that one segment of log (16 MB) calls for a checkpoint.
  const small = await open(t, { upkeepIntervalMs: 3_600_000, settings: ['max_wal_size = 32MB'] })
  await run(small, 'CREATE TABLE few AS SELECT 1 AS one')
  const before = await sinceCheckpoint(small)
  t.equal((await small.upkeep()).checkpointed, false, 'a little log: no checkpoint')
  t.equal((await sinceCheckpoint(small)).redo, before.redo, 'the redo point is where it was')

  await writeLog(small)
  const written = await sinceCheckpoint(small)
  t.ok(written.bytes > 16 * 1024 * 1024, `more than a segment written since the last checkpoint (${written.bytes} bytes)`)
  t.equal((await small.upkeep()).checkpointed, true, 'a segment of log: a checkpoint')
  const after = await sinceCheckpoint(small)
  t.not(after.redo, written.redo, 'the redo point moved')
  t.ok(after.bytes < 1024 * 1024, `the log since the checkpoint is short (${after.bytes} bytes)`)
  t.equal((await small.upkeep()).checkpointed, false, 'the next pass finds none due')

  // PostgreSQL's default, 1 GB: the same log is far from due.
  const usual = await open(t, { upkeepIntervalMs: 3_600_000 })
  await writeLog(usual)
  const usualBefore = await sinceCheckpoint(usual)
  t.equal((await usual.upkeep()).checkpointed, false, 'with max_wal_size at 1 GB, 26 MB of log is not enough')
  t.equal((await sinceCheckpoint(usual)).redo, usualBefore.redo)
})

t.test('a checkpoint is made once checkpoint_timeout has passed, when something was written since the last one', async (t) => {
  t.setTimeout(120_000)
  // 30 s, the least PostgreSQL allows. Two databases wait at once: one written to, one not.
  const settings = ['checkpoint_timeout = 30s']
  const written = await open(t, { upkeepIntervalMs: 3_600_000, settings })
  const idle = await open(t, { upkeepIntervalMs: 3_600_000, settings })
  await run(written, 'CREATE TABLE few AS SELECT 1 AS one')
  t.equal((await written.upkeep()).checkpointed, false, 'written to, but the last checkpoint is recent')
  await run(idle, 'SELECT 1')
  await sleep(31_000)
  const before = await sinceCheckpoint(written)
  t.equal((await written.upkeep()).checkpointed, true, 'written to, and 30 s since the last checkpoint: a checkpoint')
  t.not((await sinceCheckpoint(written)).redo, before.redo, 'the redo point moved')
  const idleBefore = await sinceCheckpoint(idle)
  t.equal((await idle.upkeep()).checkpointed, false, 'nothing written since the last checkpoint: none, however long ago')
  t.equal((await sinceCheckpoint(idle)).redo, idleBefore.redo)
})

t.test('the thread makes a checkpoint on its own once one is due', async (t) => {
  const database = await open(t, { upkeepIntervalMs: 100, upkeepQuietMs: 20, settings: ['max_wal_size = 32MB'] })
  await writeLog(database)
  const written = await sinceCheckpoint(database)
  t.ok(written.bytes > 16 * 1024 * 1024)
  let now = written
  for (const start = Date.now(); Date.now() - start < 10_000 && now.redo === written.redo;) {
    await sleep(100)
    now = await sinceCheckpoint(database)
  }
  t.not(now.redo, written.redo, 'the redo point moved without a pass being asked for')
})
