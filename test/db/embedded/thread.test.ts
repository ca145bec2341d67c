// The embedded database runs in a thread of its own: the thread serving HTTP keeps
// answering while PGlite works, and what the embedded database guaranteed on that
// thread still holds across the two: a transaction is never interleaved with
// another connection's statements (nor undone with them), errors keep their
// SQLSTATE and map to the API's statuses, dates stay strings, a named statement is
// parsed once and answers as an unnamed one, scripts of several statements run, and
// closing lets what was sent finish before it refuses more. Runs on PGlite
// whatever DATABASE_URL says.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { AbortedTransactionError, sql } from 'kysely'
import t from '../../tap.js'
import type { FastifyError } from 'fastify'
import { createDb, embeddedDatabase, type Db } from '../../../src/db/index.js'
import { cacheStatements, statement } from '../../../src/db/statements.js'
import { EmbeddedDatabase } from '../../../src/db/embedded/index.js'
import { EMBEDDED_THREAD_NAME } from '../../../src/db/embedded/thread-name.js'
import { toApiError } from '../../../src/http/errors.js'
import { createMigratedDb, databaseOptions, initdbSnapshot } from '../../database.js'
import { send } from '../../http.js'
import { build } from '../../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const dataDir = await mkdtemp(path.join(tmpdir(), 'embedded-thread-test-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))

/** An embedded database in memory, closed when the test ends: each test makes the tables it uses. */
async function inMemory (t: Tap, env: Record<string, string> = {}): Promise<Db> {
  const db = await createDb({ ...databaseOptions(env), dataDir: null }, { embedded: { loadDataDir: await initdbSnapshot() } })
  t.teardown(() => db.destroy())
  return db
}

let shared: Promise<Db> | undefined
/** One in-memory database for the tests that need nothing of their own (PGlite takes seconds to start). */
async function sharedInMemory (): Promise<Db> {
  shared ??= inMemory(t)
  return await shared
}

/** A promise and what settles it, for stepping a transaction from outside. */
function gate (): { opened: Promise<void>, open: () => void } {
  let open = () => {}
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { opened, open }
}

t.test('HTTP is answered while the embedded database runs a long statement; statements wait behind it', async (t) => {
  const dir = path.join(dataDir, 'long-statement')
  const db = await createMigratedDb(dir)
  t.teardown(() => db.destroy())
  // Runs until a file named `release` appears in the data directory (a bound
  // keeps a blocked test from spinning forever): nothing inside the database can
  // end it, only this process writing the file.
  await sql`CREATE FUNCTION test_wait_for_file (name text, bound interval) RETURNS text LANGUAGE plpgsql AS $$
    DECLARE
      until timestamptz := clock_timestamp() + bound;
    BEGIN
      LOOP
        IF EXISTS (SELECT 1 FROM pg_ls_dir('.') AS f WHERE f = name) THEN RETURN 'released'; END IF;
        IF clock_timestamp() > until THEN RETURN 'gave up'; END IF;
      END LOOP;
    END $$`.execute(db)
  const { app } = await build(t, { db })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as { port: number }).port

  const events: string[] = []
  const long = sql<{ outcome: string }>`SELECT test_wait_for_file('release', interval '30 seconds') AS outcome`.execute(db)
    .then((result) => { events.push('long statement done'); return result.rows[0]?.outcome })
  const behind = sql<{ one: number }>`SELECT 1 AS one`.execute(db)
    .then((result) => { events.push('statement behind it done'); return result.rows[0]?.one })
  for (let i = 0; i < 3; i++) {
    const live = await send(port, 'GET', '/health/live')
    events.push(`live ${live.status}`)
  }
  await writeFile(path.join(dir, 'release'), '')
  t.equal(await long, 'released', 'the statement ran until this process, having answered, released it')
  t.equal(await behind, 1)
  t.same(events, ['live 200', 'live 200', 'live 200', 'long statement done', 'statement behind it done'],
    'every answer came while the statement ran; the next statement ran after it')
})

