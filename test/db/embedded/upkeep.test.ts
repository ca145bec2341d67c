// The embedded database has neither autovacuum nor a checkpointer (PGlite is
// PostgreSQL in single-user mode): its thread does their work, by their rules and
// settings (src/db/embedded/upkeep.ts, upkeep-rules.ts). Runs on PGlite whatever
// DATABASE_URL says. What depends on time (quiet moments, the longest wait,
// checkpoint_timeout) runs the thread's queue here on a clock the test moves on,
// so that no test waits for seconds nor fails for being slow.
import t from '../../tap.js'
import {
  EmbeddedDatabase, EmbeddedDatabaseError,
  type FromThread, type StatementResult, type ThreadOptions, type ToThread, type UpkeepReport, type UpkeepTiming
} from '../../../src/db/embedded/index.js'
import { openPGlite } from '../../../src/db/embedded/pglite.js'
import { StatementQueue } from '../../../src/db/embedded/queue.js'
import type { Clock } from '../../../src/db/embedded/upkeep.js'
import { initdbSnapshot } from '../../database.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface TableStats {
  n_dead_tup: number
  n_mod_since_analyze: number
  last_vacuum: string | null
  last_analyze: string | null
}

/**
 * An empty embedded database in memory whose thread does its upkeep on its own by
 * `timing` (by default only when asked), with PostgreSQL `settings`.
 */
async function open (t: Tap, timing: Partial<UpkeepTiming & Pick<ThreadOptions, 'settings'>> = { upkeepIntervalMs: 3_600_000 }): Promise<EmbeddedDatabase> {
  const database = await EmbeddedDatabase.open(null, { loadDataDir: await initdbSnapshot(), ...timing })
  t.teardown(() => database.close())
  return database
}

interface Timer { at: number, everyMs: number | null, callback: () => void }

/**
 * The upkeep's time, moved on by the test. Each timer fires at its moment, in
 * order, and the queue runs what that lets it run before time moves on again. The
 * time of day is the real one plus the time moved on: the last checkpoint's time,
 * which it is compared with, is PostgreSQL's real one.
 */
class TestClock implements Clock {
  #now = 0
  readonly #timers = new Set<Timer>()

  constructor (readonly settled: () => Promise<void>) {}

