// POST /api/external/v1/projects/resume: a paused project becomes active again, a
// check-in due in the past is scheduled a week on; only a paused project resumes.
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, projectActivities, projectRow, tokenFor } from '../../helper.js'
import { callerWithLevels, deliveries, everyEventWebhook, expect400, notified, permissionTable, post, richText } from './lifecycle-support.js'

const { app, db } = await build(t)

const company = await createCompany(db)
const champion = await createPerson(db, company.id)
const watcher = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [champion.id, watcher.id])
const token = (await tokenFor(db, champion.email)).token
const hook = await everyEventWebhook(db, company.id)

async function project (state: 'active' | 'paused' | 'closed' = 'paused') {
  const created = await createProject(db, space, { access: { space: 70 }, state })
  await addContributor(db, created.id, champion.id, 'champion')
  return created
}

t.test('resumes a paused project: state, next check-in, activity, webhook event, notifications', async (t) => {
  const p = await project()
  await db.updateTable('projects').set({ next_check_in_scheduled_at: '2020-01-01T00:00:00Z' }).where('id', '=', p.id).execute()
  const res = await post(app, token, 'resume', { project_id: p.publicId, message: richText('Budget approved.'), subscriber_ids: [shortId(watcher.id)] })
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  const body = res.json().project
  t.equal(body.state, 'active')
  t.equal(body.status, 'pending')
  t.ok(new Date(body.next_check_in_scheduled_at).getTime() > Date.now() + 6 * 86_400_000, 'the overdue check-in is a week away')
  const row = await projectRow(db, p.id)
  t.equal(row.state, 'active')
  const [activity, ...more] = await projectActivities(db, p.id)
  t.equal(more.length, 0)
  t.match(activity, { action: 'project_resuming', author_id: champion.id })
  t.equal((await deliveries(db, hook.id, 'project.resumed')).length, 1)
  t.same(await notified(db, activity!.id), [watcher.id])
})

t.test('a check-in scheduled in the future keeps its date', async (t) => {
  const p = await project()
  await db.updateTable('projects').set({ next_check_in_scheduled_at: '2099-01-01T00:00:00.000Z' }).where('id', '=', p.id).execute()
  const res = await post(app, token, 'resume', { project_id: p.publicId, message: richText('Go.') })
  t.equal(res.json().project.next_check_in_scheduled_at, '2099-01-01T00:00:00.000Z')
})

t.test('only a paused project can be resumed: active and closed ones are 400, nothing written', async (t) => {
  for (const state of ['active', 'closed'] as const) {
    const p = await project(state)
    const before = await projectRow(db, p.id)
    expect400(t, await post(app, token, 'resume', { project_id: p.publicId, message: richText('Go.') }), state === 'closed' ? /closed project cannot be resumed/ : /only a paused project/)
    t.same(await projectRow(db, p.id), before)
    t.equal((await projectActivities(db, p.id)).length, 0)
  }
})

t.test('bad input is 400; read-only 403; stale If-Match 412; unknown 404', async (t) => {
  const p = await project()
  for (const body of [{ project_id: p.publicId }, { project_id: p.publicId, message: '{' }, { project_id: p.publicId, message: richText('x'), x: 1 },
    { project_id: p.publicId, message: richText('x'), subscriber_ids: ['!'] }]) {
    expect400(t, await post(app, token, 'resume', body))
  }
  const readOnly = await tokenFor(db, champion.email, { readOnly: true })
  t.equal((await post(app, readOnly.token, 'resume', { project_id: p.publicId, message: richText('x') })).statusCode, 403)
  t.equal((await post(app, token, 'resume', { project_id: p.publicId, message: richText('x') }, { 'if-match': '"stale"' })).statusCode, 412)
  t.equal((await post(app, token, 'resume', { project_id: 'nope', message: richText('x') })).statusCode, 404)
  t.equal((await projectRow(db, p.id)).state, 'paused')
})

// Operately's resume_test.exs.
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
    await db.updateTable('projects').set({ state: 'paused' }).where('id', '=', p.id).execute()
    const res = await post(app, callerToken, 'resume', { project_id: p.publicId, message: richText('x') })
    t.equal(res.statusCode, row.expected, `company ${row.company}, space ${row.space}, project ${row.project}: ${row.expected}`)
    t.equal((await projectRow(db, p.id)).state, row.expected === 200 ? 'active' : 'paused')
  }
})
