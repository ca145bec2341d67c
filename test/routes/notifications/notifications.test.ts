// Mentions and notifications on the demo, through the API only, with the database
// checked after each step: a description change subscribes the mentioned people of
// the company and notifies exactly the subscribers who may hear of it; the
// notification operations show and mark only the caller's own, all or none.
import type { LightMyRequestResponse } from 'fastify'
import t from '../../tap.js'
import { loadDemo } from '../../../src/demo/load.js'
import { shortId, sluggedId } from '../../../src/ids.js'
import { addContributor, build, client, createPerson, createProject, notifyOf, projectActivities } from '../../helper.js'

const { app, db } = await build(t)
const demo = await loadDemo(db)
const N = '/api/external/v1/notifications'

const person = async (email: string) =>
  db.selectFrom('people').select(['id', 'company_id', 'full_name', 'email', 'title']).where('email', '=', email).executeTakeFirstOrThrow()
const alice = await person('alice@acme.test')
const bob = await person('bob@acme.test')
const carol = await person('carol@acme.test')
const erin = await person('erin@acme.test')
const dave = await person('dave@globex.test')
const website = demo.projects['Website Redesign']!
const internal = demo.projects['Internal Tools']!
const write = (email: string) => demo.tokens[email]!.write
const readOnly = (email: string) => demo.tokens[email]!.read_only

function notes (token: string) {
  const headers = { authorization: `Bearer ${token}` }
  return {
    list: (query: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
      app.inject({ method: 'GET', url: `${N}/list`, query, headers }),
    unread: (query: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
      app.inject({ method: 'GET', url: `${N}/get_unread_count`, query, headers }),
    mark: (body: unknown): Promise<LightMyRequestResponse> =>
      app.inject({ method: 'POST', url: `${N}/mark_as_read`, headers, payload: body as object }),
    markMany: (body: unknown): Promise<LightMyRequestResponse> =>
      app.inject({ method: 'POST', url: `${N}/mark_many_as_read`, headers, payload: body as object }),
    markAll: (body: unknown = {}): Promise<LightMyRequestResponse> =>
      app.inject({ method: 'POST', url: `${N}/mark_all_as_read`, headers, payload: body as object })
  }
}

const mention = (id: string) => ({ type: 'mention', attrs: { id, label: 'someone' } })
const doc = (...nodes: unknown[]) => JSON.stringify({
  type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: `note ${Math.random()} ` }, ...nodes] }]
})

const allNotifications = () => db.selectFrom('notifications').selectAll().orderBy('inserted_at').orderBy('id').execute()
const subscriptionsOf = (projectId: string) => db.selectFrom('subscriptions')
  .innerJoin('subscription_lists', 'subscription_lists.id', 'subscriptions.subscription_list_id')
  .select(['subscriptions.id', 'subscriptions.person_id', 'subscriptions.type', 'subscriptions.canceled'])
  .where('subscription_lists.project_id', '=', projectId)
  .orderBy('subscriptions.person_id')
  .execute()
const recipientsOf = async (activityId: string) => (await db.selectFrom('notifications').select('person_id')
  .where('activity_id', '=', activityId).execute()).map((r) => r.person_id).sort()

/** alice (or `token`) sets `description`; the answer, the new activity and its recipients. */
async function describe (projectId: string, description: string, token = write('alice@acme.test')) {
  const before = (await projectActivities(db, projectId)).length
  const res = await client(app, token).updateDescription({ project_id: projectId, description })
  const activities = await projectActivities(db, projectId)
  const activity = activities.length > before ? activities.at(-1)! : null
  return { res, activity, added: activities.length - before, recipients: activity ? await recipientsOf(activity.id) : [] }
}

