// The rows every change writes get time-ordered ids, UUID version 7
// (migrations/20261130000000_time_ordered_ids.ts): an activity, a webhook delivery,
// and a description change's notifications, which it writes without a draw from
// the random source for each. An id's first 48 bits are its statement's time in
// milliseconds, so a later statement's ids sort after an earlier one's; the rest is
// random but for the version and variant bits. A row's default id is an expression
// the planner writes into the statement (migrations/20261130100000_inlined_time_ordered_ids.ts),
// with the fraction of the millisecond after the version. The migrations go down to
// random ids and up again.
import t from '../tap.js'
import { sql } from 'kysely'
import * as migration from '../../migrations/20261130000000_time_ordered_ids.js'
import * as inlined from '../../migrations/20261130100000_inlined_time_ordered_ids.js'
import { shortId } from '../../src/ids.js'
import type { Db } from '../../src/db/index.js'
import { build, client, createPerson, tokenFor, toldOfProject } from '../helper.js'

const { app, db } = await build(t)
await app.ready()

const { company, author, reader, space, project } = await toldOfProject(db)

const hex = (id: string) => id.replaceAll('-', '')
/** The id's version (the 13th hex digit) and whether its variant is RFC 9562's (10 in the 17th digit's top bits). */
const version = (id: string) => ({ version: Number.parseInt(hex(id)[12]!, 16), rfc: (Number.parseInt(hex(id)[16]!, 16) & 0b1100) === 0b1000 })
/** The milliseconds of a version 7 id's first 48 bits. */
const millis = (id: string) => Number.parseInt(hex(id).slice(0, 12), 16)
const now = async (db: Db) => (await sql<{ ms: string }>`SELECT floor(extract(epoch FROM statement_timestamp()) * 1000)::int8::text AS ms`.execute(db)).rows[0]!.ms

t.test('time_ordered_uuid: the statement\'s milliseconds, then the random bytes given with the version and variant set', async (t) => {
  // 18 bytes: the 7th (0xf6) and the 9th (0xc8) take the version and the variant.
  const random = Buffer.from('001122334455f677c899aabbccddeeff0011', 'hex')
  const { rows: [row] } = await sql<{ id: string, ms: string }>`SELECT time_ordered_uuid(${random})::text AS id,
    floor(extract(epoch FROM statement_timestamp()) * 1000)::int8::text AS ms`.execute(db)
  t.equal(millis(row!.id), Number(row!.ms), 'the first 48 bits: the statement\'s time in ms')
  t.equal(hex(row!.id).slice(12), '76778899aabbccddeeff', 'version 7 over 0xf6\'s low half, variant 10 over 0xc8\'s low six bits, the rest of the first 16 bytes as given')
  t.same(version(row!.id), { version: 7, rfc: true })
  await t.rejects(sql`SELECT time_ordered_uuid(${Buffer.alloc(8)})`.execute(db), { code: '2202E' }, 'fewer than 16 bytes: an error, not a short id')
})

t.test('time_ordered_uuid(): the statement\'s milliseconds, the version, the fraction of the millisecond, then the variant and random bits', async (t) => {
  const { rows: [row] } = await sql<{ a: string, b: string, ticks: string }>`SELECT time_ordered_uuid()::text AS a, time_ordered_uuid()::text AS b,
    floor(extract(epoch FROM statement_timestamp()) * 4096000)::int8::text AS ticks`.execute(db)
  // The statement's time in 1/4096 ms: 48 bits of milliseconds, then 12 of their fraction.
  const ticks = BigInt(row!.ticks).toString(16).padStart(15, '0')
  for (const id of [row!.a, row!.b]) {
    t.same(version(id), { version: 7, rfc: true })
    t.equal(hex(id).slice(0, 12) + hex(id).slice(13, 16), ticks, 'the milliseconds, then after the version the fraction of the millisecond')
  }
  t.not(hex(row!.a).slice(16), hex(row!.b).slice(16), 'two in one statement: the same time, different random bits')
})

