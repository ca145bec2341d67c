// POST /api/external/v1/projects/create: who may create where (Operately's table of
// space levels), what a new project holds (people, subscriptions, dates, levels),
// its record (activity, webhook delivery, notifications), and its input rules.
import t from '../../tap.js'
import type { LightMyRequestResponse } from 'fastify'
import { decodeId, shortId, sluggedId } from '../../../src/ids.js'
import { build, createCompany, createPerson, createSpace, expectInvalidInput, tokenFor } from '../../helper.js'

const { app, db } = await build(t)

const company = await createCompany(db)
const creator = await createPerson(db, company.id, { fullName: 'Cleo Creator' })
const champion = await createPerson(db, company.id, { fullName: 'Chris Champion' })
const reviewer = await createPerson(db, company.id, { fullName: 'Rita Reviewer' })
const space = await createSpace(db, company.id, [creator.id])
const goal = await db.insertInto('goals').values({ company_id: company.id, space_id: space.id, name: 'Grow', timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null, timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null })
  .returning(['id', 'name']).executeTakeFirstOrThrow()
const other = await createCompany(db)
const stranger = await createPerson(db, other.id)
const token = await tokenFor(db, creator.email)

const LEVELS = { anonymous_access_level: 0, company_access_level: 40, space_access_level: 70 }

async function create (body: Record<string, unknown>, bearer = token.token): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: '/api/external/v1/projects/create', headers: { authorization: `Bearer ${bearer}` }, payload: body })
}

async function projectCount (): Promise<number> {
  const row = await db.selectFrom('projects').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

t.test('creates a project with its people, subscriptions, start date, activity, event and notifications', async (t) => {
  await db.updateTable('spaces').set({ company_access: 10 }).where('id', '=', space.id).execute()
  const webhook = await db.insertInto('webhooks').values({ company_id: company.id, url: 'https://hooks.example.com/x', events: ['project.created'], secret: 'whsec_x' })
    .returning('id').executeTakeFirstOrThrow()
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'mention', attrs: { id: shortId(reviewer.id), label: 'Rita' } }] })
  const res = await create({
    space_id: shortId(space.id), name: '  Pricing page ', champion_id: shortId(champion.id), reviewer_id: reviewer.id,
    goal_id: sluggedId(goal.id, goal.name), description, ...LEVELS
  })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(Object.keys(body), ['project'])
  const p = body.project
  t.equal(Object.keys(p).length, 38)
  t.equal(p.name, 'Pricing page')
  t.equal(p.description, description)
  t.equal(p.space_id, shortId(space.id))
  t.equal(p.goal_id, sluggedId(goal.id, goal.name))
  t.same(p.access_levels, { public: 0, company: 40, space: 70 })
  t.equal(p.privacy, 'internal')
  t.equal(p.state, 'active')
  t.equal(p.status, 'pending')
  t.equal(p.champion.id, shortId(champion.id))
  t.equal(p.reviewer.id, shortId(reviewer.id))
  t.same(p.contributors.map((c: { role: string, person: { id: string } }) => [c.role, c.person.id]),
    [['champion', shortId(champion.id)], ['reviewer', shortId(reviewer.id)], ['contributor', shortId(creator.id)]])
  t.equal(p.my_role, 'contributor')
  t.same(p.permissions, { can_view: true, can_comment: true, can_edit: true, has_full_access: true })
  t.same(p.subscription_list.subscriptions.map((s: { type: string, person: { id: string } }) => [s.type, s.person.id]).sort(),
    [['invited', shortId(champion.id)], ['invited', shortId(creator.id)], ['invited', shortId(reviewer.id)]].sort())
  t.equal(p.timeframe.contextual_start_date.date_type, 'day')
  t.equal(p.timeframe.contextual_start_date.date, new Date().toISOString().slice(0, 10))
  t.equal(p.timeframe.contextual_end_date, null)
  t.same(p.task_statuses.map((s: { value: string }) => s.value), ['pending', 'in_progress', 'done', 'canceled'])
  t.match(res.headers.etag, /^"[^"]+"$/)

  const id = decodeId(p.id)!
  const got = await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: p.id }, headers: { authorization: `Bearer ${token.token}` } })
  t.equal(got.statusCode, 200)
  t.same(got.json().project, p, 'get answers what create answered')
  t.equal(got.headers.etag, res.headers.etag)

  const activities = await db.selectFrom('activities').selectAll().where('project_id', '=', id).execute()
  t.equal(activities.length, 1)
  t.equal(activities[0]!.action, 'project_created')
  t.equal(activities[0]!.author_id, creator.id)
  t.equal(activities[0]!.token_id, token.id)
  const deliveries = await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhook.id).execute()
  t.equal(deliveries.length, 1)
  t.equal(deliveries[0]!.event_type, 'project.created')
  t.equal(deliveries[0]!.event_id, activities[0]!.id)
  t.match(deliveries[0]!.payload, { data: { change: { space: { id: shortId(space.id) }, champion: { id: shortId(champion.id) } } } })
  const told = await db.selectFrom('notifications').select(['person_id', 'action']).where('project_id', '=', id).orderBy('person_id').execute()
  t.same(told.map((n) => n.person_id).sort(), [champion.id, reviewer.id].sort(), 'the subscribers but the creator')
  t.ok(told.every((n) => n.action === 'project_created'))
  await db.deleteFrom('webhooks').where('id', '=', webhook.id).execute()
})