t.test('alice mentions carol and dave: carol alone is notified, nobody is subscribed', async (t) => {
  const subsBefore = await subscriptionsOf(website.id)
  const before = await allNotifications()
  const { res, activity, recipients } = await describe(website.id, doc(mention(shortId(carol.id)), mention(shortId(dave.id))))
  t.equal(res.statusCode, 200)
  t.ok(activity, 'one activity recorded')
  t.equal(activity!.action, 'project_description_changed')
  t.same(recipients, [carol.id], 'carol only: not bob (no longer mentioned), erin (canceled), alice (author) or dave')
  t.equal((await allNotifications()).length, before.length + 1, 'no other notification anywhere')
  t.same(await subscriptionsOf(website.id), subsBefore, 'subscriptions unchanged: dave is of another company, carol already joined')
  t.equal((await db.selectFrom('subscriptions').select('id').where('person_id', '=', dave.id).execute()).length, 0, 'dave has no subscription')

  const row = await db.selectFrom('notifications').selectAll().where('activity_id', '=', activity!.id).executeTakeFirstOrThrow()
  t.equal(row.action, 'project_description_changed')
  t.equal(row.project_id, website.id)
  t.equal(row.read, false)

  const carolNotes = notes(write('carol@acme.test'))
  const list = await carolNotes.list()
  t.equal(list.statusCode, 200)
  const first = list.json().notifications[0]
  t.same(first, {
    id: shortId(row.id),
    action: 'project_description_changed',
    read: false,
    read_at: null,
    inserted_at: new Date(row.inserted_at).toISOString(),
    project: { id: sluggedId(website.id, website.name), name: website.name },
    author: { id: shortId(alice.id), full_name: alice.full_name, email: alice.email, title: alice.title, avatar_url: null, type: 'human' },
    activity: {
      id: shortId(activity!.id),
      action: 'project_description_changed',
      inserted_at: new Date(activity!.inserted_at).toISOString(),
      author: { id: shortId(alice.id), full_name: alice.full_name, email: alice.email, title: alice.title, avatar_url: null, type: 'human' },
      content: {
        project: { id: sluggedId(website.id, website.name), name: website.name },
        project_name: website.name,
        has_description: true,
        description: (activity!.content as { new_description: string }).new_description
      }
    }
  }, "the newest item is the new notification, with its project and author, and Operately's activity")
  t.equal(first.activity.content.description, (await client(app, write('carol@acme.test')).get(website.id)).json().project.description,
    'the description it carries is the one set, byte for byte')
  const unreadCarol = before.filter((n) => n.person_id === carol.id && !n.read).length + 1
  t.same((await carolNotes.unread()).json(), { unread: unreadCarol })
  const got = await client(app, write('carol@acme.test')).get(website.id)
  t.ok(got.json().project.notifications.some((n: { id: string }) => n.id === shortId(row.id)), 'projects/get as carol shows it')

  for (const [email, who] of [['bob@acme.test', bob], ['erin@acme.test', erin], ['alice@acme.test', alice], ['dave@globex.test', dave]] as const) {
    const count = (await notes(write(email)).unread()).json()
    t.same(count, { unread: before.filter((n) => n.person_id === who.id && !n.read).length }, `${email}: nothing new`)
    const items = (await notes(write(email)).list()).json().notifications as Array<{ id: string }>
    t.notOk(items.some((n) => n.id === shortId(row.id)), `${email} does not see it`)
  }
})

t.test('mentioning bob (a mentioned subscriber) notifies him again, with carol', async (t) => {
  const subsBefore = await subscriptionsOf(website.id)
  const { res, recipients } = await describe(website.id, doc(mention(shortId(bob.id)), mention(carol.id)))
  t.equal(res.statusCode, 200)
  t.same(recipients, [bob.id, carol.id].sort(), 'bob and carol (a canonical UUID works as an id)')
  t.same(await subscriptionsOf(website.id), subsBefore, 'no subscription added')
  t.equal((await notes(write('bob@acme.test')).unread()).json().unread, 1)
})

