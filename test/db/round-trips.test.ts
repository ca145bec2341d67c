// How many statements each request sends to the database: one, the token's check
// included (db/caller.ts), for every operation that succeeds or is refused after
// its statement (403, 404 of a project): a mutation, a get and a page of projects
// however many milestones, contributors, subscribers or check-ins the projects
// have; get_me and companies/get with or without the company's people; a
// description change with 100 subscribers and 20 mentions; every notification and
// webhook operation. Conditional requests too: a get answered 304, a save with
// If-Match that succeeds and one that fails (412) are one statement; only a save
// that waited for a change committed meanwhile and then failed reads the project
// once more, for its current tag. A refused token costs at most two: the
// operation's statement, then the lookup that says why.
import t from 'tap'
import { sql, type LogEvent } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import { shortId } from '../../src/ids.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, notifyOf, projectActivities, projectRow, tokenFor } from '../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const statements: string[] = []
const { app, db, url } = await build(t, {
  log: (event: LogEvent) => { statements.push(event.query.sql) }
})
// Whatever the app reads once at start (the cursor key) is read now, not inside the first request counted.
await app.ready()

/** The response and the statements sent while the app answered it. */
async function counted (request: () => Promise<LightMyRequestResponse>) {
  statements.length = 0
  const res = await request()
  return { res, sql: [...statements] }
}

const OLD = '2020-01-02T03:04:05.678Z'
const at = (iso: string) => new Date(iso)

const company = await createCompany(db)
const champion = await createPerson(db, company.id, { fullName: 'Chris Champion' })
const viewer = await createPerson(db, company.id, { fullName: 'Vera Viewer' })
const outsider = await createPerson(db, (await createCompany(db)).id)
const space = await createSpace(db, company.id, [champion.id])
const championToken = (await tokenFor(db, champion.email)).token
const api = {
  championHeader: `Bearer ${championToken}`,
  champion: client(app, championToken),
  viewer: client(app, (await tokenFor(db, viewer.email)).token),
  outsider: client(app, (await tokenFor(db, outsider.email)).token)
}

/** Company members may view, not edit; the champion edits; other companies see nothing. */
async function smallProject () {
  const p = await createProject(db, space, { name: 'Small', access: { company: 10 } })
  await addContributor(db, p.id, champion.id, 'champion')
  await db.updateTable('projects').set({ updated_at: OLD }).where('id', '=', p.id).execute()
  return { ...p, description: null }
}

const LARGE_DESCRIPTION = '{"type":"doc","content":[]}'
const MILESTONES = 200
const CONTRIBUTORS = 100

