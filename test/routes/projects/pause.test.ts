// POST /api/external/v1/projects/pause: an active project becomes paused, with its
// activity, its webhook event and the notifications of the people chosen; the state
// rules; input rules; who may (Operately's table).
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, projectActivities, projectRow, tokenFor } from '../../helper.js'
import { callerWithLevels, deliveries, everyEventWebhook, expect400, notified, permissionTable, post, richText } from './lifecycle-support.js'

const { app, db } = await build(t)

const company = await createCompany(db)
const champion = await createPerson(db, company.id, { fullName: 'Chris Champion' })
const watcher = await createPerson(db, company.id, { fullName: 'Wanda Watcher' })
const mentioned = await createPerson(db, company.id, { fullName: 'Manny Mentioned' })
const contributor = await createPerson(db, company.id, { fullName: 'Cora Contributor' })
const stranger = await createPerson(db, company.id, { fullName: 'Sam Stranger' })
const suspended = await createPerson(db, company.id, { suspended: true })
const space = await createSpace(db, company.id, [champion.id, watcher.id, mentioned.id, suspended.id])
const token = (await tokenFor(db, champion.email)).token
const hook = await everyEventWebhook(db, company.id)
const elsewhere = await createCompany(db)
const foreigner = await createPerson(db, elsewhere.id)

async function project (state: 'active' | 'paused' | 'closed' = 'active') {
  const created = await createProject(db, space, { access: { space: 70 }, state })
  await addContributor(db, created.id, champion.id, 'champion')
  await addContributor(db, created.id, contributor.id, 'contributor', 40)
  return created
}

t.test('pauses an active project: state, activity, webhook event, notifications of the chosen, the mentioned and everyone', async (t) => {
  const p = await project()
  const message = richText('Waiting for the budget.', [mentioned.id])
  const res = await post(app, token, 'pause', {
    project_id: p.publicId, message, subscriber_ids: [shortId(watcher.id), watcher.id, shortId(champion.id), shortId(suspended.id)], send_notifications_to_everyone: true
  })
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  t.same(Object.keys(res.json()), ['project'])
  t.equal(res.json().project.state, 'paused')
  t.equal(res.json().project.status, 'paused')
  t.match(res.headers.etag, /^"[A-Za-z0-9_-]{43}"$/)
  t.equal((await projectRow(db, p.id)).state, 'paused')

  const [activity, ...more] = await projectActivities(db, p.id)
  t.equal(more.length, 0, 'one activity')
  t.match(activity, { action: 'project_pausing', author_id: champion.id, content: { message } })
  const events = await deliveries(db, hook.id, 'project.paused')
  t.equal(events.length, 1, 'one webhook delivery queued')
  t.equal(events[0]!.event_id, activity!.id)
  t.same((events[0]!.payload as any).data.change, { old_state: 'active', new_state: 'paused' })
  // The chosen (once), the mentioned and the contributors; not the author, not the suspended, not a stranger.
  t.same(await notified(db, activity!.id), [watcher.id, mentioned.id, contributor.id].sort())
  const subscription = await db.selectFrom('subscriptions as s').innerJoin('subscription_lists as l', 'l.id', 's.subscription_list_id')
    .where('l.project_id', '=', p.id).where('s.person_id', '=', mentioned.id).select('s.type').executeTakeFirst()
  t.equal(subscription?.type, 'mentioned', 'the mention subscribes')
})

t.test('without subscriber_ids or everyone, nobody but the mentioned is notified', async (t) => {
  const p = await project()
  const res = await post(app, token, 'pause', { project_id: p.publicId, message: richText('Stop.') })
  t.equal(res.statusCode, 200)
  const [activity] = await projectActivities(db, p.id)
  t.same(await notified(db, activity!.id), [])
  const nulls = await post(app, token, 'resume', { project_id: p.publicId, message: richText('Go.'), subscriber_ids: null, send_notifications_to_everyone: null })
  t.equal(nulls.statusCode, 200, 'null stands for none')
})

t.test('a chosen person who cannot view the project is not notified', async (t) => {
  const hidden = await createProject(db, space, { access: { space: 70 } })
  await addContributor(db, hidden.id, champion.id, 'champion')
  const res = await post(app, token, 'pause', { project_id: hidden.publicId, message: richText('Stop.'), subscriber_ids: [shortId(stranger.id), shortId(watcher.id)] })
  t.equal(res.statusCode, 200)
  const [activity] = await projectActivities(db, hidden.id)
  t.same(await notified(db, activity!.id), [watcher.id], 'the stranger is not in the space')
})