t.test('a mentioned person without a subscription gets a mentioned one, and is notified', async (t) => {
  const frank = await createPerson(db, alice.company_id, { fullName: 'Frank Newcomer' })
  const { res, recipients } = await describe(website.id, doc(mention(shortId(frank.id))))
  t.equal(res.statusCode, 200)
  t.same(recipients, [frank.id, carol.id].sort(), 'frank and carol (joined); bob is no longer mentioned')
  const rows = (await subscriptionsOf(website.id)).filter((s) => s.person_id === frank.id)
  t.equal(rows.length, 1)
  t.match(rows[0], { type: 'mentioned', canceled: false })
  const inAnswer = res.json().project.subscription_list.subscriptions.filter((s: { person: { id: string } }) => s.person.id === shortId(frank.id))
  t.same(inAnswer, [{ id: shortId(rows[0]!.id), type: 'mentioned', canceled: false, person: { id: shortId(frank.id), full_name: 'Frank Newcomer', email: frank.email, title: null, avatar_url: null, type: 'human' } }], 'in the answer')
  const later = await client(app, write('alice@acme.test')).get(website.id)
  t.ok(later.json().project.subscription_list.subscriptions.some((s: { id: string }) => s.id === shortId(rows[0]!.id)), 'and in a later get')
})

t.test('a project without a subscription list gets one', async (t) => {
  const space = await db.selectFrom('projects').select('space_id').where('id', '=', website.id).executeTakeFirstOrThrow()
  const project = await createProject(db, { id: space.space_id }, { access: { company: 40 } })
  await addContributor(db, project.id, alice.id, 'champion', 100)
  t.equal((await db.selectFrom('subscription_lists').select('id').where('project_id', '=', project.id).execute()).length, 0)
  const { res, recipients } = await describe(project.id, doc(mention(shortId(carol.id))))
  t.equal(res.statusCode, 200)
  const lists = await db.selectFrom('subscription_lists').selectAll().where('project_id', '=', project.id).execute()
  t.equal(lists.length, 1, 'one list made')
  t.same((await subscriptionsOf(project.id)).map((s) => [s.person_id, s.type, s.canceled]), [[carol.id, 'mentioned', false]])
  t.same(recipients, [carol.id])
  t.equal(res.json().project.subscription_list.id, shortId(lists[0]!.id))
})

t.test('a mentioned person who cannot view a secret project is subscribed, not notified', async (t) => {
  const { res, activity, recipients } = await describe(internal.id, doc(mention(shortId(carol.id))))
  t.equal(res.statusCode, 200)
  t.ok(activity)
  t.same(recipients, [], 'nobody notified')
  t.same((await subscriptionsOf(internal.id)).map((s) => [s.person_id, s.type]), [[carol.id, 'mentioned']])
  const carolSees = (await notes(write('carol@acme.test')).list()).json().notifications as Array<{ project: { name: string } | null }>
  t.notOk(carolSees.some((n) => n.project?.name === internal.name), 'carol sees nothing about it')
})

t.test('suspended people, garbage ids and malformed nodes change nothing', async (t) => {
  const suspended = await createPerson(db, alice.company_id, { suspended: true })
  const gina = await createPerson(db, alice.company_id)
  const subsBefore = await subscriptionsOf(website.id)
  const cases = [
    doc(mention(shortId(suspended.id))),
    doc(mention('not-an-id'), mention(''), mention('1'.repeat(200))),
    doc(mention(shortId('00000000-0000-4000-8000-000000000000'))),
    doc({ type: 'mention' }, { type: 'mention', attrs: null }, { type: 'mention', attrs: { id: 42 } }, { type: 'mention', attrs: [gina.id] }, { type: 'mention', attrs: { id: { id: gina.id } } }),
    JSON.stringify({ type: 'paragraph', content: [mention(shortId(gina.id))] }),
    JSON.stringify([mention(shortId(gina.id))]),
    JSON.stringify(`${shortId(gina.id)}`),
    JSON.stringify({ type: 'doc', content: { type: 'mention', attrs: { id: shortId(gina.id) } } })
  ]
  for (const description of cases) {
    const { res, recipients } = await describe(website.id, description)
    t.equal(res.statusCode, 200, `no error: ${description.slice(0, 80)}`)
    t.same(recipients, [carol.id], 'the joined subscriber only')
    t.same(await subscriptionsOf(website.id), subsBefore, 'nobody new subscribed')
  }
  t.equal((await db.selectFrom('notifications').select('id').where('person_id', 'in', [suspended.id, gina.id]).execute()).length, 0)
})

