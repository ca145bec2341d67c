// A notification keeps its activity's author (migrations/20261129000000_notification_authors.ts):
// the migration gives the notifications already there their activity's author, a
// description change writes its author on each notification it sends, an insert
// that names an activity without its author fails (since
// migrations/20261129100000_notification_activities.ts, by the key that holds the
// activity, its project and its author together), and notifications/list shows
// the author it keeps, reading neither the activity nor anything of it.
import t from '../tap.js'
import { sql, type LogEvent } from 'kysely'
import * as migration from '../../migrations/20261129000000_notification_authors.js'
import * as activities from '../../migrations/20261129100000_notification_activities.js'
import { shortId } from '../../src/ids.js'
import { build, client, tokenFor, toldOfProject } from '../helper.js'

const statements: string[] = []
const { app, db } = await build(t, { log: (event: LogEvent) => { statements.push(event.query.sql) } })
await app.ready()

const { company, author, reader, project } = await toldOfProject(db)
const activity = await db.insertInto('activities')
  .values({ company_id: company.id, project_id: project.id, author_id: author.id, action: 'project_renamed', content: JSON.stringify({}) })
  .returning('id').executeTakeFirstOrThrow()

t.test('the migration gives each notification with an activity that activity\'s author, and none to one without', async (t) => {
  // The key that now holds the author to its activity comes after, and goes first.
  await activities.down(db)
  await migration.down(db)
  const [told, plain] = await sql<{ id: string }>`INSERT INTO notifications (person_id, project_id, activity_id, action)
    VALUES (${reader.id}::uuid, ${project.id}::uuid, ${activity.id}::uuid, 'project_renamed'), (${reader.id}::uuid, NULL, NULL, 'project_created')
    RETURNING id`.execute(db).then((r) => r.rows)
  await migration.up(db)
  const rows = await db.selectFrom('notifications').select(['id', 'author_id']).where('id', 'in', [told!.id, plain!.id]).execute()
  t.equal(rows.find((r) => r.id === told!.id)?.author_id, author.id, 'the activity\'s author')
  t.equal(rows.find((r) => r.id === plain!.id)?.author_id, null, 'no activity, no author')
  await db.deleteFrom('notifications').where('id', 'in', [told!.id, plain!.id]).execute()
  await activities.up(db)
})

t.test('a notification that names an activity without its author is refused, and nothing is written', async (t) => {
  const before = await db.selectFrom('notifications').select('id').execute()
  await t.rejects(db.insertInto('notifications')
    .values({ person_id: reader.id, project_id: project.id, activity_id: activity.id, action: 'project_renamed' }).execute(),
  /notifications_activity_fkey/)
  t.equal((await db.selectFrom('notifications').select('id').execute()).length, before.length)
})

t.test('a description change writes its author on every notification it sends; the list shows that author from the notification itself', async (t) => {
  const writer = (await tokenFor(db, author.email)).token
  const mention = { type: 'mention', attrs: { id: shortId(reader.id), label: reader.full_name } }
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [mention] }] })
  const res = await client(app, writer).updateDescription({ project_id: shortId(project.id), description })
  t.equal(res.statusCode, 200)
  const sent = await db.selectFrom('notifications').select(['person_id', 'author_id', 'activity_id']).where('project_id', '=', project.id).execute()
  t.same(sent.map((n) => [n.person_id, n.author_id]), [[reader.id, author.id]], 'the reader, told by the author')
  const { author_id: activityAuthor } = await db.selectFrom('activities').select('author_id').where('id', '=', sent[0]!.activity_id!).executeTakeFirstOrThrow()
  t.equal(sent[0]!.author_id, activityAuthor, 'the same author as its activity')

  statements.length = 0
  const list = await app.inject({ method: 'GET', url: '/api/external/v1/notifications/list', headers: { authorization: `Bearer ${(await tokenFor(db, reader.email)).token}` } })
  t.equal(list.statusCode, 200)
  t.same(list.json().notifications.map((n: { author: { id: string } | null }) => n.author?.id), [shortId(author.id)])
  const page = statements.find((s) => /from "notifications"/.test(s) && /order by/.test(s))
  t.ok(page, 'the page\'s statement was sent')
  t.match(page!, /"au"\."id" = "n"\."author_id"/, 'the author is the notification\'s own')
  t.match(page!, /left join "activities" as "a" on "a"\."id" = "n"\."activity_id"/, 'the nested activity is read by its key alone')
})