t.test('a transaction runs whole: other connections\' statements and scripts wait for it, and its rollback takes none of them', async (t) => {
  const db = await sharedInMemory()
  await sql`CREATE TABLE tx_test (id int PRIMARY KEY)`.execute(db)
  const events: string[] = []
  const wrote = gate()
  const next = gate()
  let outside: Promise<unknown> = Promise.resolve()
  const transaction = db.transaction().execute(async (trx) => {
    await sql`INSERT INTO tx_test VALUES (1)`.execute(trx)
    wrote.open()
    await next.opened
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM tx_test`.execute(trx)
    events.push(`transaction sees ${rows[0]?.n} row(s)`)
    throw new Error('changed its mind')
  }).catch((error: Error) => { events.push(`transaction rolled back: ${error.message}`) })

  await wrote.opened
  // Sent while the transaction is open, before its next statement.
  outside = Promise.all([
    sql`INSERT INTO tx_test VALUES (2)`.execute(db).then(() => { events.push('other connection wrote') }),
    embeddedDatabase(db)!.exec('INSERT INTO tx_test VALUES (3); INSERT INTO tx_test VALUES (4)').then(() => { events.push('script ran') })
  ])
  next.open()
  await transaction
  await outside
  t.same(events.slice(0, 2), ['transaction sees 1 row(s)', 'transaction rolled back: changed its mind'],
    'the transaction saw its own write only')
  t.same(events.slice(2).sort(), ['other connection wrote', 'script ran'], 'the others ran after it ended, not inside it')
  const { rows } = await sql<{ id: number }>`SELECT id FROM tx_test ORDER BY id`.execute(db)
  t.same(rows.map((r) => r.id), [2, 3, 4], 'the rollback undid the transaction\'s write only')
})

t.test('a commit after a failed statement is refused, and nothing of the transaction stays', async (t) => {
  const db = await sharedInMemory()
  await sql`CREATE TABLE aborted_test (id int PRIMARY KEY)`.execute(db)
  await t.rejects(db.transaction().execute(async (trx) => {
    await sql`INSERT INTO aborted_test VALUES (1)`.execute(trx)
    await sql`INSERT INTO aborted_test VALUES (1)`.execute(trx).catch(() => {})
  }), AbortedTransactionError)
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM aborted_test`.execute(db)
  t.equal(rows[0]?.n, 0)
})

t.test('a connection given back with its transaction open is rolled back, and the database goes on', async (t) => {
  const db = await sharedInMemory()
  await sql`CREATE TABLE left_open (id int)`.execute(db)
  await db.connection().execute(async (connection) => {
    await sql`BEGIN`.execute(connection)
    await sql`INSERT INTO left_open VALUES (1)`.execute(connection)
  })
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM left_open`.execute(db)
  t.equal(rows[0]?.n, 0)
})

t.test('a script that leaves a transaction open is rolled back and refused; the database goes on', async (t) => {
  const db = await sharedInMemory()
  await sql`CREATE TABLE script_test (id int)`.execute(db)
  await t.rejects(embeddedDatabase(db)!.exec('BEGIN; INSERT INTO script_test VALUES (1)'), {
    message: 'a script must not leave a transaction open; it was rolled back'
  })
  const results = await embeddedDatabase(db)!.exec('INSERT INTO script_test VALUES (2); SELECT id FROM script_test')
  t.same(results.at(-1)?.rows, [{ id: 2 }])
})

const divide = (db: Db, by: number) => db.selectNoFrom(sql<number>`1 / ${by}`.as('quotient')).execute()
const day = (db: Db, value: string) => db.selectNoFrom(sql<string>`${value}::date`.as('day')).execute()

t.test('statements built with parameters have the same values, results and errors as raw ones', async (t) => {
  const db = await sharedInMemory()
  for (let i = 0; i < 3; i++) t.same(await day(db, '2024-02-29'), [{ day: '2024-02-29' }], 'a date stays a YYYY-MM-DD string')
  t.same((await sql<{ day: string }>`SELECT ${'2024-02-29'}::date AS day`.execute(db)).rows, [{ day: '2024-02-29' }], 'and so on a raw statement')
  t.same(await divide(db, 4), [{ quotient: 0 }])

  const built = await divide(db, 0).catch((error: unknown) => error)
  const raw = await sql`SELECT 1 / ${0} AS quotient`.execute(db).catch((error: unknown) => error)
  for (const [how, error] of [['built', built], ['raw', raw]] as const) {
    t.match(error, { code: '22012', message: 'division by zero', severity: 'ERROR' }, `${how}: the SQLSTATE and PostgreSQL's fields`)
    t.match(toApiError(error as FastifyError).body(), { statusCode: 400, code: 'invalid_input' }, `${how}: a 400, as on PostgreSQL`)
  }
  await sql`CREATE TABLE unique_test (id int PRIMARY KEY)`.execute(db)
  await sql`INSERT INTO unique_test VALUES (1)`.execute(db)
  await t.rejects(sql`INSERT INTO unique_test VALUES (1)`.execute(db), { code: '23505', constraint: 'unique_test_pkey' })
})

t.test('a named statement is parsed once, then only bound: the rows and errors of an unnamed one, and the database goes on after a failure', async (t) => {
  const database = await EmbeddedDatabase.open(null, { loadDataDir: await initdbSnapshot() })
  t.teardown(() => database.close())
  const session = database.session()
  const query = (text: string, values: unknown[], name?: string) => database.query(session, text, values, name)
  const kept = async () => (await query('SELECT name FROM pg_prepared_statements ORDER BY name', [])).rows
  const text = 'SELECT $1::int / $2::int AS quotient, $3::date AS day, $4::jsonb AS doc, $5::text[] AS list, $6::bytea AS bytes, $7::boolean AS yes'
  const values = (by: number) => [7, by, '2024-02-29', JSON.stringify({ a: [1, 'ü "q"'], n: null }), ['x', 'y,z'], Buffer.from([0, 255]), true]
  const unnamed = await query(text, values(2))
  t.same(unnamed.rows, [{ quotient: 3, day: '2024-02-29', doc: { a: [1, 'ü "q"'], n: null }, list: ['x', 'y,z'], bytes: new Uint8Array([0, 255]), yes: true }])
  for (let i = 0; i < 3; i++) t.same(await query(text, values(2), 'named_test'), unnamed, `run ${i + 1}: as unnamed`)
  t.same(await kept(), [{ name: 'named_test' }], 'parsed once, and kept under its name')

  const error = (by: number, name?: string) => query(text, values(by), name).catch((e: unknown) => e)
  t.same(await error(0, 'named_test'), await error(0), 'a failure is the unnamed statement\'s, SQLSTATE and fields')
  t.same(await query(text, values(2), 'named_test'), unnamed, 'and the next run goes on')
  for (let i = 0; i < 2; i++) await t.rejects(query('SELEC 1', [], 'broken'), { code: '42601' }, 'a statement that does not parse is refused each time')
  t.same(await kept(), [{ name: 'named_test' }], 'and is not kept')

  // In a transaction: a failure aborts it, as unnamed, and a rollback ends it.
  await query('BEGIN', [])
  await t.rejects(query(text, values(0), 'named_test'), { code: '22012' })
  await t.rejects(query(text, values(2), 'named_test'), { code: '25P02' }, 'the transaction is aborted')
  await query('ROLLBACK', [])
  t.same(await query(text, values(2), 'named_test'), unnamed, 'after the rollback, as before')
})

t.test('with DB_STATEMENT_CACHE, the statements made once run named on the embedded database; without it, unnamed', async (t) => {
  const db = await inMemory(t)
  t.teardown(() => cacheStatements(true))
  const byId = statement(['n'], (db, { n }: { n: number }) => db.selectNoFrom(sql<number>`${n}::int + 1`.as('next')))
  const names = async () => (await sql<{ name: string }>`SELECT name FROM pg_prepared_statements`.execute(db)).rows.map((r) => r.name)
  t.same(await byId(db, { n: 1 }), [{ next: 2 }])
  t.same(await byId(db, { n: 2 }), [{ next: 3 }])
  const [name] = await names()
  t.match(name, /^s[\w-]{24}$/, 'one statement, under the name statements.ts gave it')
  t.same(await names(), [name])
  cacheStatements(false)
  const other = statement(['n'], (db, { n }: { n: number }) => db.selectNoFrom(sql<number>`${n}::int + 2`.as('next')))
  t.same(await other(db, { n: 1 }), [{ next: 3 }])
  t.same(await names(), [name], 'none more with the cache off')
})

t.test('json and jsonb values, alone and in arrays, come back parsed, from a statement with parameters, a raw one and a script', async (t) => {
  const db = await sharedInMemory()
  const doc = { type: 'doc', content: [{ type: 'text', text: 'ü "quoted" \\ \u2028' }], n: 1.5, none: null }
  const want = { jsonb: doc, json: doc, jsonbs: [doc, null, null], nothing: null }
  const text = JSON.stringify(doc)
  t.same(await db.selectNoFrom([
    sql<unknown>`${text}::jsonb`.as('jsonb'),
    sql<unknown>`${text}::json`.as('json'),
    sql<unknown>`array[${text}::jsonb, 'null'::jsonb, NULL]`.as('jsonbs'),
    sql<unknown>`NULL::jsonb`.as('nothing')
  ]).execute(), [want], 'with parameters')
  const literal = text.replaceAll("'", "''")
  t.same((await sql.raw(`SELECT '${literal}'::jsonb AS jsonb, '${literal}'::json AS json,
    array['${literal}'::jsonb, 'null'::jsonb, NULL] AS jsonbs, NULL::jsonb AS nothing`).execute(db)).rows, [want], 'raw')
  const results = await embeddedDatabase(db)!.exec(`SELECT 1 AS one; SELECT '${literal}'::jsonb AS jsonb, '${literal}'::json AS json,
    array['${literal}'::jsonb, 'null'::jsonb, NULL] AS jsonbs, NULL::jsonb AS nothing`)
  t.same(results.map((r) => r.rows), [[{ one: 1 }], [want]], 'from a script')
})

t.test('a statement that fails runs once it can', async (t) => {
  const db = await sharedInMemory()
  const countLater = (min: number) => db.selectNoFrom(sql<number>`(SELECT count(*)::int FROM later_table WHERE id >= ${min})`.as('n')).execute()
  await t.rejects(countLater(0), { code: '42P01' })
  await sql`CREATE TABLE later_table (id int)`.execute(db)
  await sql`INSERT INTO later_table VALUES (1), (2)`.execute(db)
  t.same(await countLater(2), [{ n: 1 }])
})

/** The threads of this process that Linux shows under `name`. */
function threadsNamed (name: string): string[] {
  return readdirSync('/proc/self/task').filter((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === name
    } catch {
      return false // the thread ended meanwhile
    }
  })
}

