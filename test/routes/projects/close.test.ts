// POST /api/external/v1/projects/close: the retrospective row, closed_at, state and
// success_status, Operately's answer beside the project, and who is told.
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, projectActivities, projectRow, tokenFor } from '../../helper.js'
import { callerWithLevels, deliveries, everyEventWebhook, expect400, notified, permissionTable, post, richText } from './lifecycle-support.js'

const { app, db } = await build(t)

const company = await createCompany(db)
const champion = await createPerson(db, company.id, { fullName: 'Chris Champion' })
const reviewer = await createPerson(db, company.id, { fullName: 'Rita Reviewer' })
const mentioned = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [champion.id, mentioned.id])
const token = (await tokenFor(db, champion.email)).token
const hook = await everyEventWebhook(db, company.id)

async function project (state: 'active' | 'paused' | 'closed' = 'active') {
  const created = await createProject(db, space, { access: { space: 70 }, state })
  await addContributor(db, created.id, champion.id, 'champion')
  await addContributor(db, created.id, reviewer.id, 'reviewer')
  return created
}

t.test('closes: the retrospective row, closed_at, state, success_status, the answer, the record and the notifications', async (t) => {
  for (const [state, successStatus] of [['active', 'achieved'], ['paused', 'missed']] as const) {
    const p = await project(state)
    const retrospective = richText('We shipped it.', [mentioned.id])
    const res = await post(app, token, 'close', { project_id: p.publicId, retrospective, success_status: successStatus, send_notifications_to_everyone: true })
    t.equal(res.statusCode, 200, res.body.slice(0, 200))
    const body = res.json()
    t.same(Object.keys(body), ['retrospective', 'project'])
    t.equal(body.project.state, 'closed')
    t.equal(body.project.status, successStatus)
    t.equal(body.project.success_status, successStatus)
    t.type(body.project.closed_at, 'string')
    t.same(body.project.retrospective, { id: body.retrospective.id, content: retrospective, author: body.project.champion, closed_at: body.project.closed_at, success_status: successStatus })
    t.match(body.retrospective, { content: retrospective, success_status: successStatus, closed_at: body.project.closed_at, champion: { full_name: 'Chris Champion' }, reviewer: { full_name: 'Rita Reviewer' } })
    const row = await db.selectFrom('project_retrospectives').selectAll().where('project_id', '=', p.id).executeTakeFirstOrThrow()
    t.equal(shortId(row.id), body.retrospective.id)
    t.equal(row.content, retrospective)
    t.equal(row.author_id, champion.id)
    t.equal(row.success_status, successStatus)
    const projectAfter = await projectRow(db, p.id)
    t.match(projectAfter, { state: 'closed', success_status: successStatus })
    t.equal(new Date(projectAfter.closed_at as string).toISOString(), body.project.closed_at)
    const [activity, ...more] = await projectActivities(db, p.id)
    t.equal(more.length, 0)
    t.match(activity, { action: 'project_closed', content: { retrospective_id: row.id, success_status: successStatus } })
    const events = await deliveries(db, hook.id, 'project.closed')
    t.equal(events.filter((e) => e.event_id === activity!.id).length, 1)
    t.same(await notified(db, activity!.id), [reviewer.id, mentioned.id].sort(), 'everyone: the contributors; and the mentioned')
  }
})

t.test('a closed project cannot be closed, paused or resumed: 400, nothing written', async (t) => {
  const p = await project()
  t.equal((await post(app, token, 'close', { project_id: p.publicId, retrospective: richText('Done.'), success_status: 'achieved' })).statusCode, 200)
  const before = await projectRow(db, p.id)
  expect400(t, await post(app, token, 'close', { project_id: p.publicId, retrospective: richText('Again.'), success_status: 'missed' }), /closed already/)
  expect400(t, await post(app, token, 'pause', { project_id: p.publicId, message: richText('x') }), /closed project cannot be paused/)
  expect400(t, await post(app, token, 'resume', { project_id: p.publicId, message: richText('x') }), /closed project cannot be resumed/)
  t.same(await projectRow(db, p.id), before)
  t.equal((await projectActivities(db, p.id)).length, 1)
  t.equal((await db.selectFrom('project_retrospectives').select('id').where('project_id', '=', p.id).execute()).length, 1)
})

t.test('bad input is 400 and writes nothing; read-only 403; stale If-Match 412', async (t) => {
  const p = await project()
  const before = await projectRow(db, p.id)
  const ok = { project_id: p.publicId, retrospective: richText('x'), success_status: 'achieved' }
  for (const body of [
    { ...ok, success_status: 'done' }, { ...ok, success_status: null }, { project_id: p.publicId, retrospective: richText('x') },
    { ...ok, retrospective: 'not json' }, { ...ok, retrospective: 42 }, { ...ok, extra: true }, { ...ok, subscriber_ids: [''] },
    { ...ok, project_id: '' }
  ]) {
    expect400(t, await post(app, token, 'close', body))
  }
  const readOnly = await tokenFor(db, champion.email, { readOnly: true })
  t.equal((await post(app, readOnly.token, 'close', ok)).statusCode, 403)
  t.equal((await post(app, token, 'close', ok, { 'if-match': '"stale"' })).statusCode, 412)
  t.same(await projectRow(db, p.id), before)
  t.equal((await db.selectFrom('project_retrospectives').select('id').where('project_id', '=', p.id).execute()).length, 0)
})

// Operately's close_test.exs.
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
    const { project: p, token: callerToken } = await callerWithLevels(db, company.id, champion, row)
    const res = await post(app, callerToken, 'close', { project_id: p.publicId, retrospective: richText('x'), success_status: 'missed' })
    t.equal(res.statusCode, row.expected, `company ${row.company}, space ${row.space}, project ${row.project}: ${row.expected}`)
    t.equal((await projectRow(db, p.id)).state, row.expected === 200 ? 'closed' : 'active')
  }
})