/** The same access, and something in every part of the aggregate, much of it. */
let larges = 0
async function largeProject () {
  const serial = ++larges
  const p = await createProject(db, space, { name: 'Large', description: LARGE_DESCRIPTION, access: { company: 10 } })
  await addContributor(db, p.id, champion.id, 'champion')
  const people = await db.insertInto('people').values(Array.from({ length: CONTRIBUTORS }, (_, i) => ({
    company_id: company.id,
    email: `large-${serial}-${i}-${process.pid}@example.test`,
    full_name: `Contributor ${String(i).padStart(3, '0')}`,
    title: i % 2 === 0 ? 'Engineer' : null,
    avatar_url: null
  }))).returning('id').execute()
  await db.insertInto('project_contributors').values(people.map((person, i) => ({
    project_id: p.id, person_id: person.id, role: i === 0 ? 'reviewer' as const : 'contributor' as const,
    responsibility: i % 3 === 0 ? 'Design' : null, access_level: i === 0 ? null : 40 as const
  }))).execute()

  const milestones = await db.insertInto('project_milestones').values(Array.from({ length: MILESTONES }, (_, i) => ({
    project_id: p.id,
    title: `Milestone ${i}`,
    status: i % 4 === 0 ? 'done' as const : 'pending' as const,
    due_date: `2027-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
    inserted_at: at(`2026-01-01T00:00:00.${String(i).padStart(3, '0')}Z`)
  }))).returning('id').execute()
  const ordering = milestones.map((m) => m.id).reverse()

  const goal = await db.insertInto('goals').values({
    company_id: company.id, space_id: space.id, name: 'Grow', status: 'on_track', closed_at: null, archived_at: null,
    timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null,
    timeframe_end_type: 'year', timeframe_end_value: '2027', timeframe_end_date: '2027-12-31'
  }).returning('id').executeTakeFirstOrThrow()
  await db.updateTable('projects').set({
    goal_id: goal.id,
    milestones_ordering_state: sql<string[]>`ARRAY[${sql.join(ordering.map((id) => sql`${id}::uuid`))}]`,
    tasks_kanban_state: JSON.stringify({ todo: ['t1'], done: [] }),
    next_check_in_scheduled_at: at('2099-01-01T09:00:00.000Z'),
    timeframe_start_type: 'quarter',
    timeframe_start_value: 'Q1 2027',
    timeframe_start_date: '2027-01-01',
    updated_at: OLD
  }).where('id', '=', p.id).execute()

  const list = await db.insertInto('subscription_lists').values({ project_id: p.id }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('subscriptions').values(people.map((person, i) => ({
    subscription_list_id: list.id, person_id: person.id, type: 'invited' as const, canceled: i % 5 === 0
  }))).execute()
  await db.insertInto('project_check_ins').values(Array.from({ length: 50 }, (_, i) => ({
    project_id: p.id, author_id: champion.id, status: 'on_track' as const, description: `{"n":${i}}`,
    inserted_at: at(`2026-02-01T00:00:${String(i).padStart(2, '0')}.000Z`)
  }))).execute()
  await db.insertInto('project_key_resources').values(Array.from({ length: 30 }, (_, i) => ({
    project_id: p.id, title: `Resource ${i}`, link: `https://example.test/${i}`
  }))).execute()
  await notifyOf(db, Array.from({ length: 40 }, (_, i) => ({
    person_id: champion.id, project_id: p.id, action: 'project_check_in_submitted', read: i % 2 === 0
  })))
  await db.insertInto('project_task_statuses').values([
    { project_id: p.id, label: 'To do', color: 'gray', index: 0, value: 'todo' },
    { project_id: p.id, label: 'Done', color: 'green', index: 1, value: 'done', closed: true }
  ]).execute()
  await db.insertInto('project_retrospectives').values({ project_id: p.id, author_id: champion.id, content: '{"text":"so far"}' }).execute()
  await db.insertInto('project_pins').values({ person_id: champion.id, project_id: p.id }).execute()
  return { ...p, description: LARGE_DESCRIPTION, ordering }
}

/** One statement, which checks the token and changes the project. */
const mutation = (sent: string[]) => sent.length === 1 && /"api_tokens"/.test(sent[0]!) && /update "projects"/.test(sent[0]!)
/** One statement, which checks the token and does the operation's work. */
const single = (sent: string[]) => sent.length === 1 && /"api_tokens"/.test(sent[0]!)

