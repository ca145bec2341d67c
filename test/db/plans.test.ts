// How the database answers notifications/list: through an index of the person's
// notifications in their order, not by reading every notification of everyone,
// so a page costs the same however many notifications the others have received.
// The plan is the one PostgreSQL (or PGlite) makes for the very statement and
// parameters the app sent.
import t from 'tap'
import { CompiledQuery, sql, type LogEvent } from 'kysely'
import { build, createCompany, createPerson, tokenFor } from '../helper.js'

type Json = Record<string, unknown>

const sent: Array<{ sql: string, parameters: readonly unknown[] }> = []
const { app, db } = await build(t, {
  log: (event: LogEvent) => { sent.push({ sql: event.query.sql, parameters: event.query.parameters }) }
})
await app.ready()

/** Every node of a plan, depth first. */
function nodes (plan: Json): Json[] {
  const children = (plan.Plans ?? []) as Json[]
  return [plan, ...children.flatMap(nodes)]
}

t.test('a page of notifications/list reads the person\'s notifications through their index', async (t) => {
  const company = await createCompany(db)
  const reader = await createPerson(db, company.id)
  const others = await Promise.all(Array.from({ length: 50 }, () => createPerson(db, company.id)))
  // 300 of the reader's among 60,000 of the others, interleaved as they would arrive.
  await sql`
    INSERT INTO notifications (person_id, action, read, read_at, inserted_at)
    SELECT CASE WHEN i % 200 = 0 THEN ${reader.id}::uuid ELSE (${sql.val(others.map((o) => o.id))}::uuid[])[1 + i % 50] END,
      'project_description_changed', i % 3 = 0, CASE WHEN i % 3 = 0 THEN now() END, now() - i * interval '1 minute'
    FROM generate_series(1, 60000) i`.execute(db)
  await sql`ANALYZE notifications`.execute(db)

  const { token } = await tokenFor(db, reader.email)
  sent.length = 0
  const res = await app.inject({ method: 'GET', url: '/api/external/v1/notifications/list', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().notifications.length, 100, 'a full page')
  const list = sent.find((s) => /from "notifications"/.test(s.sql) && /order by/.test(s.sql))
  if (list === undefined) throw new Error(`no list statement among ${sent.length}`)

  const { rows: [row] } = await db.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${list.sql}`, [...list.parameters]))
  const raw = row!['QUERY PLAN']
  const plan = ((typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: Json }>)[0]!.Plan
  const onNotifications = nodes(plan).filter((n) => n['Relation Name'] === 'notifications' || String(n['Index Name'] ?? '').startsWith('notifications'))
  t.notOk(onNotifications.some((n) => n['Node Type'] === 'Seq Scan'), 'the table is not read whole')
  t.ok(onNotifications.some((n) => n['Index Name'] === 'notifications_person_id_inserted_at_idx'),
    `the person's index is used: ${onNotifications.map((n) => `${String(n['Node Type'])} ${String(n['Index Name'] ?? '')}`).join(', ')}`)
})