t.test('a creator who is the champion is not a contributor twice; no company access in a space closed to it', async (t) => {
  await db.updateTable('spaces').set({ company_access: 0 }).where('id', '=', space.id).execute()
  const res = await create({ space_id: space.id, name: 'Solo', champion_id: shortId(creator.id), anonymous_access_level: 10, company_access_level: 100, space_access_level: 40 })
  t.equal(res.statusCode, 200)
  const p = res.json().project
  t.same(p.access_levels, { public: 10, company: 0, space: 40 })
  t.same(p.contributors.map((c: { role: string }) => c.role), ['champion'])
  t.equal(p.my_role, 'champion')
  t.equal(p.goal, null)
  t.equal(p.reviewer, null)
  const edit = await create({ space_id: space.id, name: 'Not public', anonymous_access_level: 70, company_access_level: 0, space_access_level: 0 })
  t.equal(edit.json().project.access_levels.public, 0, 'only view is ever given to anyone, as Operately does')
})

// Operately's create_test.exs: company members by the space's company level, and space members by their own.
const TABLE: Array<{ company: number, member: number | null, admin?: boolean, expected: number }> = [
  { company: 0, member: null, expected: 404 },
  { company: 10, member: null, expected: 403 },
  { company: 40, member: null, expected: 403 },
  { company: 70, member: null, expected: 200 },
  { company: 100, member: null, expected: 200 },
  { company: 0, member: 10, expected: 403 },
  { company: 0, member: 40, expected: 403 },
  { company: 0, member: 70, expected: 200 },
  { company: 0, member: 100, expected: 200 },
  { company: 0, member: null, admin: true, expected: 200 }
]

for (const row of TABLE) {
  t.test(`space company=${row.company} member=${row.member ?? 'none'}${row.admin ? ' admin' : ''}: ${row.expected}`, async (t) => {
    const person = await createPerson(db, company.id, { isAdmin: row.admin ?? false })
    const s = await createSpace(db, company.id)
    await db.updateTable('spaces').set({ company_access: row.company as 0 }).where('id', '=', s.id).execute()
    if (row.member !== null) await db.insertInto('space_members').values({ space_id: s.id, person_id: person.id, access_level: row.member as 0 }).execute()
    const before = await projectCount()
    const res = await create({ space_id: shortId(s.id), name: 'Tabled', ...LEVELS }, (await tokenFor(db, person.email)).token)
    t.equal(res.statusCode, row.expected)
    if (row.expected === 404) t.match(res.json(), { code: 'not_found', message: 'space not found' })
    if (row.expected === 403) t.match(res.json(), { code: 'forbidden' })
    t.equal(await projectCount(), before + (row.expected === 200 ? 1 : 0))
  })
}

