// 50 editors change one project's description at once, each to a text of their own
// that mentions people: every acknowledged change is one activity, each of its
// recipients got exactly one notification of it, and a person mentioned by many of
// the concurrent changes ends with one subscription, not one per change.
import t from '../tap.js'
import { shortId } from '../../src/ids.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, projectActivities, tokenFor } from '../helper.js'

const EDITORS = 50
/** Editors who are also joined subscribers. */
const SUBSCRIBED_EDITORS = 5
const VIEWERS = 5

const { app, db } = await build(t)
const company = await createCompany(db)
const space = await createSpace(db, company.id)
const project = await createProject(db, space, { name: 'Busy', access: { company: 10 } })

const editors: Array<Awaited<ReturnType<typeof createPerson>>> = []
for (let i = 0; i < EDITORS; i++) {
  const editor = await createPerson(db, company.id)
  await addContributor(db, project.id, editor.id, i === 0 ? 'champion' : 'contributor', 70)
  editors.push(editor)
}
const viewers: Array<Awaited<ReturnType<typeof createPerson>>> = []
for (let i = 0; i < VIEWERS; i++) viewers.push(await createPerson(db, company.id))
// Mentioned by every change, subscribed by none yet.
const newcomer = await createPerson(db, company.id)
// A mentioned subscriber whom only the odd changes mention.
const sometimes = await createPerson(db, company.id)
// Subscribed, but canceled.
const canceled = await createPerson(db, company.id)

const list = await db.insertInto('subscription_lists').values({ project_id: project.id }).returning('id').executeTakeFirstOrThrow()
await db.insertInto('subscriptions').values([
  ...[...viewers, ...editors.slice(0, SUBSCRIBED_EDITORS)].map((p) => ({ subscription_list_id: list.id, person_id: p.id, type: 'joined' as const })),
  { subscription_list_id: list.id, person_id: sometimes.id, type: 'mentioned' as const },
  { subscription_list_id: list.id, person_id: canceled.id, type: 'joined' as const, canceled: true }
]).execute()

const tokens = await Promise.all(editors.map(async (e) => (await tokenFor(db, e.email)).token))
const mention = (id: string) => ({ type: 'mention', attrs: { id: shortId(id) } })
const descriptionOf = (i: number) => JSON.stringify({
  type: 'doc',
  content: [{
    type: 'paragraph',
    content: [{ type: 'text', text: `change ${i} ` }, mention(newcomer.id), ...(i % 2 === 1 ? [mention(sometimes.id)] : []), mention(canceled.id)]
  }]
})

t.test('50 concurrent description changes: one activity each, each recipient notified exactly once', async (t) => {
  const responses = await Promise.all(tokens.map((token, i) =>
    client(app, token).updateDescription({ project_id: project.publicId, description: descriptionOf(i) })))
  const statuses = responses.map((r) => r.statusCode)
  t.same(statuses, Array(EDITORS).fill(200), 'every change acknowledged')

  const activities = (await projectActivities(db, project.id)).filter((a) => a.action === 'project_description_changed')
  const acknowledged = responses.flatMap((r, i) => r.statusCode === 200 ? [descriptionOf(i)] : [])
  const recorded = activities.map((a) => (a.content as { new_description: string }).new_description)
  t.same([...recorded].sort(), [...acknowledged].sort(), 'one activity per acknowledged change, no other')

  const notifications = await db.selectFrom('notifications').select(['activity_id', 'person_id'])
    .where('project_id', '=', project.id).execute()
  const byActivity = new Map<string, string[]>()
  for (const n of notifications) {
    if (n.activity_id === null) continue
    byActivity.set(n.activity_id, [...(byActivity.get(n.activity_id) ?? []), n.person_id])
  }
  t.equal(notifications.length, [...byActivity.values()].reduce((sum, people) => sum + people.length, 0), 'every notification is of an activity')
  t.same([...byActivity.keys()].sort(), activities.map((a) => a.id).sort(), 'every activity notified someone, no notification of another activity')
  for (const activity of activities) {
    const i = recorded.indexOf((activity.content as { new_description: string }).new_description)
    const description = recorded[i]!
    const index = acknowledged.indexOf(description)
    const author = editors[responses.findIndex((r, n) => r.statusCode === 200 && descriptionOf(n) === description)]!
    t.equal(activity.author_id, author.id)
    const expected = [...viewers, ...editors.slice(0, SUBSCRIBED_EDITORS), newcomer, ...(description.includes(shortId(sometimes.id)) ? [sometimes] : [])]
      .filter((p) => p.id !== author.id).map((p) => p.id).sort()
    t.same((byActivity.get(activity.id) ?? []).sort(), expected, `change ${index}: each recipient once, nobody else`)
  }

  const subscriptions = await db.selectFrom('subscriptions').select(['person_id', 'type', 'canceled'])
    .where('subscription_list_id', '=', list.id).execute()
  const people = subscriptions.map((s) => s.person_id)
  t.equal(new Set(people).size, people.length, 'no person subscribed twice')
  t.same(subscriptions.filter((s) => s.person_id === newcomer.id).map((s) => [s.type, s.canceled]), [['mentioned', false]], 'the newcomer once, as mentioned')
  t.same(subscriptions.filter((s) => s.person_id === canceled.id).map((s) => s.canceled), [true], 'a canceled subscription stays canceled')
  t.equal((await db.selectFrom('subscription_lists').select('id').where('project_id', '=', project.id).execute()).length, 1, 'one list')
})

t.test('50 concurrent first mentions on a project without a list: one list, one subscription each', async (t) => {
  const bare = await createProject(db, space, { name: 'Bare', access: { company: 10 } })
  for (const [i, editor] of editors.entries()) await addContributor(db, bare.id, editor.id, i === 0 ? 'champion' : 'contributor', 70)
  const responses = await Promise.all(tokens.map((token, i) =>
    client(app, token).updateDescription({ project_id: bare.publicId, description: descriptionOf(i) })))
  t.same(responses.map((r) => r.statusCode), Array(EDITORS).fill(200))
  const lists = await db.selectFrom('subscription_lists').select('id').where('project_id', '=', bare.id).execute()
  t.equal(lists.length, 1, 'one list')
  const subscriptions = await db.selectFrom('subscriptions').select(['person_id', 'type']).where('subscription_list_id', '=', lists[0]!.id).orderBy('person_id').execute()
  t.same(subscriptions.map((s) => [s.person_id, s.type]), [newcomer.id, sometimes.id, canceled.id].sort().map((id) => [id, 'mentioned']), 'each mentioned person once')
  const activities = await projectActivities(db, bare.id)
  t.equal(activities.length, EDITORS)
  const counts = await db.selectFrom('notifications').select(['activity_id', 'person_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('project_id', '=', bare.id).groupBy(['activity_id', 'person_id']).execute()
  t.ok(counts.every((c) => Number(c.n) === 1), 'nobody notified twice of one change')
  const newcomerGot = counts.filter((c) => c.person_id === newcomer.id).length
  t.equal(newcomerGot, EDITORS, 'the newcomer, mentioned by every change, notified of each')
})
