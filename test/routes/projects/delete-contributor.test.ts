// POST /api/external/v1/projects/delete_contributor: the binding removed, its
// record, Operately's answer (the contributor as it was); full access needed.
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, projectActivities, tokenFor } from '../../helper.js'
import { contributorsFixture } from './contributors-support.js'
import { callerWithLevels, deliveries, expect400, permissionTable, post } from './lifecycle-support.js'

const { app, db } = await build(t)
const f = await contributorsFixture(db)

t.test('removes the contributor: the binding, the answer, the record', async (t) => {
  const p = await f.project()
  const c = await addContributor(db, p.id, f.person.id, 'contributor', 40)
  const res = await post(app, f.token, 'delete_contributor', { contrib_id: shortId(c.id) })
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  t.match(res.json().contributor, { id: shortId(c.id), role: 'contributor', access_level: 40, person: { full_name: 'Pat Person' } })
  t.notOk(res.json().project.contributors.some((x: { id: string }) => x.id === shortId(c.id)))
  t.notOk((await f.bindings(p.id)).some((b) => b.id === c.id))
  const [activity, ...more] = await projectActivities(db, p.id)
  t.equal(more.length, 0)
  t.match(activity, { action: 'project_contributor_removed', content: { person_id: f.person.id, contributor_id: c.id, role: 'contributor' } })
  t.equal((await deliveries(db, f.hook.id, 'project.contributor_removed')).filter((e) => e.event_id === activity!.id).length, 1)
  const again = await post(app, f.token, 'delete_contributor', { contrib_id: shortId(c.id) })
  t.equal(again.statusCode, 404, 'gone')
})

t.test('bad input 400; unknown 404; read-only 403; stale If-Match 412', async (t) => {
  const p = await f.project()
  const c = await addContributor(db, p.id, f.person.id, 'contributor', 40)
  for (const b of [{}, { contrib_id: '' }, { contrib_id: 3 }, { contrib_id: shortId(c.id), x: 1 }]) expect400(t, await post(app, f.token, 'delete_contributor', b))
  t.equal((await post(app, f.token, 'delete_contributor', { contrib_id: 'nope' })).statusCode, 404)
  const readOnly = await tokenFor(db, f.champion.email, { readOnly: true })
  t.equal((await post(app, readOnly.token, 'delete_contributor', { contrib_id: shortId(c.id) })).statusCode, 403)
  t.equal((await post(app, f.token, 'delete_contributor', { contrib_id: shortId(c.id) }, { 'if-match': '"stale"' })).statusCode, 412)
  t.ok((await f.bindings(p.id)).some((b) => b.id === c.id))
})

// Operately's delete_contributor_test.exs.
const TABLE = permissionTable(`
no_access       no_access       no_access       404
no_access       no_access       view_access     403
no_access       no_access       comment_access  403
no_access       no_access       edit_access     403
no_access       no_access       full_access     200
no_access       view_access     no_access       403
no_access       comment_access  no_access       403
no_access       edit_access     no_access       403
no_access       full_access     no_access       200
view_access     no_access       no_access       403
comment_access  no_access       no_access       403
edit_access     no_access       no_access       403
full_access     no_access       no_access       200
`)

t.test("Operately's permission table", async (t) => {
  for (const row of TABLE) {
    const { project: p, token } = await callerWithLevels(db, f.company.id, f.champion, row)
    const c = await addContributor(db, p.id, f.person.id, 'contributor', 10)
    const res = await post(app, token, 'delete_contributor', { contrib_id: shortId(c.id) })
    t.equal(res.statusCode, row.expected, `company ${row.company}, space ${row.space}, project ${row.project}: ${row.expected}`)
    t.equal((await f.bindings(p.id)).some((b) => b.id === c.id), row.expected !== 200)
  }
})