t.test('unknown, undecodable and foreign spaces are one 404; foreign people 400; foreign goals 404', async (t) => {
  const foreignSpace = await createSpace(db, other.id, [stranger.id])
  const bodies = []
  for (const id of ['nope', shortId(foreignSpace.id), '00000000-0000-4000-8000-000000000000', shortId(goal.id)]) {
    const res = await create({ space_id: id, name: 'x', ...LEVELS })
    t.equal(res.statusCode, 404)
    bodies.push(res.json())
  }
  for (const b of bodies) t.same(b, bodies[0])
  const before = await projectCount()
  expectInvalidInput(t, await create({ space_id: space.id, name: 'x', champion_id: shortId(stranger.id), ...LEVELS }), '/champion_id')
  expectInvalidInput(t, await create({ space_id: space.id, name: 'x', reviewer_id: 'nope', ...LEVELS }), '/reviewer_id')
  expectInvalidInput(t, await create({ space_id: space.id, name: 'x', champion_id: champion.id, reviewer_id: shortId(champion.id), ...LEVELS }), '/reviewer_id')
  const foreignGoal = await db.insertInto('goals').values({ company_id: other.id, space_id: foreignSpace.id, name: 'Theirs', timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null, timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null })
    .returning('id').executeTakeFirstOrThrow()
  for (const goalId of [shortId(foreignGoal.id), 'nope']) {
    const res = await create({ space_id: space.id, name: 'x', goal_id: goalId, ...LEVELS })
    t.equal(res.statusCode, 404)
    t.match(res.json(), { code: 'not_found', message: 'goal not found' })
  }
  t.equal(await projectCount(), before, 'nothing written')
})

t.test('input rules: 400 and nothing written', async (t) => {
  const before = await projectCount()
  const ok = { space_id: space.id, name: 'x', ...LEVELS }
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...ok, extra: 1 }, '/extra'],
    [{ ...ok, name: '  ' }, '/name'],
    [{ ...ok, name: 12 }, '/name'],
    [{ ...ok, space_id: ' ' }, '/space_id'],
    [{ ...ok, space_id: null }, '/space_id'],
    [{ ...ok, champion_id: '' }, '/champion_id'],
    [{ ...ok, goal_id: 5 }, '/goal_id'],
    [{ ...ok, description: 'not json' }, '/description'],
    [{ ...ok, description: { type: 'doc' } }, '/description'],
    [{ ...ok, anonymous_access_level: 20 }, '/anonymous_access_level'],
    [{ ...ok, company_access_level: '40' }, '/company_access_level'],
    [{ ...ok, space_access_level: null }, '/space_access_level']
  ]
  for (const [body, path] of cases) {
    const res = await create(body)
    t.equal(res.statusCode, 400, `400 for ${JSON.stringify(body)}`)
    t.equal(res.json().code, 'invalid_input')
    t.match(JSON.stringify(res.json().details), path)
  }
  t.equal(await projectCount(), before)
})

t.test("levels left out are Operately's defaults for the space", async (t) => {
  const { company_access: was } = await db.selectFrom('spaces').where('id', '=', space.id).select('company_access').executeTakeFirstOrThrow()
  for (const [spaceLevel, expected] of [[0, { public: 0, company: 0, space: 40 }], [10, { public: 0, company: 10, space: 40 }], [70, { public: 0, company: 70, space: 70 }]] as const) {
    await db.updateTable('spaces').set({ company_access: spaceLevel }).where('id', '=', space.id).execute()
    const res = await create({ space_id: space.id, name: `Defaults ${spaceLevel}` })
    t.equal(res.statusCode, 200)
    t.same(res.json().project.access_levels, expected, `a space giving its company ${spaceLevel}`)
    const row = await db.selectFrom('projects').where('id', '=', decodeId(res.json().project.id)!).select(['public_access', 'company_access', 'space_access']).executeTakeFirstOrThrow()
    t.same(row, { public_access: expected.public, company_access: expected.company, space_access: expected.space })
  }
  const some = await create({ space_id: space.id, name: 'Some', space_access_level: 100 })
  t.same(some.json().project.access_levels, { public: 0, company: 70, space: 100 }, 'each level left out is defaulted alone')
  await db.updateTable('spaces').set({ company_access: was }).where('id', '=', space.id).execute()
})

t.test('a read-only token may not create; no token is 401', async (t) => {
  const readOnly = await tokenFor(db, creator.email, { readOnly: true })
  const res = await create({ space_id: space.id, name: 'x', ...LEVELS }, readOnly.token)
  t.equal(res.statusCode, 403)
  t.equal(res.json().code, 'read_only_token')
  const anonymous = await app.inject({ method: 'POST', url: '/api/external/v1/projects/create', payload: {} })
  t.equal(anonymous.statusCode, 401)
})