t.test('activities, notifications and webhook deliveries default to time-ordered ids, made in the statement', async (t) => {
  const { rows } = await sql<{ table: string, fallback: string }>`SELECT c.relname AS table, pg_get_expr(d.adbin, d.adrelid) AS fallback
    FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
    WHERE a.attname = 'id' AND c.relname IN ('activities', 'notifications', 'webhook_deliveries') ORDER BY c.relname`.execute(db)
  t.same(rows, ['activities', 'notifications', 'webhook_deliveries'].map((table) => ({ table, fallback: 'time_ordered_uuid()' })))
  // A call the planner cannot inline is a function run: before PostgreSQL 18 its body
  // parsed, analysed and planned again at every statement.
  for (const { table } of rows) {
    const { rows: plan } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN (VERBOSE) INSERT INTO ${sql.table(table)} DEFAULT VALUES`.execute(db)
    const text = plan.map((line) => line['QUERY PLAN']).join('\n')
    t.match(text, /gen_random_uuid\(\)/, `${table}: the default is in the plan`)
    t.notMatch(text, /time_ordered_uuid/, `${table}: written in place, not called`)
  }
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    const before = Number(await now(db))
    const { id } = await db.insertInto('activities')
      .values({ company_id: company.id, project_id: project.id, author_id: author.id, action: 'project_renamed', content: JSON.stringify({}) })
      .returning('id').executeTakeFirstOrThrow()
    t.same(version(id), { version: 7, rfc: true })
    t.ok(millis(id) >= before && millis(id) <= Number(await now(db)), 'made at its statement\'s time')
    ids.push(id)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  t.same([...ids].sort(), ids, 'each later than the one before')
})

t.test('a description change writes its notifications with time-ordered ids, each its own, later than the last change\'s', async (t) => {
  const others = await Promise.all([1, 2, 3].map(async () => await createPerson(db, company.id)))
  await db.insertInto('space_members').values(others.map((p) => ({ space_id: space.id, person_id: p.id }))).execute()
  const mentions = [reader, ...others].map((p) => ({ type: 'mention', attrs: { id: shortId(p.id), label: p.full_name } }))
  const change = async (text: string) => {
    const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }, ...mentions] }] })
    const before = Number(await now(db))
    const res = await client(app, (await tokenFor(db, author.email)).token).updateDescription({ project_id: shortId(project.id), description })
    t.equal(res.statusCode, 200)
    const { id: activity } = await db.selectFrom('activities').select('id').where('project_id', '=', project.id)
      .where('action', '=', 'project_description_changed').orderBy('inserted_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow()
    const written = await db.selectFrom('notifications').select(['id', 'person_id']).where('activity_id', '=', activity).execute()
    t.same(written.map((n) => n.person_id).sort(), [reader, ...others].map((p) => p.id).sort(), 'the four mentioned')
    for (const { id } of written) {
      t.same(version(id), { version: 7, rfc: true })
      t.ok(millis(id) >= before && millis(id) <= Number(await now(db)), 'made at the change\'s time')
    }
    t.same(version(activity), { version: 7, rfc: true }, 'and the activity\'s')
    // All but the first 48 bits, the time (which is the statement's, not this one's).
    const { rows: [derived] } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications n WHERE n.activity_id = ${activity}
      AND substring(uuid_send(n.id) FROM 7) = substring(uuid_send(time_ordered_uuid(sha256(uuid_send(n.activity_id) || uuid_send(n.person_id)))) FROM 7)`.execute(db)
    t.equal(derived!.n, written.length, 'no draw from the random source for each: the random bits are the activity\'s and the person\'s ids hashed')
    return written.map((n) => n.id)
  }
  const first = await change('First')
  await new Promise((resolve) => setTimeout(resolve, 2))
  const second = await change('Second')
  t.equal(new Set([...first, ...second]).size, 8, 'no two alike, for the same people twice')
  t.ok(second.every((id) => first.every((earlier) => id > earlier)), 'every id of the second change sorts after every one of the first')
})

t.test('the migrations go down to random ids and up again', async (t) => {
  const insert = async () => (await db.insertInto('activities')
    .values({ company_id: company.id, project_id: project.id, author_id: author.id, action: 'project_renamed', content: JSON.stringify({}) })
    .returning('id').executeTakeFirstOrThrow()).id
  const functions = async () => (await sql<{ args: string }>`SELECT pg_get_function_identity_arguments(oid) AS args FROM pg_proc
    WHERE proname = 'time_ordered_uuid' ORDER BY 1`.execute(db)).rows.map((r) => r.args)
  await inlined.down(db)
  t.same(version(await insert()), { version: 7, rfc: true }, 'the inlined default down: still version 7, by the call')
  t.same(await functions(), ['random bytea'], 'the inlined default down: time_ordered_uuid() is gone')
  await migration.down(db)
  t.same(version(await insert()), { version: 4, rfc: true }, 'down: version 4')
  t.same(await functions(), [], 'down: the function is gone')
  await migration.up(db)
  await inlined.up(db)
  const ordered = await insert()
  t.same(version(ordered), { version: 7, rfc: true }, 'up again: version 7')
  t.same(await functions(), ['', 'random bytea'], 'up again: both')
})