  now (): number { return this.#now }
  epochMs (): number { return Date.now() + this.#now }
  after (ms: number, callback: () => void): () => void { return this.#add({ at: this.#now + ms, everyMs: null, callback }) }
  every (ms: number, callback: () => void): () => void { return this.#add({ at: this.#now + ms, everyMs: ms, callback }) }

  async advance (ms: number): Promise<void> {
    const until = this.#now + ms
    for (let timer = this.#next(until); timer !== undefined; timer = this.#next(until)) {
      this.#now = timer.at
      if (timer.everyMs === null) this.#timers.delete(timer)
      else timer.at += timer.everyMs
      timer.callback()
      await this.settled()
    }
    this.#now = until
  }

  #add (timer: Timer): () => void {
    this.#timers.add(timer)
    return () => { this.#timers.delete(timer) }
  }

  #next (until: number): Timer | undefined {
    let next: Timer | undefined
    for (const timer of this.#timers) if (timer.at <= until && (next === undefined || timer.at < next.at)) next = timer
    return next
  }
}

/**
 * The database thread's queue and upkeep, run here in the test's thread over a
 * PGlite opened as the thread opens it, on a TestClock: what the thread does after
 * seconds of quiet, or once checkpoint_timeout has passed, is seen without waiting.
 */
class OnTestClock {
  readonly clock = new TestClock(async () => { await this.settled() })
  #queue: StatementQueue | undefined
  readonly #pending = new Map<number, { resolve: (value: unknown) => void, reject: (error: Error) => void, session: number }>()
  readonly #inTransaction = new Set<number>()
  #nextId = 1
  #nextSession = 1

  static async open (t: Tap, timing: Partial<UpkeepTiming>, settings: string[] = []): Promise<OnTestClock> {
    const database = new OnTestClock()
    const pglite = await openPGlite({ dataDir: null, settings, loadDataDir: await initdbSnapshot() })
    database.#queue = await StatementQueue.start(pglite, (message) => { database.#answer(message) },
      { upkeepIntervalMs: null, upkeepQuietMs: null, upkeepMaxWaitMs: null, ...timing }, database.clock)
    t.teardown(() => database.#send({ id: 0, session: 0, kind: 'close' }))
    return database
  }

  session (): number { return this.#nextSession++ }
  inTransaction (session: number): boolean { return this.#inTransaction.has(session) }

  async query (session: number, sql: string, params: unknown[]): Promise<StatementResult> {
    return await this.#send({ id: 0, session, kind: 'query', sql, params }) as StatementResult
  }

  async upkeep (): Promise<UpkeepReport> {
    return await this.#send({ id: 0, session: this.session(), kind: 'upkeep' }) as UpkeepReport
  }

  /** Resolves once the queue has run all it may now: what is left waits for a transaction to end, or for time to pass. */
  async settled (): Promise<void> {
    while (this.#queue!.running) await new Promise((resolve) => setImmediate(resolve))
  }

  /** What `promise` has come to once the queue has run all it may now: 'waiting' if that did not settle it. */
  async outcome<T> (promise: Promise<T>): Promise<T | 'waiting'> {
    return await Promise.race([promise, this.settled().then(() => 'waiting' as const)])
  }

  async #send (request: ToThread): Promise<unknown> {
    request.id = this.#nextId++
    const answer = new Promise((resolve, reject) => { this.#pending.set(request.id, { resolve, reject, session: request.session }) })
    this.#queue!.receive(request)
    return await answer
  }

  #answer (message: FromThread): void {
    if ('started' in message) return
    const pending = this.#pending.get(message.id)!
    this.#pending.delete(message.id)
    if (message.inTransaction) this.#inTransaction.add(pending.session)
    else this.#inTransaction.delete(pending.session)
    if (message.ok) pending.resolve(message.value)
    else pending.reject(new EmbeddedDatabaseError(message.error))
  }
}

/** Where statements and passes go: the database thread, or its queue on a TestClock. */
type Statements = EmbeddedDatabase | OnTestClock

async function run (database: Statements, sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  return (await database.query(database.session(), sql, params)).rows as Array<Record<string, unknown>>
}

async function stats (database: Statements, table: string): Promise<TableStats> {
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
async function pass (database: Statements, table: string) {
  return about(await database.upkeep(), table)
}

/** The table's row count as PostgreSQL last recorded it (-1: unknown, never analyzed nor vacuumed). */
async function reltuples (database: Statements, table: string): Promise<unknown> {
  return (await run(database, 'SELECT reltuples FROM pg_class WHERE relname = $1', [table]))[0]?.reltuples
}

/** The dead rows of a table's TOAST table: the chunks of values replaced. */
async function deadChunks (database: Statements, table: string): Promise<unknown> {
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
  const database = await OnTestClock.open(t, { upkeepIntervalMs: 3_600_000 })
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
  // Everything the queue may run has run: a pass free to run would be over.
  await database.settled()
  t.equal(over, false, 'no upkeep while the transaction is open')
  t.equal(database.inTransaction(session), true)
  await database.query(session, 'COMMIT', [])
  const report = await running
  t.equal(about(report, 'public.churn').vacuumed, true, 'then the pass runs')
  t.same(await run(database, 'SELECT n, count(*)::int AS rows FROM churn GROUP BY n ORDER BY n'), [{ n: 1, rows: 199 }, { n: 2, rows: 1 }], 'the commit holds')
})

/** A table of 200 rows, each changed once: 200 dead rows, over the 90 that call for a vacuum. */
async function churned (database: Statements): Promise<void> {
  await run(database, 'CREATE TABLE churn (id int PRIMARY KEY, n int NOT NULL)')
  await run(database, 'INSERT INTO churn SELECT g, 0 FROM generate_series(1, 200) g')
  await run(database, 'UPDATE churn SET n = 1')
}

// Only a hang takes this long: the thread's rhythm in these tests is 100 ms.
const HANG_MS = 60_000

/**
 * Looks at the churned table's statistics every 100 ms (each look a statement)
 * until it is vacuumed, or the thread seems hung; then it must have been, its dead
 * rows gone.
 */
async function vacuumedOnItsOwn (t: Tap, database: EmbeddedDatabase, message: string): Promise<void> {
  let s = await stats(database, 'churn')
  for (const start = Date.now(); s.last_vacuum === null && Date.now() - start < HANG_MS;) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    s = await stats(database, 'churn')
  }
  t.ok(s.last_vacuum, message)
  t.equal(s.n_dead_tup, 0, 'its dead rows are gone')
}

/**
 * Moves the clock on by `everyMs`, then looks at the churned table's statistics
 * (each look a statement), until it is vacuumed or a minute has passed on the
 * clock; then it must have been, its dead rows gone.
 */
async function vacuumedOnTestClock (t: Tap, database: OnTestClock, everyMs: number, message: string): Promise<void> {
  let s = await stats(database, 'churn')
  for (let ms = 0; s.last_vacuum === null && ms < 60_000; ms += everyMs) {
    await database.clock.advance(everyMs)
    s = await stats(database, 'churn')
  }
  t.ok(s.last_vacuum, message)
  t.equal(s.n_dead_tup, 0, 'its dead rows are gone')
}

t.test('the thread looks for upkeep on its own, once statements have run', async (t) => {
  const database = await open(t, { upkeepIntervalMs: 100, upkeepQuietMs: 20 })
  await churned(database)
  await vacuumedOnItsOwn(t, database, 'vacuumed without being asked')
})

t.test('a pass the thread began itself waits while statements keep coming, and runs once they pause', async (t) => {
  const database = await OnTestClock.open(t, { upkeepIntervalMs: 50, upkeepQuietMs: 300, upkeepMaxWaitMs: 60_000 })
  await churned(database)
  // A statement every 50 ms for 1.5 s: never 300 ms without one.
  for (let ms = 0; ms < 1500; ms += 50) {
    await run(database, 'SELECT 1')
    await database.clock.advance(50)
  }
  t.equal((await stats(database, 'churn')).last_vacuum, null, 'not vacuumed while the statements came')
  // A look every 500 ms: quiet enough.
  await vacuumedOnTestClock(t, database, 500, 'vacuumed in the pause')
})

t.test('a pass that finds no quiet moment runs between statements once it has waited its longest', async (t) => {
  const database = await OnTestClock.open(t, { upkeepIntervalMs: 50, upkeepQuietMs: 3_600_000, upkeepMaxWaitMs: 300 })
  await churned(database)
  // A look every 20 ms: never an hour's quiet.
  await vacuumedOnTestClock(t, database, 20, 'vacuumed while the statements came')
})

t.test('a pass asked for joins one the thread began, and hurries it', async (t) => {
  const database = await OnTestClock.open(t, { upkeepIntervalMs: 50, upkeepQuietMs: 3_600_000, upkeepMaxWaitMs: 3_600_000 })
  await churned(database)
  await database.clock.advance(300)
  t.equal((await stats(database, 'churn')).last_vacuum, null, 'the thread\'s own pass waits (for an hour\'s quiet)')
  // The clock stands still: only the hurry can end the pass.
  const report = await database.outcome(database.upkeep())
  t.equal(report !== 'waiting' && about(report, 'public.churn').vacuumed, true, 'asked for, it runs now')
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
  const database = await EmbeddedDatabase.open(null, { upkeepIntervalMs: 3_600_000, loadDataDir: await initdbSnapshot() })
  await database.close()
  await t.rejects(database.upkeep(), { code: '57P01' })
})

// PostgreSQL in single-user mode never checkpoints on its own: the thread does the
// checkpointer's work by its rules (src/db/embedded/upkeep-rules.ts).

/** The log written since the last checkpoint's redo point, in bytes, and that point. */
async function sinceCheckpoint (database: Statements): Promise<{ bytes: number, redo: string }> {
  const [row] = await run(database, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 AS bytes, redo_lsn::text AS redo
    FROM pg_control_checkpoint()`)
  return row as { bytes: number, redo: string }
}

/** About 26 MB of log: 100,000 rows of 200 bytes, inserted in a statement of their own (not in the transaction that made the table). */
async function writeLog (database: Statements): Promise<void> {
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
  // 30 s, the least PostgreSQL allows. Two databases: one written to, one not.
  const settings = ['checkpoint_timeout = 30s']
  const written = await OnTestClock.open(t, { upkeepIntervalMs: 3_600_000 }, settings)
  const idle = await OnTestClock.open(t, { upkeepIntervalMs: 3_600_000 }, settings)
  await run(written, 'CREATE TABLE few AS SELECT 1 AS one')
  t.equal((await written.upkeep()).checkpointed, false, 'written to, but the last checkpoint is recent')
  await run(idle, 'SELECT 1')
  await written.clock.advance(31_000)
  await idle.clock.advance(31_000)
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
  for (const start = Date.now(); Date.now() - start < HANG_MS && now.redo === written.redo;) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    now = await sinceCheckpoint(database)
  }
  t.not(now.redo, written.redo, 'the redo point moved without a pass being asked for')
})
