// A notification names its activity with the activity's own project and author,
// or none of the three (migrations/20261129100000_notification_activities.ts): one
// foreign key holds them, where a key on the activity and one on the project each
// checked a row of their own for every notification written. Refused: a project
// without its activity, a project or an author other than the activity's. A
// notification of nothing is kept. Deleting an activity, or its project, deletes
// its notifications. The migration names the notifications it cannot hold and
// changes nothing.
import t from '../tap.js'
import { sql } from 'kysely'
import * as migration from '../../migrations/20261129100000_notification_activities.js'
import { shortId } from '../../src/ids.js'
import { build, client, createProject, tokenFor, toldOfProject } from '../helper.js'

const { app, db } = await build(t)
await app.ready()

const { company, author, reader, space, project } = await toldOfProject(db)
const other = await createProject(db, space, { name: 'Another', access: { space: 70 } })

const activityOf = async (projectId: string) => await db.insertInto('activities')
  .values({ company_id: company.id, project_id: projectId, author_id: author.id, action: 'project_renamed', content: JSON.stringify({}) })
  .returning('id').executeTakeFirstOrThrow()
const notificationIds = async () => (await db.selectFrom('notifications').select('id').orderBy('id').execute()).map((n) => n.id)

t.test('notifications have two foreign keys: their person, and their activity with its project and author (MATCH FULL)', async (t) => {
  const { rows } = await sql<{ name: string, definition: string }>`
    SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
    WHERE conrelid = 'notifications'::regclass AND contype = 'f' ORDER BY conname`.execute(db)
  t.same(rows.map((r) => r.name), ['notifications_activity_fkey', 'notifications_person_id_fkey'])
  t.match(rows[0]!.definition, /^FOREIGN KEY \(activity_id, project_id, author_id\) REFERENCES activities\(id, project_id, author_id\) MATCH FULL ON DELETE CASCADE$/)
})

t.test('a notification that does not name its activity as it is is refused, and nothing is written', async (t) => {
  const activity = await activityOf(project.id)
  const before = await notificationIds()
  const refused: Array<[string, Record<string, string | null>]> = [
    ['a project without an activity', { project_id: project.id, activity_id: null, author_id: null }],
    ['a project and an author without an activity', { project_id: project.id, activity_id: null, author_id: author.id }],
    ['an activity without its project', { project_id: null, activity_id: activity.id, author_id: author.id }],
    ['an activity with another project', { project_id: other.id, activity_id: activity.id, author_id: author.id }],
    ['an activity with another author', { project_id: project.id, activity_id: activity.id, author_id: reader.id }]
  ]
  for (const [what, values] of refused) {
    await t.rejects(db.insertInto('notifications').values({ person_id: reader.id, action: 'project_renamed', ...values }).execute(),
      { code: '23503', constraint: 'notifications_activity_fkey' }, what)
  }
  t.same(await notificationIds(), before, 'nothing written')
  const [told] = await db.insertInto('notifications')
    .values([{ person_id: reader.id, action: 'project_renamed', project_id: project.id, activity_id: activity.id, author_id: author.id }])
    .returning('id').execute()
  const [plain] = await db.insertInto('notifications').values([{ person_id: reader.id, action: 'space_joined' }]).returning('id').execute()
  t.same(await notificationIds(), [...before, told!.id, plain!.id].sort(), 'the activity as it is, or nothing: both kept')
})

t.test('deleting an activity deletes its notifications; deleting a project, those of its activities', async (t) => {
  const gone = await createProject(db, space, { name: 'Going', access: { space: 70 } })
  const [first, second] = [await activityOf(gone.id), await activityOf(gone.id)]
  const notify = async (activityId: string) => (await db.insertInto('notifications')
    .values({ person_id: reader.id, action: 'project_renamed', project_id: gone.id, activity_id: activityId, author_id: author.id })
    .returning('id').executeTakeFirstOrThrow()).id
  const [a, b] = [await notify(first.id), await notify(second.id)]
  const kept = await notificationIds()
  await db.deleteFrom('activities').where('id', '=', first.id).execute()
  t.same(await notificationIds(), kept.filter((id) => id !== a), 'the activity\'s notification went with it')
  await db.deleteFrom('projects').where('id', '=', gone.id).execute()
  t.same(await notificationIds(), kept.filter((id) => id !== a && id !== b), 'the project\'s activities took theirs')
})

t.test('a description change notifies its subscribers of its activity, with its project and author', async (t) => {
  const mention = { type: 'mention', attrs: { id: shortId(reader.id), label: reader.full_name } }
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [mention] }] })
  const res = await client(app, (await tokenFor(db, author.email)).token).updateDescription({ project_id: shortId(project.id), description })
  t.equal(res.statusCode, 200)
  const sent = await db.selectFrom('notifications as n')
    .innerJoin('activities as a', 'a.id', 'n.activity_id')
    .where('a.action', '=', 'project_description_changed')
    .select(['n.person_id', 'n.project_id', 'n.author_id', 'a.project_id as activity_project', 'a.author_id as activity_author']).execute()
  t.same(sent, [{ person_id: reader.id, project_id: project.id, author_id: author.id, activity_project: project.id, activity_author: author.id }])
})

t.test('the migration names the notifications its key cannot hold, and changes nothing until they are mended', async (t) => {
  await migration.down(db)
  const [loose] = await db.insertInto('notifications').values([{ person_id: reader.id, action: 'project_renamed', project_id: project.id }]).returning('id').execute()
  await t.rejects(migration.up(db), /^1 notification\(s\) name a project or an author without an activity/)
  const { rows } = await sql<{ name: string }>`SELECT conname AS name FROM pg_constraint
    WHERE conrelid IN ('notifications'::regclass, 'activities'::regclass) AND conname IN ('notifications_activity_fkey', 'activities_id_project_id_author_id_key',
      'notifications_activity_id_fkey', 'notifications_project_id_fkey', 'notifications_author') ORDER BY conname`.execute(db)
  t.same(rows.map((r) => r.name), ['notifications_activity_id_fkey', 'notifications_author', 'notifications_project_id_fkey'], 'the keys of before, as they were')
  await db.deleteFrom('notifications').where('id', '=', loose!.id).execute()
  await migration.up(db)
  const { rows: after } = await sql<{ name: string }>`SELECT conname AS name FROM pg_constraint WHERE conrelid = 'notifications'::regclass AND contype = 'f' ORDER BY conname`.execute(db)
  t.same(after.map((r) => r.name), ['notifications_activity_fkey', 'notifications_person_id_fkey'], 'mended, it migrates')
})