/** Every kind of request once, in order, with the statements each sent. */
async function roundTrips (t: Tap, p: { id: string, publicId: string, name: string, description: string | null }) {
  const counts: Record<string, number> = {}
  // The activities its notifications tell of (largeProject) are not this test's.
  const setUp = new Set((await projectActivities(db, p.id)).map((a) => a.id))

  const renamed = await counted(() => api.champion.updateName({ project_id: p.publicId, name: `${p.name} renamed` }))
  t.equal(renamed.res.statusCode, 200)
  t.equal(renamed.res.json().project.name, `${p.name} renamed`)
  t.not(renamed.res.json().project.updated_at, OLD, 'updated_at advanced')
  t.ok(mutation(renamed.sql), 'one statement, the token check included')
  counts.update_name = renamed.sql.length

  const same = await counted(() => api.champion.updateName({ project_id: p.publicId, name: ` ${p.name} renamed ` }))
  t.equal(same.res.statusCode, 200)
  t.equal(same.res.body, renamed.res.body, 'the same value again: the very same project')
  t.ok(mutation(same.sql))
  counts.update_name_same = same.sql.length

  const description = `{"type":"doc","content":[{"text":"${p.name}"}]}`
  const described = await counted(() => api.champion.updateDescription({ project_id: p.publicId, description }))
  t.equal(described.res.statusCode, 200)
  t.equal(described.res.json().project.description, description)
  t.equal(described.res.json().project.name, `${p.name} renamed`, 'carries the earlier rename')
  t.ok(mutation(described.sql))
  counts.update_description = described.sql.length

  const got = await counted(() => api.champion.get(p.publicId))
  t.equal(got.res.statusCode, 200)
  t.equal(got.res.body, described.res.body, 'the mutation answers byte for byte what get answers')
  t.ok(single(got.sql), 'one statement, the token check included')
  counts.get = got.sql.length

  const before = await projectRow(db, p.id)
  const forbidden = await counted(() => api.viewer.updateName({ project_id: p.publicId, name: 'Never' }))
  t.equal(forbidden.res.statusCode, 403)
  t.equal(forbidden.res.json().code, 'forbidden')
  t.ok(mutation(forbidden.sql))
  counts.forbidden = forbidden.sql.length

  const notFound = await counted(() => api.outsider.updateDescription({ project_id: p.publicId, description: '"never"' }))
  t.equal(notFound.res.statusCode, 404)
  t.equal(notFound.res.json().code, 'not_found')
  t.ok(mutation(notFound.sql))
  counts.not_found = notFound.sql.length

  const getNotFound = await counted(() => api.outsider.get(p.publicId))
  t.equal(getNotFound.res.statusCode, 404)
  t.ok(single(getNotFound.sql))
  counts.get_not_found = getNotFound.sql.length

  t.same(await projectRow(db, p.id), before, '403 and 404 changed nothing')
  const activities = (await projectActivities(db, p.id)).filter((a) => !setUp.has(a.id))
  t.same(activities.map((a) => [a.action, a.content]), [
    ['project_renamed', { old_name: p.name, new_name: `${p.name} renamed` }],
    ['project_description_changed', { old_description: p.description, new_description: description }]
  ], 'one activity per changing write')
  return { counts, project: described.res.json().project }
}

t.test('statements per request do not grow with the project', async (t) => {
  const small = await roundTrips(t, await smallProject())
  const large = await largeProject()
  const big = await roundTrips(t, large)

  t.same(big.counts, small.counts, 'the same count for a small and a large project')
  for (const [kind, count] of Object.entries(small.counts)) t.equal(count, 1, `${kind}: ${count} statements`)

  const project = big.project
  t.equal(project.milestones.length, MILESTONES)
  t.same(project.milestones.map((m: { id: string }) => m.id), large.ordering.map(shortId), 'in the ordering state')
  t.ok(project.contributors.length > CONTRIBUTORS, `${project.contributors.length} contributors`)
  t.equal(project.contributors[0].role, 'champion')
  t.equal(project.contributors[1].role, 'reviewer')
  t.equal(project.potential_subscribers.length, CONTRIBUTORS + 1)
  t.equal(project.subscription_list.subscriptions.length, CONTRIBUTORS)
  t.equal(project.last_check_in.description, '{"n":49}')
  t.equal(project.key_resources.length, 30)
  t.equal(project.notifications.length, 20)
  t.equal(project.task_statuses.length, 2)
  t.equal(project.is_pinned, true)
  t.equal(project.goal.name, 'Grow')
  t.same(project.timeframe.contextual_start_date, { date_type: 'quarter', value: 'Q1 2027', date: '2027-01-01' })
  t.equal(project.retrospective.content, '{"text":"so far"}')
  t.equal(project.my_role, 'champion')
  t.same(project.permissions, { can_view: true, can_comment: true, can_edit: true, has_full_access: true })

  const small2 = small.project
  t.same([small2.milestones, small2.contributors.length, small2.goal, small2.last_check_in], [[], 1, null, null])
})

