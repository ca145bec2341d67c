// POST projects/update_parent_goal, projects/move_to_space and projects/delete:
// what each changes and records, the goal's and target space's 404s, Operately's
// permission tables (edit for the goal; full access and a visible space for a
// move; full access for a deletion), and a deleted project gone everywhere.
import t from '../../tap.js'
import { shortId, sluggedId } from '../../../src/ids.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, expectInvalidInput, notifyOf, projectActivities, projectRow, tokenFor } from '../../helper.js'

const { app, db } = await build(t)
const company = await createCompany(db)
const champion = await createPerson(db, company.id)
const subscriber = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [champion.id, subscriber.id])
const target = await createSpace(db, company.id, [champion.id], 'Target')
const other = await createCompany(db)
const foreignSpace = await createSpace(db, other.id)
const noGoal = { timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null, timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null }
const goal = await db.insertInto('goals').values({ company_id: company.id, space_id: space.id, name: 'Grow', ...noGoal }).returning(['id', 'name']).executeTakeFirstOrThrow()
const foreignGoal = await db.insertInto('goals').values({ company_id: other.id, space_id: foreignSpace.id, name: 'Theirs', ...noGoal }).returning('id').executeTakeFirstOrThrow()
const api = client(app, (await tokenFor(db, champion.email)).token)

async function project () {
  const p = await createProject(db, space, { access: { space: 70 } })
  await addContributor(db, p.id, champion.id, 'champion')
  const list = await db.insertInto('subscription_lists').values({ project_id: p.id }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('subscriptions').values({ subscription_list_id: list.id, person_id: subscriber.id, type: 'joined' }).execute()
  return p
}

t.test('update_parent_goal links, relinks nothing twice, unlinks; foreign goals are 404', async (t) => {
  const p = await project()
  const res = await api.project('update_parent_goal', { project_id: p.publicId, goal_id: sluggedId(goal.id, goal.name) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().success, true)
  t.equal(res.json().project.goal_id, sluggedId(goal.id, goal.name))
  t.equal((await api.get(p.publicId)).json().project.goal.name, 'Grow')
  t.equal((await api.project('update_parent_goal', { project_id: p.publicId, goal_id: goal.id })).statusCode, 200)
  const unlinked = await api.project('update_parent_goal', { project_id: p.publicId, goal_id: null })
  t.equal(unlinked.json().project.goal, null)
  const activities = await projectActivities(db, p.id)
  t.same(activities.map((a) => a.action), ['project_goal_connection', 'project_goal_connection'])
  t.match(activities[1]!.content, { goal_id: null, previous_goal_id: goal.id })
  t.equal((await db.selectFrom('notifications').select('id').where('project_id', '=', p.id).where('person_id', '=', subscriber.id).execute()).length, 2)
  for (const id of [shortId(foreignGoal.id), 'nope', shortId(p.id)]) {
    const bad = await api.project('update_parent_goal', { project_id: p.publicId, goal_id: id })
    t.equal(bad.statusCode, 404)
    t.match(bad.json(), { code: 'not_found', message: 'goal not found' })
  }
  expectInvalidInput(t, await api.project('update_parent_goal', { project_id: p.publicId }), '/goal_id')
  expectInvalidInput(t, await api.project('update_parent_goal', { project_id: p.publicId, goal_id: ' ' }), '/goal_id')
  t.equal((await projectActivities(db, p.id)).length, 2)
})

t.test('move_to_space moves, records, and keeps the project\'s levels; its own space records nothing', async (t) => {
  const p = await project()
  const same = await api.project('move_to_space', { project_id: p.publicId, space_id: shortId(space.id) })
  t.equal(same.statusCode, 200)
  t.equal((await projectActivities(db, p.id)).length, 0)
  const res = await api.project('move_to_space', { project_id: p.publicId, space_id: shortId(target.id) })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json()), ['project'])
  t.same(res.json().project.space, { id: shortId(target.id), name: 'Target' })
  t.equal((await projectRow(db, p.id)).space_id, target.id)
  const [activity] = await projectActivities(db, p.id)
  t.equal(activity!.action, 'project_moved')
  t.same(activity!.content, { old_space_id: space.id, new_space_id: target.id })
  for (const id of [shortId(foreignSpace.id), 'nope']) {
    const bad = await api.project('move_to_space', { project_id: p.publicId, space_id: id })
    t.equal(bad.statusCode, 404)
    t.match(bad.json(), { message: 'space not found' })
  }
  const hidden = await createSpace(db, company.id)
  t.equal((await api.project('move_to_space', { project_id: p.publicId, space_id: hidden.id })).statusCode, 404, 'a space one cannot see')
  expectInvalidInput(t, await api.project('move_to_space', { project_id: p.publicId, space_id: 3 }), '/space_id')
})