t.test('the same description again, or a rename, notifies nobody', async (t) => {
  const description = doc(mention(shortId(bob.id)))
  const first = await describe(website.id, description)
  t.same(first.recipients, [bob.id, carol.id].sort())
  const count = (await allNotifications()).length
  const again = await describe(website.id, description)
  t.equal(again.res.statusCode, 200)
  t.equal(again.added, 0, 'no activity')
  t.equal((await allNotifications()).length, count, 'no notification')
  const renamed = await client(app, write('alice@acme.test')).updateName({ project_id: website.id, name: 'Website Redesign 2' })
  t.equal(renamed.statusCode, 200)
  t.equal((await allNotifications()).length, count, 'a rename notifies nobody')
  await client(app, write('alice@acme.test')).updateName({ project_id: website.id, name: website.name })
})

t.test('list: newest first, paged, bounded', async (t) => {
  const carolNotes = notes(write('carol@acme.test'))
  const rows = await db.selectFrom('notifications').select(['id', 'inserted_at']).where('person_id', '=', carol.id)
    .orderBy('inserted_at', 'desc').orderBy('id', 'desc').execute()
  t.ok(rows.length >= 5)
  const all = (await carolNotes.list()).json().notifications as Array<{ id: string }>
  // The secret project's notifications are none, so every row of carol's is listed.
  t.same(all.map((n) => n.id), rows.map((r) => shortId(r.id)), 'every one, newest first')
  const page2 = (await carolNotes.list({ page: '2', per_page: '2' })).json().notifications as Array<{ id: string }>
  t.same(page2.map((n) => n.id), rows.slice(2, 4).map((r) => shortId(r.id)), 'page 2 of 2')
  const past = (await carolNotes.list({ page: '1000', per_page: '100' })).json()
  t.same(past, { notifications: [] }, 'a page past the end is empty')
  for (const [query, path] of [[{ per_page: '0' }, '/per_page'], [{ per_page: '101' }, '/per_page'], [{ page: '0' }, '/page'], [{ page: 'x' }, '/page'], [{ per_page: '-1' }, '/per_page']] as const) {
    const res = await carolNotes.list(query)
    t.equal(res.statusCode, 400, JSON.stringify(query))
    t.match(res.json(), { statusCode: 400, error: 'Bad Request', code: 'invalid_input', details: [{ path }] })
  }
  const unknown = await carolNotes.list({ limit: '5' })
  t.equal(unknown.statusCode, 400, 'an unknown query field')
  t.equal(unknown.json().code, 'invalid_input')
  t.equal((await carolNotes.unread({ x: '1' })).statusCode, 400)
})

