// POST /api/external/v1/projects/update_contributor: responsibility, access and
// role of a binding; a champion's binding handed to another person; who may.
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, projectActivities, tokenFor } from '../../helper.js'
import { contributorsFixture } from './contributors-support.js'
import { callerWithLevels, deliveries, expect400, permissionTable, post } from './lifecycle-support.js'

const { app, db } = await build(t)
const f = await contributorsFixture(db)

async function withContributor (level: 10 | 40 | 70 | 100 = 40) {
  const p = await f.project()
  const c = await addContributor(db, p.id, f.person.id, 'contributor', level)
  return { p, c, contribId: shortId(c.id) }
}

t.test('changes responsibility and access: the binding, the answer, the record', async (t) => {
  const { p, c, contribId } = await withContributor()
  const res = await post(app, f.token, 'update_contributor', { contrib_id: contribId, responsibility: 'QA', permissions: 'edit_access' })
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  t.match(res.json().contributor, { id: contribId, role: 'contributor', responsibility: 'QA', access_level: 70, person: { full_name: 'Pat Person' } })
  t.match((await f.bindings(p.id)).find((b) => b.id === c.id), { responsibility: 'QA', access_level: 70 })
  const [activity, ...more] = await projectActivities(db, p.id)
  t.equal(more.length, 0)
  t.match(activity, { action: 'project_contributor_edited', content: { previous_contributor: { permissions: 40 }, updated_contributor: { permissions: 70 } } })
  const event = (await deliveries(db, f.hook.id, 'project.contributor_updated')).find((e) => e.event_id === activity!.id)
  t.match((event!.payload as any).data.change, { previous: { access_level: 40 }, updated: { access_level: 70, responsibility: 'QA' } })
  const same = await post(app, f.token, 'update_contributor', { contrib_id: contribId, responsibility: 'QA' })
  t.equal(same.statusCode, 200)
  t.equal((await projectActivities(db, p.id)).length, 1, 'no change, no record')
})

t.test("a champion's binding handed to another person; a role taken only when free", async (t) => {
  const { p, contribId } = await withContributor()
  const champion = (await f.bindings(p.id)).find((b) => b.role === 'champion')!
  const handed = await post(app, f.token, 'update_contributor', { contrib_id: shortId(champion.id), person_id: shortId(f.other.id) })
  t.equal(handed.statusCode, 200, handed.body.slice(0, 200))
  t.equal(handed.json().contributor.person.full_name, 'Otto Other')
  t.equal(handed.json().contributor.role, 'champion')
  t.equal(handed.json().project.champion.full_name, 'Otto Other')
  t.match((await f.bindings(p.id)).find((b) => b.person_id === f.champion.id), { role: 'contributor', access_level: 100 })
  expect400(t, await post(app, f.token, 'update_contributor', { contrib_id: contribId, role: 'champion' }), /champion already/)
  expect400(t, await post(app, f.token, 'update_contributor', { contrib_id: contribId, person_id: shortId(f.other.id) }), /champion's or a reviewer's/)
  const reviewer = await post(app, f.token, 'update_contributor', { contrib_id: contribId, role: 'reviewer' })
  t.equal(reviewer.statusCode, 200)
  t.equal(reviewer.json().project.reviewer.full_name, 'Pat Person')
  const back = await post(app, f.token, 'update_contributor', { contrib_id: contribId, role: 'contributor' })
  t.match(back.json().contributor, { role: 'contributor', access_level: 70 }, 'back to a contributor with edit access')
})

t.test('bad input is 400; unknown contributor 404; read-only 403; stale If-Match 412', async (t) => {
  const { p, c, contribId } = await withContributor()
  const before = await f.bindings(p.id)
  for (const b of [{}, { contrib_id: '' }, { contrib_id: contribId, permissions: 'admin_access' }, { contrib_id: contribId, role: 'owner' },
    { contrib_id: contribId, responsibility: 1 }, { contrib_id: contribId, person_id: 'nope!' }, { contrib_id: contribId, x: 1 },
    { contrib_id: contribId, responsibility: '\ud800' }]) {
    expect400(t, await post(app, f.token, 'update_contributor', b))
  }
  for (const id of ['nope', shortId(p.id), shortId('00000000-0000-4000-8000-000000000000')]) {
    t.equal((await post(app, f.token, 'update_contributor', { contrib_id: id, responsibility: 'x' })).statusCode, 404)
  }
  const readOnly = await tokenFor(db, f.champion.email, { readOnly: true })
  t.equal((await post(app, readOnly.token, 'update_contributor', { contrib_id: contribId, responsibility: 'x' })).statusCode, 403)
  t.equal((await post(app, f.token, 'update_contributor', { contrib_id: contribId, responsibility: 'x' }, { 'if-match': '"stale"' })).statusCode, 412)
  t.same(await f.bindings(p.id), before)
  t.ok(c)
})

// Operately's update_contributor_test.exs.
const TABLE = permissionTable(`
no_access       no_access       no_access       404
no_access       no_access       view_access     403
no_access       no_access       comment_access  403
no_access       no_access       edit_access     200
no_access       no_access       full_access     200
no_access       view_access     no_access       403
no_access       comment_access  no_access       403
no_access       edit_access     no_access       200
no_access       full_access     no_access       200
view_access     no_access       no_access       403
comment_access  no_access       no_access       403
edit_access     no_access       no_access       200
full_access     no_access       no_access       200
`)

t.test("Operately's permission table", async (t) => {
  for (const row of TABLE) {
    const { project: p, token } = await callerWithLevels(db, f.company.id, f.champion, row)
    const c = await addContributor(db, p.id, f.person.id, 'contributor', 10)
    const res = await post(app, token, 'update_contributor', { contrib_id: shortId(c.id), responsibility: 'Changed' })
    t.equal(res.statusCode, row.expected, `company ${row.company}, space ${row.space}, project ${row.project}: ${row.expected}`)
  }
})

t.test("access: only on someone with no more than the caller, and no more than the caller's", async (t) => {
  for (const [callerLevel, theirs, asked, expected] of [[70, 100, 'view_access', 403], [70, 70, 'full_access', 403], [70, 40, 'edit_access', 200], [100, 100, 'view_access', 200]] as const) {
    const { project: p, token } = await callerWithLevels(db, f.company.id, f.champion, { company: 0, space: 0, project: callerLevel, expected })
    const c = await addContributor(db, p.id, f.person.id, 'contributor', theirs)
    const res = await post(app, token, 'update_contributor', { contrib_id: shortId(c.id), permissions: asked })
    t.equal(res.statusCode, expected, `caller ${callerLevel}, contributor ${theirs}, asks ${asked}: ${expected}`)
  }
})