// Operately's move_to_space_test.exs, project table: full access needed.
const MOVE: Array<{ company: 0 | 40 | 70 | 100, space: 0 | 40 | 70 | 100, binding: 0 | 40 | 70 | 100, expected: number }> = [
  { company: 0, space: 0, binding: 0, expected: 404 },
  { company: 0, space: 0, binding: 40, expected: 403 },
  { company: 0, space: 0, binding: 70, expected: 403 },
  { company: 0, space: 0, binding: 100, expected: 200 },
  { company: 0, space: 40, binding: 0, expected: 403 },
  { company: 0, space: 70, binding: 0, expected: 403 },
  { company: 0, space: 100, binding: 0, expected: 200 },
  { company: 40, space: 0, binding: 0, expected: 403 },
  { company: 70, space: 0, binding: 0, expected: 403 },
  { company: 100, space: 0, binding: 0, expected: 200 }
]
for (const row of MOVE) {
  t.test(`move_to_space company=${row.company} space=${row.space} binding=${row.binding}: ${row.expected}`, async (t) => {
    const person = await createPerson(db, company.id)
    const from = await createSpace(db, company.id, [person.id])
    const to = await createSpace(db, company.id)
    await db.updateTable('spaces').set({ company_access: 10 }).where('id', '=', to.id).execute()
    const p = await createProject(db, from, { access: { company: row.company, space: row.space } })
    if (row.binding > 0) await addContributor(db, p.id, person.id, 'contributor', row.binding)
    const res = await client(app, (await tokenFor(db, person.email)).token).project('move_to_space', { project_id: p.publicId, space_id: shortId(to.id) })
    t.equal(res.statusCode, row.expected)
    t.equal((await projectRow(db, p.id)).space_id, row.expected === 200 ? to.id : from.id)
    // A mover whose only access was the old space's level is answered the project as it was.
    if (row.expected === 200 && row.space === 100) t.equal(res.json().project.space.id, shortId(from.id))
  })
}

// Operately's new-space table: view access to the target space.
const TARGET: Array<{ company: 0 | 10 | 40 | 70 | 100, member: 0 | 10 | 40 | 70 | 100 | null, expected: number }> = [
  { company: 0, member: null, expected: 404 },
  { company: 0, member: 40, expected: 200 },
  { company: 0, member: 100, expected: 200 },
  { company: 10, member: null, expected: 200 },
  { company: 40, member: null, expected: 200 },
  { company: 100, member: null, expected: 200 }
]
for (const row of TARGET) {
  t.test(`move_to_space target company=${row.company} member=${row.member ?? 'none'}: ${row.expected}`, async (t) => {
    const p = await project()
    const to = await createSpace(db, company.id)
    await db.updateTable('spaces').set({ company_access: row.company }).where('id', '=', to.id).execute()
    if (row.member !== null) await db.insertInto('space_members').values({ space_id: to.id, person_id: champion.id, access_level: row.member }).execute()
    const res = await api.project('move_to_space', { project_id: p.publicId, space_id: shortId(to.id) })
    t.equal(res.statusCode, row.expected)
  })
}

t.test('delete: answers the project as it was, then it is gone from get, list and notifications; its event queued', async (t) => {
  const p = await project()
  const webhook = await db.insertInto('webhooks').values({ company_id: company.id, url: 'https://hooks.example.com/z', events: ['project.deleted', 'project.renamed'], secret: 'whsec_x' })
    .returning('id').executeTakeFirstOrThrow()
  await api.updateName({ project_id: p.publicId, name: 'Doomed' })
  await notifyOf(db, [{ person_id: subscriber.id, project_id: p.id, action: 'project_renamed', author_id: champion.id }])
  const readerApi = client(app, (await tokenFor(db, subscriber.email)).token)
  const told = (await readerApi.listNotifications()).json().notifications.length

  const res = await api.project('delete', { project_id: p.publicId })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json()), ['project'])
  t.equal(res.json().project.name, 'Doomed')
  t.match(res.headers.etag, /^"/)
  t.equal((await api.get(p.publicId)).statusCode, 404)
  t.notOk((await api.list()).json().projects.some((x: { id: string }) => x.id === res.json().project.id))
  t.equal((await readerApi.listNotifications()).json().notifications.length, told - 1, 'its notifications are gone')
  t.equal((await api.project('delete', { project_id: p.publicId })).statusCode, 404, 'a second delete is 404')
  t.equal((await api.updateName({ project_id: p.publicId, name: 'x' })).statusCode, 404)
  const deliveries = await db.selectFrom('webhook_deliveries').select(['event_type']).where('webhook_id', '=', webhook.id).execute()
  t.same(deliveries.map((d) => d.event_type), ['project.deleted'], 'the rename\'s pending delivery went with the project; the deletion\'s stays')
  const activity = await db.selectFrom('activities').selectAll().where('action', '=', 'project_deleted').where('author_id', '=', champion.id).executeTakeFirstOrThrow()
  t.equal(activity.project_id, null)
  t.match(activity.content, { project_id: p.id, name: 'Doomed' })
  await db.deleteFrom('webhooks').where('id', '=', webhook.id).execute()
})

t.test('delete needs full access: an editor is 403, an outsider 404, If-Match 412', async (t) => {
  const p = await createProject(db, space, { access: { space: 70 } })
  const editor = client(app, (await tokenFor(db, subscriber.email)).token)
  t.equal((await editor.project('delete', { project_id: p.publicId })).statusCode, 403)
  const outsider = await createPerson(db, other.id)
  t.equal((await client(app, (await tokenFor(db, outsider.email)).token).project('delete', { project_id: p.publicId })).statusCode, 404)
  const admin = await createPerson(db, company.id, { isAdmin: true })
  const adminApi = client(app, (await tokenFor(db, admin.email)).token)
  t.equal((await adminApi.project('delete', { project_id: p.publicId }, { 'if-match': '"stale"' })).statusCode, 412)
  t.equal((await adminApi.project('delete', { project_id: p.publicId })).statusCode, 200)
  expectInvalidInput(t, await adminApi.project('delete', { project_id: p.publicId, extra: 1 }), '/extra')
})