t.test('marking: only one\'s own, idempotent, all or none, read-only refused', async (t) => {
  const carolNotes = notes(write('carol@acme.test'))
  const mine = await db.selectFrom('notifications').selectAll().where('person_id', '=', carol.id).where('read', '=', false).orderBy('inserted_at').execute()
  const bobs = await db.selectFrom('notifications').selectAll().where('person_id', '=', bob.id).execute()
  t.ok(mine.length >= 4 && bobs.length >= 1)

  const unknown = await carolNotes.mark({ id: shortId('00000000-0000-4000-8000-000000000000') })
  const foreign = await carolNotes.mark({ id: shortId(bobs[0]!.id) })
  t.equal(unknown.statusCode, 404)
  t.same(foreign.json(), unknown.json(), 'someone else\'s is the same 404 as an unknown one')
  t.match(foreign.json(), { statusCode: 404, code: 'not_found' })
  t.equal((await carolNotes.mark({ id: 'garbage!' })).statusCode, 404, 'an undecodable id too')
  t.equal((await db.selectFrom('notifications').select('read').where('id', '=', bobs[0]!.id).executeTakeFirstOrThrow()).read, false, 'bob\'s stays unread')

  const ro = notes(readOnly('carol@acme.test'))
  for (const res of [await ro.mark({ id: shortId(mine[0]!.id) }), await ro.markMany({ ids: [shortId(mine[0]!.id)] }), await ro.markAll()]) {
    t.equal(res.statusCode, 403)
    t.equal(res.json().code, 'read_only_token')
  }
  t.same((await ro.unread()).json(), { unread: mine.length }, 'a read-only token may count, and nothing was marked')

  const marked = await carolNotes.mark({ id: shortId(mine[0]!.id) })
  t.equal(marked.statusCode, 200)
  t.same(marked.json(), {})
  const once = await db.selectFrom('notifications').selectAll().where('id', '=', mine[0]!.id).executeTakeFirstOrThrow()
  t.equal(once.read, true)
  t.ok(once.read_at, 'read_at recorded')
  t.same((await carolNotes.mark({ id: mine[0]!.id })).json(), {}, 'again, by canonical UUID')
  const twice = await db.selectFrom('notifications').selectAll().where('id', '=', mine[0]!.id).executeTakeFirstOrThrow()
  t.same(twice.read_at, once.read_at, 'read_at kept')
  t.same((await carolNotes.unread()).json(), { unread: mine.length - 1 })

  const many = await carolNotes.markMany({ ids: [shortId(mine[1]!.id), shortId(bobs[0]!.id)] })
  t.equal(many.statusCode, 404, 'one foreign id fails them all')
  t.same(many.json(), unknown.json())
  t.equal((await db.selectFrom('notifications').select('read').where('id', '=', mine[1]!.id).executeTakeFirstOrThrow()).read, false, 'nothing marked')
  t.same((await carolNotes.markMany({ ids: [] })).json(), {}, 'an empty list is fine')
  t.equal((await carolNotes.markMany({ ids: [shortId(mine[1]!.id), 'nope'] })).statusCode, 404)
  const ok = await carolNotes.markMany({ ids: [shortId(mine[0]!.id), shortId(mine[1]!.id), shortId(mine[1]!.id)] })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), {})
  t.same((await db.selectFrom('notifications').select('read_at').where('id', '=', mine[0]!.id).executeTakeFirstOrThrow()).read_at, once.read_at, 'an already read one keeps read_at')
  t.same((await carolNotes.unread()).json(), { unread: mine.length - 2 })
  t.equal((await carolNotes.markMany({ ids: Array.from({ length: 1001 }, () => shortId(mine[2]!.id)) })).statusCode, 400, 'over 1000 ids')

  const all = await carolNotes.markAll()
  t.equal(all.statusCode, 200)
  t.same(all.json(), {})
  t.same((await carolNotes.unread()).json(), { unread: 0 })
  const after = await db.selectFrom('notifications').selectAll().where('person_id', '=', carol.id).execute()
  t.ok(after.every((n) => n.read && n.read_at !== null), 'every one of carol\'s is read')
  t.same(after.find((n) => n.id === mine[0]!.id)!.read_at, once.read_at, 'read_at of an already read one kept')
  t.equal((await db.selectFrom('notifications').select('read').where('id', '=', bobs[0]!.id).executeTakeFirstOrThrow()).read, false, 'bob\'s untouched')
  const listed = (await carolNotes.list()).json().notifications as Array<{ read: boolean, read_at: string | null }>
  t.ok(listed.every((n) => n.read && typeof n.read_at === 'string'), 'the list shows them read')
  t.same((await client(app, write('carol@acme.test')).get(website.id)).json().project.notifications, [], 'projects/get shows no unread one')

  for (const [res, path] of [
    [await carolNotes.mark({ id: shortId(mine[0]!.id), extra: 1 }), '/extra'],
    [await carolNotes.markMany({ ids: [], extra: 1 }), '/extra'],
    [await carolNotes.markAll({ extra: 1 }), '/extra'],
    [await carolNotes.mark({}), '/id'],
    [await carolNotes.markMany({}), '/ids']
  ] as const) {
    t.equal(res.statusCode, 400, `400 for ${path}`)
    t.equal(res.json().code, 'invalid_input')
  }
})