t.test('rename, then describe: the second answer carries the new name and the new updated_at', async (t) => {
  const p = await smallProject()
  const renamed = await api.champion.updateName({ project_id: p.publicId, name: 'First step' })
  const described = await api.champion.updateDescription({ project_id: p.publicId, description: '"second step"' })
  t.equal(described.statusCode, 200)
  const project = described.json().project
  t.equal(project.name, 'First step')
  t.equal(project.description, '"second step"')
  t.equal(project.id, renamed.json().project.id)
  const row = await projectRow(db, p.id)
  t.equal(project.updated_at, new Date(row.updated_at as string).toISOString())
  t.ok(project.updated_at >= renamed.json().project.updated_at)
  t.equal((await projectActivities(db, p.id)).length, 2)
})

// PGlite has one connection: a transaction holding the row would block the request itself.
t.test('a mutation that waits for the row answers with what the other transaction committed', { skip: url === undefined && 'needs concurrent connections (real PostgreSQL)' }, async (t) => {
  const p = await smallProject()
  let pending: Promise<LightMyRequestResponse> | undefined
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('projects').set({ name: 'Committed meanwhile', updated_at: sql`now()` }).where('id', '=', p.id).execute()
    pending = api.champion.updateDescription({ project_id: p.publicId, description: '"after the wait"' })
    for (let i = 0; i < 500; i++) {
      const waiting = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db)
      if (waiting.rows[0]!.n > 0) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    t.fail('the mutation never waited for the row')
  })
  const res = await pending!
  t.equal(res.statusCode, 200)
  t.equal(res.json().project.name, 'Committed meanwhile', 'the locked row is the latest committed one')
  t.equal(res.json().project.description, '"after the wait"')
  const row = await projectRow(db, p.id)
  t.same([row.name, row.description], ['Committed meanwhile', '"after the wait"'])
  t.equal(res.json().project.updated_at, new Date(row.updated_at as string).toISOString())
  const [activity] = await projectActivities(db, p.id)
  t.same(activity?.content, { old_description: null, new_description: '"after the wait"' })
})

t.test('get_me and companies/get: one statement, the token check included, with or without the lists', async (t) => {
  const cases: Array<[string, () => Promise<LightMyRequestResponse>]> = [
    ['get_me', () => api.viewer.getMe()],
    ['get_me, include_manager', () => api.viewer.getMe({ include_manager: 'true' })],
    ['companies/get', () => api.viewer.getCompany()],
    ['companies/get, admins and people', () => api.viewer.getCompany({ include_admins: 'true', include_people: 'true' })]
  ]
  for (const [what, request] of cases) {
    const { res, sql: sent } = await counted(request)
    t.equal(res.statusCode, 200, what)
    t.ok(single(sent), `${what}: ${sent.length} statements, the token check included`)
  }
  const people = await db.selectFrom('people').select('id').where('company_id', '=', company.id).where('suspended_at', 'is', null).execute()
  const listed = (await api.viewer.getCompany({ include_people: 'true' })).json().company.people
  t.equal(listed.length, people.length, `all ${people.length} people in the one statement`)
})

