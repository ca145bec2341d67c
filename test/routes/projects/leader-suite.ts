// The tests of update_champion and update_reviewer, one suite for either role:
// the hand-over (the new one a contributor with the role, the old one a contributor
// with full access), its record and notifications, its input rules, and who may.
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { Db } from '../../../src/db/index.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, createCompany, createPerson, createProject, createSpace, projectActivities, projectRow, tokenFor } from '../../helper.js'
import { callerWithLevels, deliveries, everyEventWebhook, expect400, notified, permissionTable, post } from './lifecycle-support.js'

// Full access is needed (Operately's check): the caller's company, space and project levels.
const TABLE = permissionTable(`
no_access       no_access       no_access       404
no_access       no_access       comment_access  403
no_access       no_access       edit_access     403
no_access       no_access       full_access     200
no_access       edit_access     no_access       403
no_access       full_access     no_access       200
comment_access  no_access       no_access       403
edit_access     no_access       no_access       403
full_access     no_access       no_access       200
`)

export async function leaderSuite (t: Test, app: FastifyInstance, db: Db, role: 'champion' | 'reviewer'): Promise<void> {
  const op = `update_${role}`
  const field = `${role}_id`
  const company = await createCompany(db)
  const admin = await createPerson(db, company.id, { isAdmin: true, fullName: 'Ada Admin' })
  const oldOne = await createPerson(db, company.id, { fullName: 'Olga Old' })
  const newOne = await createPerson(db, company.id, { fullName: 'Nina New' })
  const subscriber = await createPerson(db, company.id, { fullName: 'Sue Subscriber' })
  const suspended = await createPerson(db, company.id, { suspended: true })
  const foreigner = await createPerson(db, (await createCompany(db)).id)
  const space = await createSpace(db, company.id, [subscriber.id])
  const token = (await tokenFor(db, admin.email)).token
  const hook = await everyEventWebhook(db, company.id)

  async function project () {
    const p = await createProject(db, space, { access: { space: 70 } })
    await addContributor(db, p.id, oldOne.id, role)
    const list = await db.insertInto('subscription_lists').values({ project_id: p.id }).returning('id').executeTakeFirstOrThrow()
    await db.insertInto('subscriptions').values({ subscription_list_id: list.id, person_id: subscriber.id, type: 'joined' }).execute()
    return p
  }
  const bindings = async (projectId: string) => (await db.selectFrom('project_contributors').select(['person_id', 'role', 'access_level'])
    .where('project_id', '=', projectId).orderBy('role').execute())

  t.test(`hands the ${role} role over: the new one takes it, the old one stays a contributor with full access`, async (t) => {
    const p = await project()
    const res = await post(app, token, op, { project_id: p.publicId, [field]: shortId(newOne.id) })
    t.equal(res.statusCode, 200, res.body.slice(0, 200))
    t.same(Object.keys(res.json()), ['success', 'project'])
    t.equal(res.json().success, true)
    t.equal(res.json().project[role].full_name, 'Nina New')
    t.match(res.headers.etag, /^"/)
    t.same(await bindings(p.id), [{ person_id: oldOne.id, role: 'contributor', access_level: 100 }, { person_id: newOne.id, role, access_level: null }].sort((a, b) => a.role.localeCompare(b.role)))
    const [activity, ...more] = await projectActivities(db, p.id)
    t.equal(more.length, 0)
    t.match(activity, { action: `project_${role}_updating`, content: { [`old_${role}_id`]: oldOne.id, [`new_${role}_id`]: newOne.id } })
    const events = await deliveries(db, hook.id, `project.${role}_changed`)
    const event = events.find((e) => e.event_id === activity!.id)
    t.same((event?.payload as any).data.change, { [`old_${role}`]: { id: shortId(oldOne.id), full_name: 'Olga Old' }, [`new_${role}`]: { id: shortId(newOne.id), full_name: 'Nina New' } })
    t.same(await notified(db, activity!.id), [newOne.id, subscriber.id].sort(), 'the new one and the subscribers')
    const subscription = await db.selectFrom('subscriptions as s').innerJoin('subscription_lists as l', 'l.id', 's.subscription_list_id')
      .where('l.project_id', '=', p.id).where('s.person_id', '=', newOne.id).select(['s.type', 's.canceled']).executeTakeFirst()
    t.same(subscription, { type: 'invited', canceled: false })
  })

  t.test(`an existing contributor takes the ${role} role on their binding; null removes the ${role}; the same one records nothing`, async (t) => {
    const p = await project()
    await addContributor(db, p.id, newOne.id, 'contributor', 40)
    t.equal((await post(app, token, op, { project_id: p.publicId, [field]: newOne.id })).statusCode, 200)
    t.same((await bindings(p.id)).find((b) => b.person_id === newOne.id), { person_id: newOne.id, role, access_level: 40 })
    const same = await post(app, token, op, { project_id: p.publicId, [field]: shortId(newOne.id) })
    t.equal(same.statusCode, 200)
    t.equal((await projectActivities(db, p.id)).length, 1, 'nothing recorded for the same one')
    const removed = await post(app, token, op, { project_id: p.publicId, [field]: null })
    t.equal(removed.statusCode, 200)
    t.equal(removed.json().project[role], null)
    t.notOk((await bindings(p.id)).some((b) => b.role === role), `no ${role} left`)
    t.equal((await projectActivities(db, p.id)).length, 2)
  })

  t.test('bad input is 400 and writes nothing; read-only 403; stale If-Match 412; unknown 404', async (t) => {
    const p = await project()
    const before = await bindings(p.id)
    for (const body of [
      { project_id: p.publicId }, { [field]: newOne.id }, { project_id: p.publicId, [field]: 7 }, { project_id: p.publicId, [field]: '' },
      { project_id: p.publicId, [field]: 'nope!' }, { project_id: p.publicId, [field]: shortId(suspended.id) },
      { project_id: p.publicId, [field]: shortId(foreigner.id) }, { project_id: p.publicId, [field]: shortId(p.id) },
      { project_id: p.publicId, [field]: newOne.id, extra: 1 }
    ]) {
      expect400(t, await post(app, token, op, body))
    }
    const readOnly = await tokenFor(db, admin.email, { readOnly: true })
    t.equal((await post(app, readOnly.token, op, { project_id: p.publicId, [field]: newOne.id })).statusCode, 403)
    t.equal((await post(app, token, op, { project_id: p.publicId, [field]: newOne.id }, { 'if-match': '"stale"' })).statusCode, 412)
    t.equal((await post(app, token, op, { project_id: 'nope', [field]: newOne.id })).statusCode, 404)
    t.same(await bindings(p.id), before)
    t.equal((await projectActivities(db, p.id)).length, 0)
    t.ok(await projectRow(db, p.id))
  })

  t.test("the permission table: full access is needed", async (t) => {
    for (const row of TABLE) {
      const { project: p, token: callerToken } = await callerWithLevels(db, company.id, oldOne, row)
      const res = await post(app, callerToken, op, { project_id: p.publicId, [field]: newOne.id })
      t.equal(res.statusCode, row.expected, `company ${row.company}, space ${row.space}, project ${row.project}: ${row.expected}`)
      t.equal((await projectActivities(db, p.id)).length, row.expected === 200 ? 1 : 0)
    }
  })
}