t.test('list: a notification about a project the person cannot see is left out until they can; one about no project is listed', async (t) => {
  const bobNotes = notes(readOnly('bob@acme.test'))
  const [seen, secret] = await notifyOf(db, [
    { person_id: bob.id, project_id: website.id, action: 'project_closed', inserted_at: new Date(Date.now() + 3000) },
    { person_id: bob.id, project_id: internal.id, action: 'project_closed', inserted_at: new Date(Date.now() + 2000) }
  ])
  const none = await db.insertInto('notifications').values({ person_id: bob.id, project_id: null, action: 'space_joined', inserted_at: new Date(Date.now() + 1000) })
    .returning('id').executeTakeFirstOrThrow()
  const ours = () => [seen!.id, secret!.id, none!.id].map(shortId)
  const listed = async () => ((await bobNotes.list()).json().notifications as Array<{ id: string, project: { name: string } | null }>)
    .filter((n) => ours().includes(n.id)).map((n) => [n.id, n.project?.name ?? null])
  const websiteName = (await db.selectFrom('projects').select('name').where('id', '=', website.id).executeTakeFirstOrThrow()).name
  t.same(await listed(), [[shortId(seen!.id), websiteName], [shortId(none!.id), null]], 'the secret project\'s is left out')
  await db.updateTable('projects').set({ company_access: 10 }).where('id', '=', internal.id).execute()
  t.same(await listed(), [[shortId(seen!.id), websiteName], [shortId(secret!.id), 'Internal Tools'], [shortId(none!.id), null]], 'listed, with its name, once the company may view it')
  await db.updateTable('projects').set({ company_access: 0 }).where('id', '=', internal.id).execute()
  t.same((await listed()).map(([id]) => id), [shortId(seen!.id), shortId(none!.id)], 'left out again')
  await db.deleteFrom('notifications').where('id', 'in', [seen!.id, secret!.id, none!.id]).execute()
})

t.test("the nested activity: Operately's content for a rename, the recorded fields for other actions, null without one", async (t) => {
  const at = new Date(Date.now() + 3_600_000) // newest of carol's
  const activityOf = async (action: string, content: Record<string, unknown>) => (await db.insertInto('activities').values({
    company_id: alice.company_id, project_id: website.id, author_id: alice.id, action, content: JSON.stringify(content), inserted_at: at
  }).returning('id').executeTakeFirstOrThrow()).id
  const renamed = await activityOf('project_renamed', { old_name: 'Old Site', new_name: website.name })
  const paused = await activityOf('project_paused', { message: '{"type":"doc"}' })
  const ids = []
  for (const [activityId, action, offset] of [[renamed, 'project_renamed', 3], [paused, 'project_paused', 2], [null, 'project_closed', 1]] as const) {
    ids.push((await db.insertInto('notifications').values({
      person_id: carol.id, project_id: activityId === null ? null : website.id, activity_id: activityId, author_id: activityId === null ? null : alice.id,
      action, inserted_at: new Date(at.getTime() + offset)
    }).returning('id').executeTakeFirstOrThrow()).id)
  }
  const items = (await notes(write('carol@acme.test')).list({ per_page: '3' })).json().notifications
  const project = { id: sluggedId(website.id, website.name), name: website.name }
  t.strictSame(items.map((n: { id: string }) => n.id), ids.map(shortId), 'newest first')
  t.match(items[0].activity, { id: shortId(renamed), action: 'project_renamed', inserted_at: at.toISOString(), author: { id: shortId(alice.id) } })
  t.strictSame(items[0].activity.content, { project, old_name: 'Old Site', new_name: website.name })
  t.strictSame(items[1].activity.content, { message: '{"type":"doc"}', project })
  t.equal(items[2].activity, null, 'a notification of no activity has none')
  t.equal(items[2].author, null)
  await db.deleteFrom('notifications').where('id', 'in', ids).execute()
  await db.deleteFrom('activities').where('id', 'in', [renamed, paused]).execute()
})