t.test('a description change with 100 subscribers and 20 mentions is still one statement, and so is every notification operation', async (t) => {
  const p = await createProject(db, space, { name: 'Mentions', access: { company: 10 } })
  await addContributor(db, p.id, champion.id, 'champion')
  const insertPeople = async (prefix: string, n: number) => db.insertInto('people').values(Array.from({ length: n }, (_, i) => ({
    company_id: company.id, email: `${prefix}-${i}-${process.pid}@example.test`, full_name: `${prefix} ${i}`, title: null, avatar_url: null
  }))).returning(['id', 'email']).execute()
  const subscribers = await insertPeople('subscriber', 100)
  const newcomers = await insertPeople('newcomer', 10)
  const list = await db.insertInto('subscription_lists').values({ project_id: p.id }).returning('id').executeTakeFirstOrThrow()
  // 90 joined, 10 mentioned; of the mentioned, the first five are mentioned again.
  await db.insertInto('subscriptions').values(subscribers.map((s, i) => ({
    subscription_list_id: list.id, person_id: s.id, type: i < 90 ? 'joined' as const : 'mentioned' as const
  }))).execute()
  const mentioned = [...subscribers.slice(0, 5), ...subscribers.slice(90, 95), ...newcomers]
  t.equal(mentioned.length, 20)
  const description = JSON.stringify({
    type: 'doc',
    content: [{ type: 'paragraph', content: mentioned.map((m) => ({ type: 'mention', attrs: { id: shortId(m.id) } })) }]
  })

  const described = await counted(() => api.champion.updateDescription({ project_id: p.publicId, description }))
  t.equal(described.res.statusCode, 200)
  t.ok(mutation(described.sql), `one statement (${described.sql.length} sent)`)

  const [activity] = await projectActivities(db, p.id)
  const notified = (await db.selectFrom('notifications').select('person_id').where('activity_id', '=', activity!.id).execute()).map((r) => r.person_id).sort()
  const expected = [...subscribers.slice(0, 95), ...newcomers].map((s) => s.id).sort()
  t.same(notified, expected, '90 joined, 5 still mentioned and 10 newly mentioned notified; 5 no longer mentioned not')
  const subscriptions = await db.selectFrom('subscriptions').select(['person_id', 'type']).where('subscription_list_id', '=', list.id).execute()
  t.equal(subscriptions.length, 110)
  t.same(subscriptions.filter((s) => newcomers.some((n) => n.id === s.person_id)).map((s) => s.type), Array(10).fill('mentioned'))
  t.equal(described.res.json().project.subscription_list.subscriptions.length, 110, 'the answer shows them')

  // The notification operations, as one of the newly mentioned people.
  const token = (await tokenFor(db, newcomers[0]!.email)).token
  const headers = { authorization: `Bearer ${token}` }
  const mine = await db.selectFrom('notifications').select('id').where('person_id', '=', newcomers[0]!.id).execute()
  t.equal(mine.length, 1)
  const N = '/api/external/v1/notifications'
  const cases: Array<[string, () => Promise<LightMyRequestResponse>]> = [
    ['notifications/list', () => app.inject({ method: 'GET', url: `${N}/list`, headers })],
    ['notifications/get_unread_count', () => app.inject({ method: 'GET', url: `${N}/get_unread_count`, headers })],
    ['notifications/mark_as_read', () => app.inject({ method: 'POST', url: `${N}/mark_as_read`, headers, payload: { id: shortId(mine[0]!.id) } })],
    ['notifications/mark_many_as_read', () => app.inject({ method: 'POST', url: `${N}/mark_many_as_read`, headers, payload: { ids: [shortId(mine[0]!.id)] } })],
    ['notifications/mark_many_as_read, none', () => app.inject({ method: 'POST', url: `${N}/mark_many_as_read`, headers, payload: { ids: [] } })],
    ['notifications/mark_all_as_read', () => app.inject({ method: 'POST', url: `${N}/mark_all_as_read`, headers, payload: {} })]
  ]
  for (const [what, request] of cases) {
    const { res, sql: sent } = await counted(request)
    t.equal(res.statusCode, 200, what)
    t.ok(single(sent), `${what}: ${sent.length} statements, the token check included`)
  }
  const unknown = await counted(() => app.inject({ method: 'POST', url: `${N}/mark_many_as_read`, headers, payload: { ids: [shortId(mine[0]!.id), shortId(subscribers[0]!.id)] } }))
  t.equal(unknown.res.statusCode, 404)
  t.ok(single(unknown.sql), 'a refused mark_many_as_read too')
})