t.test('the database\'s thread is named, so that top -H, ps -L and the bench tell it from the others', { skip: existsSync('/proc/self/task') ? false : 'no /proc/<pid>/task here' }, async (t) => {
  const before = threadsNamed(EMBEDDED_THREAD_NAME)
  const db = await createDb({ ...databaseOptions(), dataDir: null })
  await sql`SELECT 1`.execute(db)
  const opened = threadsNamed(EMBEDDED_THREAD_NAME)
  t.equal(opened.length, before.length + 1, 'one more thread of that name while the database is open')
  t.notOk(opened.includes(String(process.pid)), 'not the main thread')
  await db.destroy()
  t.same(threadsNamed(EMBEDDED_THREAD_NAME), before, 'and it is gone once the database is closed')
})

t.test('closing lets the statements already sent finish and releases the directory; later ones are a 503', async (t) => {
  const dir = path.join(dataDir, 'close')
  const database = await EmbeddedDatabase.open(dir)
  await database.query(database.session(), 'CREATE TABLE close_test (id int PRIMARY KEY)', [])
  const writes = Array.from({ length: 20 }, (_, i) => database.query(database.session(), 'INSERT INTO close_test VALUES ($1)', [i]))
  await database.close()
  t.equal((await Promise.allSettled(writes)).filter((w) => w.status === 'fulfilled').length, 20, 'every write sent before closing succeeded')
  t.notOk(existsSync(path.join(dir, 'projects-api.lock')), 'the lock is released')
  const refused = await database.query(database.session(), 'SELECT 1', []).catch((error: unknown) => error)
  t.match(refused, { code: '57P01', message: 'the embedded database is closed' })
  t.match(toApiError(refused as FastifyError).body(), { statusCode: 503, code: 'unavailable' })

  const again = await createDb(databaseOptions({ DATA_DIR: dir }))
  t.same((await sql<{ n: number }>`SELECT count(*)::int AS n FROM close_test`.execute(again)).rows, [{ n: 20 }], 'all of them are on disk')

  // Through Kysely a statement may still be on its way when the database closes:
  // it is refused (a 503), never half done.
  const more = Array.from({ length: 20 }, (_, i) => sql`INSERT INTO close_test VALUES (${100 + i})`.execute(again))
  const settled = Promise.allSettled(more)
  await again.destroy()
  const outcomes = await settled
  const done = outcomes.filter((w) => w.status === 'fulfilled').length
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') t.match(outcome.reason, { code: '57P01' }, 'refused as closed')
  }
  const last = await createDb(databaseOptions({ DATA_DIR: dir }))
  t.teardown(() => last.destroy())
  t.same((await sql<{ n: number }>`SELECT count(*)::int AS n FROM close_test`.execute(last)).rows, [{ n: 20 + done }], `the ${done} that succeeded are on disk, nothing else`)
})
