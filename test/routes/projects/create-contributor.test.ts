// POST /api/external/v1/projects/create_contributor: the binding, its subscription,
// the notification of the person added, the grant within the caller's own, who may.
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, projectActivities, tokenFor } from '../../helper.js'
import { contributorsFixture } from './contributors-support.js'
import { callerWithLevels, deliveries, expect400, notified, permissionTable, post } from './lifecycle-support.js'

const { app, db } = await build(t)
const f = await contributorsFixture(db)
const body = (p: { publicId: string }, extra: Record<string, unknown> = {}) =>
  ({ project_id: p.publicId, person_id: shortId(f.person.id), responsibility: ' Runs the launch ', permissions: 'edit_access', role: 'contributor', ...extra })

t.test('adds the contributor: the binding, the answer, the subscription, the record, the notification', async (t) => {
  const p = await f.project()
  const res = await post(app, f.token, 'create_contributor', body(p))
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  const { contributor, project } = res.json()
  t.same(Object.keys(res.json()), ['contributor', 'project'])
  const row = (await f.bindings(p.id)).find((b) => b.person_id === f.person.id)!
  t.same(contributor, { id: shortId(row.id), role: 'contributor', responsibility: 'Runs the launch', access_level: 70, person: { id: shortId(f.person.id), full_name: 'Pat Person', email: f.person.email, title: null, avatar_url: null, type: 'human' } })
  t.same(project.contributors.find((c: { id: string }) => c.id === contributor.id), contributor, 'the project shows it')
  t.match(row, { role: 'contributor', responsibility: 'Runs the launch', access_level: 70 })
  const subscription = await db.selectFrom('subscriptions as s').innerJoin('subscription_lists as l', 'l.id', 's.subscription_list_id')
    .where('l.project_id', '=', p.id).where('s.person_id', '=', f.person.id).select(['s.type', 's.canceled']).executeTakeFirst()
  t.same(subscription, { type: 'invited', canceled: false })
  const [activity, ...more] = await projectActivities(db, p.id)
  t.equal(more.length, 0)
  t.match(activity, { action: 'project_contributor_addition', content: { person_id: f.person.id, contributor_id: row.id, role: 'contributor' } })
  const events = (await deliveries(db, f.hook.id, 'project.contributor_added')).filter((e) => e.event_id === activity!.id)
  t.equal(events.length, 1)
  t.same(await notified(db, activity!.id), [f.person.id], 'the person added')
  t.equal((await tokenFor(db, f.person.email)) !== undefined, true)
})

t.test('role: a reviewer when the project has none; not a second champion; without a role, a contributor', async (t) => {
  const p = await f.project()
  const reviewer = await post(app, f.token, 'create_contributor', body(p, { role: 'reviewer' }))
  t.equal(reviewer.statusCode, 200)
  t.equal(reviewer.json().project.reviewer.full_name, 'Pat Person')
  t.equal(reviewer.json().contributor.access_level, 100)
  expect400(t, await post(app, f.token, 'create_contributor', body(p, { person_id: shortId(f.other.id), role: 'champion' })), /champion already/)
  const { role: _, ...noRole } = body(p, { person_id: shortId(f.other.id) })
  const plain = await post(app, f.token, 'create_contributor', noRole)
  t.equal(plain.statusCode, 200)
  t.equal(plain.json().contributor.role, 'contributor')
  t.equal((await post(app, f.token, 'create_contributor', body(await f.project(), { role: null }))).statusCode, 200, 'null: a contributor')
})

t.test('bad input is 400 and writes nothing; read-only 403; stale If-Match 412; more than the caller has 403', async (t) => {
  const p = await f.project()
  await addContributor(db, p.id, f.other.id, 'contributor', 40)
  const before = await f.bindings(p.id)
  for (const extra of [
    { person_id: shortId(f.other.id) }, { person_id: shortId(f.suspended.id) }, { person_id: shortId(f.foreigner.id) }, { person_id: 'nope!' },
    { person_id: '' }, { permissions: 'admin_access' }, { permissions: 70 }, { role: 'owner' }, { responsibility: 5 }, { responsibility: 'x'.repeat(256) },
    { extra: 1 }, { project_id: ' ' }
  ]) {
    expect400(t, await post(app, f.token, 'create_contributor', body(p, extra)))
  }
  const { responsibility: _, ...missing } = body(p)
  expect400(t, await post(app, f.token, 'create_contributor', missing))
  const readOnly = await tokenFor(db, f.champion.email, { readOnly: true })
  t.equal((await post(app, readOnly.token, 'create_contributor', body(p))).statusCode, 403)
  t.equal((await post(app, f.token, 'create_contributor', body(p), { 'if-match': '"stale"' })).statusCode, 412)
  t.equal((await post(app, f.token, 'create_contributor', body(p, { project_id: 'nope' }))).statusCode, 404)
  t.same(await f.bindings(p.id), before)
  t.equal((await projectActivities(db, p.id)).length, 0)
})

// Operately's create_contributor_test.exs.
const TABLE = permissionTable(`
no_access       no_access       no_access       404
no_access       no_access       comment_access  403
no_access       no_access       edit_access     200
no_access       no_access       full_access     200
no_access       comment_access  no_access       403
no_access       edit_access     no_access       200
no_access       full_access     no_access       200
comment_access  no_access       no_access       403
edit_access     no_access       no_access       200
full_access     no_access       no_access       200
`)

t.test("Operately's permission table", async (t) => {
  for (const row of TABLE) {
    const { project: p, token } = await callerWithLevels(db, f.company.id, f.champion, row)
    const res = await post(app, token, 'create_contributor', body(p, { permissions: 'view_access' }))
    t.equal(res.statusCode, row.expected, `company ${row.company}, space ${row.space}, project ${row.project}: ${row.expected}`)
    t.equal((await f.bindings(p.id)).some((b) => b.person_id === f.person.id), row.expected === 200)
  }
})

// Operately's permission level validation: a caller grants at most what they have.
const GRANTS: Array<[number, string, number]> = [
  [70, 'full_access', 403], [70, 'edit_access', 200], [70, 'comment_access', 200], [70, 'view_access', 200],
  [100, 'full_access', 200], [100, 'edit_access', 200], [100, 'comment_access', 200], [100, 'view_access', 200]
]

t.test('a caller grants at most the access they have', async (t) => {
  for (const [level, permissions, expected] of GRANTS) {
    const { project: p, token } = await callerWithLevels(db, f.company.id, f.champion, { company: 0, space: 0, project: level as 70 | 100, expected })
    const res = await post(app, token, 'create_contributor', body(p, { permissions }))
    t.equal(res.statusCode, expected, `caller ${level} grants ${permissions}: ${expected}`)
    if (expected === 403) t.equal(res.json().code, 'forbidden')
  }
})