t.test('conditional requests: a 304, a save with If-Match and a 412 are one statement, small or large', async (t) => {
  const headers = (name: string, value: string) => ({ authorization: api.championHeader, [name]: value })
  for (const p of [await smallProject(), await largeProject()]) {
    const setUp = (await projectActivities(db, p.id)).length
    const read = await api.champion.get(p.publicId)
    const tag = read.headers.etag as string
    t.match(tag, /^"[A-Za-z0-9_-]{43}"$/)

    const notModified = await counted(() => app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: p.publicId }, headers: headers('if-none-match', tag) }))
    t.equal(notModified.res.statusCode, 304)
    t.ok(single(notModified.sql), `304: ${notModified.sql.length} statements`)

    const saved = await counted(() => app.inject({ method: 'POST', url: '/api/external/v1/projects/update_name', headers: headers('if-match', tag), payload: { project_id: p.publicId, name: `${p.name} saved` } }))
    t.equal(saved.res.statusCode, 200)
    t.ok(mutation(saved.sql), `a save with If-Match: one statement (${saved.sql.length} sent)`)

    const stale = await counted(() => app.inject({ method: 'POST', url: '/api/external/v1/projects/update_description', headers: headers('if-match', tag), payload: { project_id: p.publicId, description: '"stale"' } }))
    t.equal(stale.res.statusCode, 412)
    t.ok(mutation(stale.sql), `a 412: one statement (${stale.sql.length} sent)`)
    t.equal(stale.res.headers.etag, saved.res.headers.etag, 'with the tag the save answered')
    t.equal((await projectActivities(db, p.id)).length, setUp + 1, 'the 412 wrote no activity')
  }
})

// PGlite has one connection: a transaction holding the row would block the request itself.
t.test('a stale If-Match that waited for a change committed meanwhile answers the tag of everything that change wrote', { skip: url === undefined && 'needs concurrent connections (real PostgreSQL)' }, async (t) => {
  const p = await smallProject()
  const tag = (await api.champion.get(p.publicId)).headers.etag as string
  let pending: Promise<{ res: LightMyRequestResponse, sql: string[] }> | undefined
  await db.transaction().execute(async (trx) => {
    // Another editor's change: the row, and a notification of the champion with its
    // activity (rows the waiting statement's snapshot cannot show).
    await trx.updateTable('projects').set({ name: 'Changed meanwhile', updated_at: sql`now()` }).where('id', '=', p.id).execute()
    await notifyOf(trx, [{ person_id: champion.id, project_id: p.id, action: 'project_renamed' }])
    pending = counted(() => app.inject({
      method: 'POST', url: '/api/external/v1/projects/update_name',
      headers: { authorization: api.championHeader, 'if-match': tag }, payload: { project_id: p.publicId, name: 'Lost' }
    }))
    for (let i = 0; i < 500; i++) {
      const waiting = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db)
      if (waiting.rows[0]!.n > 0) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    t.fail('the save never waited for the row')
  })
  const { res, sql: all } = await pending!
  const sent = all.filter((text) => !text.includes('pg_stat_activity')) // the test's own polling
  t.equal(res.statusCode, 412)
  t.equal(sent.length, 2, 'the statement, and a read of the project')
  t.ok(mutation(sent.slice(0, 1)) && /acc/.test(sent[1]!), 'in that order')
  const now = await api.champion.get(p.publicId)
  t.equal(now.json().project.notifications.length, 1, 'the change notified the champion')
  t.equal(res.headers.etag, now.headers.etag, 'the 412 carries the tag a read gives now')
  t.equal((await projectRow(db, p.id)).name, 'Changed meanwhile', 'nothing of the losing save was written')
  t.same((await projectActivities(db, p.id)).map((a) => a.action), ['project_renamed'], 'the other editor\'s activity alone')
})

t.test('projects/list: one statement per page, small or large, and for a cursor refused for another person', async (t) => {
  await largeProject()
  const championList = await counted(() => api.champion.list({ limit: '2' }))
  t.equal(championList.res.statusCode, 200)
  t.ok(single(championList.sql), `a page: ${championList.sql.length} statements`)
  const cursor = championList.res.json().next_cursor as string
  t.type(cursor, 'string')
  const next = await counted(() => api.champion.list({ limit: '2', cursor }))
  t.equal(next.res.statusCode, 200)
  t.ok(single(next.sql), 'the next page too')
  const theirs = await counted(() => api.viewer.list({ limit: '2', cursor }))
  t.equal(theirs.res.statusCode, 400)
  t.equal(theirs.res.json().code, 'invalid_input')
  t.ok(single(theirs.sql), 'another person\'s cursor: refused by the statement that found who calls')
})