t.test('only an active project can be paused: paused and closed ones are 400, nothing written', async (t) => {
  for (const state of ['paused', 'closed'] as const) {
    const p = await project(state)
    const before = await projectRow(db, p.id)
    const res = await post(app, token, 'pause', { project_id: p.publicId, message: richText('Again.') })
    expect400(t, res, state === 'closed' ? /closed project cannot be paused/ : /paused already/)
    t.same(await projectRow(db, p.id), before)
    t.equal((await projectActivities(db, p.id)).length, 0)
  }
})

t.test('bad input is 400 and writes nothing', async (t) => {
  const p = await project()
  const before = await projectRow(db, p.id)
  const cases: Array<[unknown, string]> = [
    [{ project_id: p.publicId }, 'missing message'],
    [{ message: richText('x') }, 'missing project_id'],
    [{ project_id: p.publicId, message: richText('x'), extra: 1 }, 'unknown field'],
    [{ project_id: p.publicId, message: { type: 'doc' } }, 'message not a string'],
    [{ project_id: p.publicId, message: 'not json' }, 'message not JSON'],
    [{ project_id: p.publicId, message: '' }, 'empty message'],
    [{ project_id: p.publicId, message: 'null' }, 'JSON null'],
    [{ project_id: p.publicId, message: '['.repeat(65) + ']'.repeat(65) }, 'too deep'],
    [{ project_id: p.publicId, message: '\ud800' }, 'lone surrogate'],
    [{ project_id: '  ', message: richText('x') }, 'blank id'],
    [{ project_id: 12, message: richText('x') }, 'id not a string'],
    [{ project_id: p.publicId, message: richText('x'), send_notifications_to_everyone: 'true' }, 'flag as text'],
    [{ project_id: p.publicId, message: richText('x'), subscriber_ids: shortId(watcher.id) }, 'ids not a list'],
    [{ project_id: p.publicId, message: richText('x'), subscriber_ids: [1] }, 'id not a string'],
    [{ project_id: p.publicId, message: richText('x'), subscriber_ids: ['nope!'] }, 'undecodable person id'],
    [{ project_id: p.publicId, message: richText('x'), subscriber_ids: [shortId(foreigner.id)] }, 'person of another company'],
    [{ project_id: p.publicId, message: richText('x'), subscriber_ids: [shortId(p.id)] }, 'not a person']
  ]
  for (const [body, what] of cases) {
    const res = await post(app, token, 'pause', body)
    t.equal(res.statusCode, 400, `${what}: ${res.body.slice(0, 160)}`)
    t.equal(res.json().code, 'invalid_input', what)
  }
  t.same(await projectRow(db, p.id), before)
  t.equal((await projectActivities(db, p.id)).length, 0)
})

t.test('unknown, invisible and archived projects are one 404; read-only tokens 403; a stale If-Match 412', async (t) => {
  const archived = await createProject(db, space, { access: { space: 70 }, archived: true })
  const secret = await createProject(db, space, {})
  const bodies = []
  for (const id of [archived.publicId, secret.publicId, 'nope', shortId('00000000-0000-4000-8000-000000000000')]) {
    const res = await post(app, (await tokenFor(db, watcher.email)).token, 'pause', { project_id: id, message: richText('x') })
    t.equal(res.statusCode, 404)
    bodies.push(res.body)
  }
  t.equal(new Set(bodies).size, 1, 'one body')
  const p = await project()
  const readOnly = await tokenFor(db, champion.email, { readOnly: true })
  const ro = await post(app, readOnly.token, 'pause', { project_id: p.publicId, message: richText('x') })
  t.equal(ro.statusCode, 403)
  t.equal(ro.json().code, 'read_only_token')
  const stale = await post(app, token, 'pause', { project_id: p.publicId, message: richText('x') }, { 'if-match': '"stale"' })
  t.equal(stale.statusCode, 412)
  t.equal((await projectRow(db, p.id)).state, 'active')
  const current = (await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: p.publicId }, headers: { authorization: `Bearer ${token}` } })).headers.etag as string
  const fresh = await post(app, token, 'pause', { project_id: p.publicId, message: richText('x') }, { 'if-match': current })
  t.equal(fresh.statusCode, 200)
})

// Operately's pause_test.exs: the caller's company, space and project levels.
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
    const res = await post(app, callerToken, 'pause', { project_id: p.publicId, message: richText('x') })
    t.equal(res.statusCode, row.expected, `company ${row.company}, space ${row.space}, project ${row.project}: ${row.expected}`)
    t.equal((await projectRow(db, p.id)).state, row.expected === 200 ? 'paused' : 'active')
  }
})