t.test('every webhook operation is one statement, the token check included', async (t) => {
  const admin = await createPerson(db, company.id, { isAdmin: true })
  const hooks = client(app, (await tokenFor(db, admin.email)).token)
  const made = await counted(() => hooks.createWebhook({ url: 'https://8.8.8.8/hook' }))
  t.equal(made.res.statusCode, 200)
  t.ok(single(made.sql), `create: ${made.sql.length} statements`)
  const id = made.res.json().webhook.id as string
  const cases: Array<[string, () => Promise<LightMyRequestResponse>]> = [
    ['list', () => hooks.listWebhooks()],
    ['list_deliveries', () => hooks.listDeliveries({ webhook_id: id })],
    ['rotate_secret', () => hooks.rotateWebhookSecret(id)],
    ['delete', () => hooks.deleteWebhook(id)]
  ]
  for (const [what, request] of cases) {
    const { res, sql: sent } = await counted(request)
    t.equal(res.statusCode, 200, what)
    t.ok(single(sent), `${what}: ${sent.length} statements`)
  }
  const gone = await counted(() => hooks.deleteWebhook(id))
  t.equal(gone.res.statusCode, 404)
  t.ok(single(gone.sql), 'a webhook not found: one statement')
  const notAdmin = await counted(() => api.viewer.listWebhooks())
  t.equal(notAdmin.res.statusCode, 403)
  t.ok(single(notAdmin.sql), 'not an admin: one statement')
})

t.test('a refused token costs at most two statements, on every operation', async (t) => {
  const p = await smallProject()
  const readOnly = (await tokenFor(db, champion.email, { readOnly: true })).token
  const operations: Array<[string, string, string, object | undefined]> = [
    ['POST', 'projects/update_name', '', { project_id: p.publicId, name: 'Never' }],
    ['POST', 'projects/update_description', '', { project_id: p.publicId, description: '"never"' }],
    ['GET', 'projects/get', `?id=${p.publicId}`, undefined],
    ['GET', 'projects/list', '', undefined],
    ['GET', 'people/get_me', '', undefined],
    ['GET', 'companies/get', '', undefined],
    ['GET', 'notifications/list', '', undefined],
    ['GET', 'notifications/get_unread_count', '', undefined],
    ['POST', 'notifications/mark_as_read', '', { id: p.publicId }],
    ['POST', 'notifications/mark_many_as_read', '', { ids: [] }],
    ['POST', 'notifications/mark_all_as_read', '', {}],
    ['POST', 'webhooks/create', '', { url: 'https://8.8.8.8/hook' }],
    ['GET', 'webhooks/list', '', undefined],
    ['POST', 'webhooks/delete', '', { id: p.publicId }],
    ['POST', 'webhooks/rotate_secret', '', { id: p.publicId }],
    ['GET', 'webhooks/list_deliveries', `?webhook_id=${p.publicId}`, undefined]
  ]
  for (const [method, path, query, payload] of operations) {
    for (const [kind, token, status] of [['unknown', 'pat_unknown', 401], ['read-only', readOnly, method === 'POST' ? 403 : 200]] as const) {
      const { res, sql: sent } = await counted(() => app.inject({
        method, url: `/api/external/v1/${path}${query}`, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {})
      }))
      if (status === 200) continue // a read with a read-only token succeeds: counted above
      t.equal(res.statusCode, status, `${path}, ${kind} token`)
      t.ok(sent.length >= 1 && sent.length <= 2, `${path}, ${kind} token: ${sent.length} statements`)
      t.ok(sent.every((text) => /"api_tokens"/.test(text)))
    }
  }
})
