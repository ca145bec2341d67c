// GET /api/external/v1/projects/get and the access model behind all three
// operations: who sees and who edits which project, the person-specific fields, the
// full shape of the Project object, the derived status and the public ids.
import { sql } from 'kysely'
import t from '../../tap.js'
import { decodeId, shortId, slug, sluggedId } from '../../../src/ids.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, notifyOf, tokenFor } from '../../helper.js'

const { app, db } = await build(t)

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const DATE = /^\d{4}-\d{2}-\d{2}$/
const SHORT = /^[0-9A-Za-z]{22}$/
const SLUGGED = /^(?:[a-z0-9]+(?:-[a-z0-9]+)*-)?[0-9A-Za-z]{22}$/
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i

const PROJECT_KEYS = [
  'access_levels', 'archived_at', 'champion', 'closed_at', 'contributors', 'description', 'goal', 'goal_id', 'id',
  'inserted_at', 'is_archived', 'is_outdated', 'is_pinned', 'key_resources', 'last_check_in', 'milestones',
  'milestones_ordering_state', 'my_role', 'name', 'next_check_in_scheduled_at', 'next_milestone', 'next_update_scheduled_at',
  'notifications', 'permissions', 'potential_subscribers', 'privacy', 'retrospective', 'reviewer', 'space', 'space_id', 'state',
  'status', 'subscription_list', 'success_status', 'task_statuses', 'tasks_kanban_state', 'timeframe', 'updated_at'
]

// ---- The cast --------------------------------------------------------------------

const acme = await createCompany(db, 'Acme Test Co')
const globex = await createCompany(db, 'Globex Test Co')

const admin = await createPerson(db, acme.id, { fullName: 'Ada Admin', isAdmin: true })
const member = await createPerson(db, acme.id, { fullName: 'Mia Member' })
const companyOnly = await createPerson(db, acme.id, { fullName: 'Cole Company' })
const contributor = await createPerson(db, acme.id, { fullName: 'Kim Contributor' })
const commenter = await createPerson(db, acme.id, { fullName: 'Kai Forty' })
const suspended = await createPerson(db, acme.id, { fullName: 'Xena Suspended', suspended: true })
const champion = await createPerson(db, acme.id, { fullName: 'Charlie Champion', title: 'Lead' })
const reviewer = await createPerson(db, acme.id, { fullName: 'Rita Reviewer' })
const outsider = await createPerson(db, globex.id, { fullName: 'Otto Outsider' })
const outsiderAdmin = await createPerson(db, globex.id, { fullName: 'Olga Other Admin', isAdmin: true })

const space = await createSpace(db, acme.id, [member.id, suspended.id, champion.id], 'Product')
const otherSpace = await createSpace(db, acme.id, [], 'Elsewhere')

// P: internal (company 40), the space edits.
const P = await createProject(db, space, { name: 'Website Redesign', access: { public: 0, company: 40, space: 70 } })
await addContributor(db, P.id, champion.id, 'champion')
await addContributor(db, P.id, reviewer.id, 'reviewer')
await addContributor(db, P.id, contributor.id, 'contributor', 70)
await addContributor(db, P.id, commenter.id, 'contributor', 40)
await addContributor(db, P.id, suspended.id, 'contributor', 70)

// Q: secret.
const Q = await createProject(db, space, { name: 'Internal Tools', access: { public: 0, company: 0, space: 0 } })
await addContributor(db, Q.id, champion.id, 'champion')

// U: public, view only.
const U = await createProject(db, otherSpace, { name: 'Open Roadmap', access: { public: 10, company: 0, space: 0 } })

// V: confidential, only the space sees it.
const V = await createProject(db, space, { name: 'Space Only', access: { public: 0, company: 0, space: 40 } })

const tokens = {
  champion: (await tokenFor(db, champion.email)).token,
  reviewer: (await tokenFor(db, reviewer.email)).token,
  admin: (await tokenFor(db, admin.email)).token,
  member: (await tokenFor(db, member.email)).token,
  contributor: (await tokenFor(db, contributor.email)).token,
  companyOnly: (await tokenFor(db, companyOnly.email)).token,
  commenter: (await tokenFor(db, commenter.email)).token,
  outsider: (await tokenFor(db, outsider.email)).token,
  outsiderAdmin: (await tokenFor(db, outsiderAdmin.email)).token,
  suspended: (await tokenFor(db, suspended.email)).token
}
type Who = keyof typeof tokens

const FULL = { can_view: true, can_comment: true, can_edit: true, has_full_access: true }
const EDIT = { can_view: true, can_comment: true, can_edit: true, has_full_access: false }
const COMMENT = { can_view: true, can_comment: true, can_edit: false, has_full_access: false }
const VIEW = { can_view: true, can_comment: false, can_edit: false, has_full_access: false }

type Expectation =
  | { see: true, edit: boolean, permissions: typeof FULL, role: 'champion' | 'reviewer' | 'contributor' | null }
  | { see: false }

const projects = { P, Q, U, V }
type Name = keyof typeof projects

const matrix: Record<Name, Partial<Record<Who, Expectation>>> = {
  P: {
    champion: { see: true, edit: true, permissions: FULL, role: 'champion' },
    reviewer: { see: true, edit: true, permissions: FULL, role: 'reviewer' },
    admin: { see: true, edit: true, permissions: FULL, role: null },
    member: { see: true, edit: true, permissions: EDIT, role: null },
    contributor: { see: true, edit: true, permissions: EDIT, role: 'contributor' },
    companyOnly: { see: true, edit: false, permissions: COMMENT, role: null },
    commenter: { see: true, edit: false, permissions: COMMENT, role: 'contributor' },
    outsider: { see: false },
    outsiderAdmin: { see: false }
  },
  Q: {
    champion: { see: true, edit: true, permissions: FULL, role: 'champion' },
    admin: { see: true, edit: true, permissions: FULL, role: null },
    reviewer: { see: false },
    member: { see: false },
    contributor: { see: false },
    companyOnly: { see: false },
    commenter: { see: false },
    outsider: { see: false },
    outsiderAdmin: { see: false }
  },
  U: {
    admin: { see: true, edit: true, permissions: FULL, role: null },
    champion: { see: true, edit: false, permissions: VIEW, role: null },
    member: { see: true, edit: false, permissions: VIEW, role: null },
    companyOnly: { see: true, edit: false, permissions: VIEW, role: null },
    outsider: { see: true, edit: false, permissions: VIEW, role: null },
    outsiderAdmin: { see: true, edit: false, permissions: VIEW, role: null }
  },
  V: {
    admin: { see: true, edit: true, permissions: FULL, role: null },
    member: { see: true, edit: false, permissions: COMMENT, role: null },
    champion: { see: true, edit: false, permissions: COMMENT, role: null },
    companyOnly: { see: false },
    contributor: { see: false },
    outsider: { see: false }
  }
}

const PRIVACY: Record<Name, string> = { P: 'internal', Q: 'secret', U: 'public', V: 'confidential' }

async function projectRow (id: string): Promise<Record<string, unknown>> {
  const result = await sql<{ row: Record<string, unknown> }>`SELECT to_jsonb(p) AS row FROM projects p WHERE p.id = ${id}`.execute(db)
  return result.rows[0]!.row
}

// The one body every hidden project answers with.
/** The one 404 of a project: unknown, undecodable or invisible alike. */
const notFound = { statusCode: 404, error: 'Not Found', code: 'not_found', message: 'project not found' }

t.test('an unknown or undecodable id is the one 404 body', async (t) => {
  for (const id of [shortId('00000000-0000-4000-8000-000000000000'), 'nonsense', '!!', 'website-redesign', '00000000-0000-4000-8000-000000000000', `x-${shortId('00000000-0000-4000-8000-000000000001')}`]) {
    const res = await client(app, tokens.admin).get(id)
    t.equal(res.statusCode, 404, id)
    t.same(res.json(), notFound)
  }
})

t.test('permission matrix for get, update_name and update_description', async (t) => {
  for (const [projectName, row] of Object.entries(matrix) as Array<[Name, Partial<Record<Who, Expectation>>]>) {
    const project = projects[projectName]
    for (const [who, expected] of Object.entries(row) as Array<[Who, Expectation]>) {
      const api = client(app, tokens[who])
      const what = `${who} on ${projectName}`
      const before = await projectRow(project.id)

      const got = await api.get(project.publicId)
      if (!expected.see) {
        t.equal(got.statusCode, 404, `${what}: get 404`)
        t.same(got.json(), notFound, `${what}: the common 404 body`)
        for (const res of [
          await api.updateName({ project_id: project.publicId, name: `Hidden rename by ${who}` }),
          await api.updateDescription({ project_id: project.publicId, description: `{"by":"${who}"}` })
        ]) {
          t.equal(res.statusCode, 404, `${what}: mutation 404`)
          t.same(res.json(), notFound)
        }
        t.same(await projectRow(project.id), before, `${what}: unchanged`)
        continue
      }

      t.equal(got.statusCode, 200, `${what}: get 200`)
      const seen = got.json().project
      t.same(seen.permissions, expected.permissions, `${what}: permissions`)
      t.equal(seen.my_role, expected.role, `${what}: my_role`)
      t.equal(seen.privacy, PRIVACY[projectName], `${what}: privacy`)

      const newName = `${projectName} renamed by ${who}`
      const newDescription = `{"by":"${who}","on":"${projectName}"}`
      const renamed = await api.updateName({ project_id: project.publicId, name: newName })
      const described = await api.updateDescription({ project_id: project.publicId, description: newDescription })
      if (expected.edit) {
        t.equal(renamed.statusCode, 200, `${what}: update_name 200`)
        t.equal(described.statusCode, 200, `${what}: update_description 200`)
        t.equal(renamed.json().project.name, newName)
        t.same(renamed.json().project.permissions, expected.permissions, `${what}: permissions after rename`)
        t.equal(renamed.json().project.my_role, expected.role)
        t.equal(described.json().project.description, newDescription)
        t.equal(described.json().project.name, newName)
        const after = await projectRow(project.id)
        t.equal(after.name, newName)
        t.equal(after.description, newDescription)
      } else {
        for (const res of [renamed, described]) {
          t.equal(res.statusCode, 403, `${what}: mutation 403`)
          t.match(res.json(), { statusCode: 403, error: 'Forbidden', code: 'forbidden', message: String })
        }
        t.same(await projectRow(project.id), before, `${what}: unchanged`)
      }
    }
  }
})

t.test('the permission check comes before the no-op: the current value is still 403 or 404', async (t) => {
  const current = await projectRow(P.id)
  for (const who of ['companyOnly', 'commenter'] as const) {
    const api = client(app, tokens[who])
    const renamed = await api.updateName({ project_id: P.publicId, name: current.name })
    t.equal(renamed.statusCode, 403, `${who}: same name is 403`)
    t.equal(renamed.json().code, 'forbidden')
    const described = await api.updateDescription({ project_id: P.publicId, description: current.description })
    t.equal(described.statusCode, 403, `${who}: same description is 403`)
  }
  const hidden = await projectRow(Q.id)
  const res = await client(app, tokens.member).updateName({ project_id: Q.publicId, name: hidden.name })
  t.equal(res.statusCode, 404)
  t.same(res.json(), notFound)
  t.same(await projectRow(P.id), current)
})

t.test('an archived project is still readable, flagged is_archived', async (t) => {
  const A = await createProject(db, space, { name: 'Archived Readable', access: { company: 40 }, archived: true })
  const before = await projectRow(A.id)
  const res = await client(app, tokens.admin).get(A.publicId)
  t.equal(res.statusCode, 200)
  t.equal(res.json().project.is_archived, true)
  t.match(res.json().project.archived_at, TIMESTAMP)
  t.equal(res.json().project.archived_at, new Date(before.archived_at as string).toISOString())
  const mutation = await client(app, tokens.admin).updateName({ project_id: A.publicId, name: 'No' })
  t.equal(mutation.statusCode, 404)
  t.same(mutation.json(), notFound)
  t.same(await projectRow(A.id), before)
})

t.test("a suspended person's token is 401 everywhere", async (t) => {
  const api = client(app, tokens.suspended)
  const before = await projectRow(P.id)
  for (const res of [
    await api.get(P.publicId),
    await api.get(Q.publicId),
    await api.updateName({ project_id: P.publicId, name: 'Suspended rename' }),
    await api.updateDescription({ project_id: P.publicId, description: '{}' })
  ]) {
    t.equal(res.statusCode, 401)
    t.match(res.json(), { statusCode: 401, error: 'Unauthorized', code: 'unauthenticated' })
    t.equal(res.headers['www-authenticate'], 'Bearer realm="api", error="invalid_token"')
  }
  t.same(await projectRow(P.id), before)
})

t.test('a read-only token may get', async (t) => {
  const readOnly = await tokenFor(db, champion.email, { readOnly: true })
  const res = await client(app, readOnly.token).get(P.publicId)
  t.equal(res.statusCode, 200)
  t.same(res.json().project.permissions, FULL)
})

t.test('get accepts every form of the id and refuses a blank one', async (t) => {
  const api = client(app, tokens.admin)
  const name = (await projectRow(P.id)).name as string
  for (const id of [P.publicId, sluggedId(P.id, name), shortId(P.id), P.id, P.id.toUpperCase(), `anything-at-all-${shortId(P.id)}`]) {
    const res = await api.get(id)
    t.equal(res.statusCode, 200, id)
    t.equal(res.json().project.id, sluggedId(P.id, name))
  }
  for (const id of ['', '   ']) {
    const res = await api.get(id)
    t.equal(res.statusCode, 400)
    t.match(res.json(), { code: 'invalid_input', details: [{ path: '/id' }] })
  }
  const missing = await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', headers: { authorization: `Bearer ${tokens.admin}` } })
  t.equal(missing.statusCode, 400)
  t.equal(missing.json().code, 'invalid_input')
})

// ---- The full shape ------------------------------------------------------------

const at = (iso: string) => new Date(iso)

async function richProject () {
  const amy = await createPerson(db, acme.id, { fullName: 'Amy Adams' })
  const zed = await createPerson(db, acme.id, { fullName: 'Zed Zimmer' })
  await db.updateTable('people').set({ type: 'guest', avatar_url: 'https://example.test/amy.png' }).where('id', '=', amy.id).execute()
  await db.updateTable('people').set({ avatar_url: 'https://example.test/charlie.png' }).where('id', '=', champion.id).execute()

  const goal = await db.insertInto('goals').values({
    company_id: acme.id,
    space_id: space.id,
    name: 'Grow Revenue',
    status: 'on_track',
    closed_at: null,
    archived_at: null,
    inserted_at: at('2026-01-01T10:00:00.100Z'),
    updated_at: at('2026-01-02T10:00:00.200Z'),
    timeframe_start_type: 'year',
    timeframe_start_value: '2027',
    timeframe_start_date: '2027-01-01',
    timeframe_end_type: 'year',
    timeframe_end_value: '2027',
    timeframe_end_date: '2027-12-31'
  }).returning(['id', 'name']).executeTakeFirstOrThrow()

  const R = await createProject(db, space, { name: 'Rich Project', description: '{"type":"doc","content":[]}', access: { public: 0, company: 10, space: 70 }, state: 'closed' })
  const people = { champion, reviewer, amy, zed, suspended }
  const champ = await addContributor(db, R.id, champion.id, 'champion')
  const rev = await addContributor(db, R.id, reviewer.id, 'reviewer')
  const zedC = await addContributor(db, R.id, zed.id, 'contributor', 40)
  const amyC = await addContributor(db, R.id, amy.id, 'contributor', 70)
  await addContributor(db, R.id, suspended.id, 'contributor', 100)
  await db.updateTable('project_contributors').set({ responsibility: 'Design' }).where('id', '=', amyC.id).execute()

  const milestone = (title: string, status: 'pending' | 'done', dueDate: string | null, insertedAt: string, extra: { description?: string, completedAt?: string } = {}) =>
    db.insertInto('project_milestones').values({
      project_id: R.id,
      title,
      status,
      description: extra.description ?? null,
      due_date: dueDate,
      completed_at: extra.completedAt ? at(extra.completedAt) : null,
      inserted_at: at(insertedAt)
    }).returning('id').executeTakeFirstOrThrow()
  const m1 = await milestone('Launch', 'pending', '2027-03-01', '2026-02-01T00:00:00.001Z', { description: '{"type":"doc"}' })
  const m2 = await milestone('Kick-off', 'done', '2027-01-15', '2026-02-02T00:00:00.002Z', { completedAt: '2027-01-14T12:00:00.500Z' })
  const m3 = await milestone('Beta', 'pending', '2027-02-01', '2026-02-03T00:00:00.003Z')
  const m4 = await milestone('Someday', 'pending', null, '2026-02-04T00:00:00.004Z')

  await db.updateTable('projects').set({
    goal_id: goal.id,
    milestones_ordering_state: sql<string[]>`ARRAY[${sql.join([m2.id, m1.id, m3.id].map((id) => sql`${id}::uuid`))}]`,
    tasks_kanban_state: JSON.stringify({ todo: ['t1', 't2'], done: [] }),
    next_check_in_scheduled_at: at('2099-01-01T09:00:00.000Z'),
    next_update_scheduled_at: at('2099-02-01T09:00:00.000Z'),
    closed_at: at('2026-06-30T18:00:00.250Z'),
    inserted_at: at('2026-01-05T08:00:00.123Z'),
    updated_at: at('2026-06-30T18:00:00.250Z'),
    timeframe_start_type: 'quarter',
    timeframe_start_value: 'Q1 2027',
    timeframe_start_date: '2027-01-01',
    timeframe_end_type: 'month',
    timeframe_end_value: 'June 2027',
    timeframe_end_date: '2027-06-30'
  }).where('id', '=', R.id).execute()

  const k1 = await db.insertInto('project_key_resources').values({ project_id: R.id, title: 'Repo', link: 'https://example.test/repo', resource_type: 'github', inserted_at: at('2026-03-01T00:00:00.000Z') }).returning('id').executeTakeFirstOrThrow()
  const k2 = await db.insertInto('project_key_resources').values({ project_id: R.id, title: 'Docs', link: 'https://example.test/docs', inserted_at: at('2026-03-02T00:00:00.000Z') }).returning('id').executeTakeFirstOrThrow()

  await db.insertInto('project_check_ins').values({ project_id: R.id, author_id: champion.id, status: 'off_track', description: '{"v":"old"}', inserted_at: at('2026-04-01T00:00:00.000Z') }).execute()
  const c2 = await db.insertInto('project_check_ins').values({
    project_id: R.id, author_id: champion.id, status: 'caution', description: '{"v":"new"}',
    acknowledged_at: at('2026-05-02T12:00:00.000Z'), acknowledged_by_id: reviewer.id, inserted_at: at('2026-05-01T00:00:00.000Z')
  }).returning('id').executeTakeFirstOrThrow()

  const retro = await db.insertInto('project_retrospectives').values({
    project_id: R.id, author_id: champion.id, content: '{"type":"doc","content":[{"text":"went well"}]}',
    success_status: 'achieved', closed_at: at('2026-06-30T18:00:00.250Z')
  }).returning('id').executeTakeFirstOrThrow()

  const ts2 = await db.insertInto('project_task_statuses').values({ project_id: R.id, label: 'Done', color: 'green', index: 2, value: 'done', closed: true }).returning('id').executeTakeFirstOrThrow()
  const ts0 = await db.insertInto('project_task_statuses').values({ project_id: R.id, label: 'To do', color: 'gray', index: 0, value: 'todo' }).returning('id').executeTakeFirstOrThrow()
  const ts1 = await db.insertInto('project_task_statuses').values({ project_id: R.id, label: 'Doing', color: 'blue', index: 1, value: 'doing' }).returning('id').executeTakeFirstOrThrow()

  const list = await db.insertInto('subscription_lists').values({ project_id: R.id, send_to_everyone: false }).returning('id').executeTakeFirstOrThrow()
  const s1 = await db.insertInto('subscriptions').values({ subscription_list_id: list.id, person_id: champion.id, type: 'joined', inserted_at: at('2026-02-10T00:00:00.000Z') }).returning('id').executeTakeFirstOrThrow()
  const s2 = await db.insertInto('subscriptions').values({ subscription_list_id: list.id, person_id: reviewer.id, type: 'mentioned', canceled: true, inserted_at: at('2026-02-11T00:00:00.000Z') }).returning('id').executeTakeFirstOrThrow()
  const s3 = await db.insertInto('subscriptions').values({ subscription_list_id: list.id, person_id: amy.id, type: 'invited', inserted_at: at('2026-02-12T00:00:00.000Z') }).returning('id').executeTakeFirstOrThrow()

  await db.insertInto('project_pins').values({ person_id: champion.id, project_id: R.id }).execute()

  const notification = async (personId: string, projectId: string, action: string, insertedAt: string, read = false) =>
    (await notifyOf(db, [{ person_id: personId, project_id: projectId, action, read, read_at: read ? at(insertedAt) : null, inserted_at: at(insertedAt) }]))[0]!
  const n1 = await notification(champion.id, R.id, 'project_check_in_acknowledged', '2026-05-02T12:00:00.000Z')
  const n2 = await notification(champion.id, R.id, 'project_closed', '2026-06-30T18:00:01.000Z')
  await notification(champion.id, R.id, 'project_check_in_submitted', '2026-05-01T00:00:01.000Z', true)
  await notification(champion.id, P.id, 'project_renamed', '2026-06-01T00:00:00.000Z')
  await notification(reviewer.id, R.id, 'project_closed', '2026-06-30T18:00:02.000Z')

  return { R, goal, people, contributors: { champ, rev, zedC, amyC }, milestones: { m1, m2, m3, m4 }, k1, k2, c2, retro, ts: [ts0, ts1, ts2], list, subs: [s1, s2, s3], n1, n2 }
}

t.test('the Project object: every key, every nested shape', async (t) => {
  const rich = await richProject()
  const { R, people } = rich
  const res = await client(app, tokens.champion).get(R.publicId)
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json()), ['project'])
  const project = res.json().project

  t.same(Object.keys(project).sort(), [...PROJECT_KEYS].sort(), 'exactly the keys of the contract')
  t.equal(PROJECT_KEYS.length, 38, 'the contract lists 38 keys')
  t.equal(Object.keys(project).length, 38)

  const personOf = (p: { id: string, email: string, full_name: string }, extra: { title?: string | null, avatar_url?: string | null, type?: string } = {}) => ({
    id: shortId(p.id),
    full_name: p.full_name,
    email: p.email,
    title: extra.title ?? null,
    avatar_url: extra.avatar_url ?? null,
    type: extra.type ?? 'human'
  })
  const CHAMPION = personOf(people.champion, { title: 'Lead', avatar_url: 'https://example.test/charlie.png' })
  const REVIEWER = personOf(people.reviewer)
  const AMY = personOf(people.amy, { avatar_url: 'https://example.test/amy.png', type: 'guest' })
  const ZED = personOf(people.zed)

  t.equal(project.id, sluggedId(R.id, 'Rich Project'))
  t.ok(project.id.startsWith(`${slug('Rich Project')}-`))
  t.equal(project.name, 'Rich Project')
  t.equal(project.description, '{"type":"doc","content":[]}')
  t.equal(project.goal_id, sluggedId(rich.goal.id, 'Grow Revenue'))
  t.equal(project.space_id, shortId(space.id))
  t.same(project.access_levels, { public: 0, company: 10, space: 70 })
  t.equal(project.archived_at, null)
  t.equal(project.closed_at, '2026-06-30T18:00:00.250Z')
  t.equal(project.inserted_at, '2026-01-05T08:00:00.123Z')
  t.equal(project.updated_at, '2026-06-30T18:00:00.250Z')
  t.equal(project.next_check_in_scheduled_at, '2099-01-01T09:00:00.000Z')
  t.equal(project.next_update_scheduled_at, '2099-02-01T09:00:00.000Z')
  t.equal(project.is_archived, false)
  t.equal(project.is_outdated, false)
  t.equal(project.is_pinned, true)
  t.same(project.champion, CHAMPION)
  t.same(project.reviewer, REVIEWER)

  t.same(project.contributors, [
    { id: shortId(rich.contributors.champ.id), role: 'champion', responsibility: null, access_level: 100, person: CHAMPION },
    { id: shortId(rich.contributors.rev.id), role: 'reviewer', responsibility: null, access_level: 100, person: REVIEWER },
    { id: shortId(rich.contributors.amyC.id), role: 'contributor', responsibility: 'Design', access_level: 70, person: AMY },
    { id: shortId(rich.contributors.zedC.id), role: 'contributor', responsibility: null, access_level: 40, person: ZED }
  ], 'champion, reviewer, then contributors by name; the suspended one left out')

  t.same(project.goal, {
    id: sluggedId(rich.goal.id, 'Grow Revenue'),
    name: 'Grow Revenue',
    status: 'on_track',
    is_closed: false,
    is_archived: false,
    timeframe: {
      contextual_start_date: { date_type: 'year', value: '2027', date: '2027-01-01' },
      contextual_end_date: { date_type: 'year', value: '2027', date: '2027-12-31' }
    },
    inserted_at: '2026-01-01T10:00:00.100Z',
    updated_at: '2026-01-02T10:00:00.200Z'
  })
  t.same(project.space, { id: shortId(space.id), name: 'Product' })
  t.same(project.key_resources, [
    { id: shortId(rich.k1.id), title: 'Repo', link: 'https://example.test/repo', resource_type: 'github' },
    { id: shortId(rich.k2.id), title: 'Docs', link: 'https://example.test/docs', resource_type: 'generic' }
  ])
  t.same(project.last_check_in, {
    id: shortId(rich.c2.id),
    status: 'caution',
    description: '{"v":"new"}',
    author: CHAMPION,
    inserted_at: '2026-05-01T00:00:00.000Z',
    acknowledged_at: '2026-05-02T12:00:00.000Z',
    acknowledged_by: REVIEWER
  })

  const { m1, m2, m3, m4 } = rich.milestones
  const M1 = { id: shortId(m1.id), title: 'Launch', status: 'pending', description: '{"type":"doc"}', due_date: '2027-03-01', completed_at: null, inserted_at: '2026-02-01T00:00:00.001Z' }
  const M2 = { id: shortId(m2.id), title: 'Kick-off', status: 'done', description: null, due_date: '2027-01-15', completed_at: '2027-01-14T12:00:00.500Z', inserted_at: '2026-02-02T00:00:00.002Z' }
  const M3 = { id: shortId(m3.id), title: 'Beta', status: 'pending', description: null, due_date: '2027-02-01', completed_at: null, inserted_at: '2026-02-03T00:00:00.003Z' }
  const M4 = { id: shortId(m4.id), title: 'Someday', status: 'pending', description: null, due_date: null, completed_at: null, inserted_at: '2026-02-04T00:00:00.004Z' }
  t.same(project.milestones, [M2, M1, M3, M4], 'in the order of milestones_ordering_state, the unplaced one last')
  t.same(project.milestones_ordering_state, [M2.id, M1.id, M3.id])
  t.same(project.next_milestone, M3, 'the pending milestone due first')

  t.equal(project.my_role, 'champion')
  // Newest first would be natural, but the contract fixes no order: compare as sets.
  const byId = <T extends { id: string }>(list: T[]) => [...list].sort((a, b) => a.id < b.id ? -1 : 1)
  t.same(byId(project.notifications), byId([
    { id: shortId(rich.n2.id), action: 'project_closed', read: false, read_at: null, inserted_at: '2026-06-30T18:00:01.000Z' },
    { id: shortId(rich.n1.id), action: 'project_check_in_acknowledged', read: false, read_at: null, inserted_at: '2026-05-02T12:00:00.000Z' }
  ]), "only the asker's unread ones about this project")
  t.same(project.permissions, FULL)

  t.same(project.potential_subscribers.map((s: { person: unknown }) => s.person), [CHAMPION, REVIEWER, AMY, ZED])
  t.same(project.potential_subscribers.map((s: { priority: boolean }) => s.priority), [true, true, false, false])
  t.same(project.potential_subscribers.map((s: { is_subscribed: boolean }) => s.is_subscribed), [true, false, true, false],
    'subscribed: a live subscription; a canceled one is not')
  for (const s of project.potential_subscribers) {
    t.same(Object.keys(s).sort(), ['is_subscribed', 'person', 'priority', 'role'])
    t.type(s.role, 'string')
    t.ok(s.role.length > 0)
  }
  t.ok(['champion', 'Lead'].includes(project.potential_subscribers[0].role), "the champion's role or title")
  t.ok(['contributor', 'Design'].includes(project.potential_subscribers[2].role), "Amy's role or responsibility")

  t.same(project.subscription_list, {
    id: shortId(rich.list.id),
    send_to_everyone: false,
    subscriptions: [
      { id: shortId(rich.subs[0]!.id), type: 'joined', canceled: false, person: CHAMPION },
      { id: shortId(rich.subs[1]!.id), type: 'mentioned', canceled: true, person: REVIEWER },
      { id: shortId(rich.subs[2]!.id), type: 'invited', canceled: false, person: AMY }
    ]
  })
  t.equal(project.privacy, 'internal')
  t.same(project.retrospective, {
    id: shortId(rich.retro.id),
    content: '{"type":"doc","content":[{"text":"went well"}]}',
    author: CHAMPION,
    closed_at: '2026-06-30T18:00:00.250Z',
    success_status: 'achieved'
  })
  t.equal(project.state, 'closed')
  t.equal(project.status, 'achieved')
  t.equal(project.success_status, 'achieved')
  t.same(project.task_statuses, [
    { id: shortId(rich.ts[0]!.id), label: 'To do', color: 'gray', index: 0, value: 'todo', closed: false },
    { id: shortId(rich.ts[1]!.id), label: 'Doing', color: 'blue', index: 1, value: 'doing', closed: false },
    { id: shortId(rich.ts[2]!.id), label: 'Done', color: 'green', index: 2, value: 'done', closed: true }
  ])
  t.type(project.tasks_kanban_state, 'string')
  t.same(JSON.parse(project.tasks_kanban_state), { todo: ['t1', 't2'], done: [] })
  t.same(project.timeframe, {
    contextual_start_date: { date_type: 'quarter', value: 'Q1 2027', date: '2027-01-01' },
    contextual_end_date: { date_type: 'month', value: 'June 2027', date: '2027-06-30' }
  })

  // Types and formats, walked over the whole document.
  walk(project, '', (path, key, value) => {
    if (/(^|_)at$/.test(key) && value !== null) t.match(value, TIMESTAMP, `${path} is a timestamp`)
    if ((key === 'date' || key === 'due_date') && value !== null) t.match(value, DATE, `${path} is a date`)
    if (typeof value === 'string') t.notMatch(value, UUID, `${path} carries no raw UUID`)
  })
  for (const id of collectIds(project)) {
    t.match(id.value, id.slugged ? SLUGGED : SHORT, `${id.path} is a public id`)
    t.ok(decodeId(id.value), `${id.path} decodes`)
  }

  // Someone else sees the same project with their own person-specific fields.
  const asReviewer = (await client(app, tokens.reviewer).get(R.publicId)).json().project
  t.equal(asReviewer.is_pinned, false, 'pinned only for the person who pinned')
  t.equal(asReviewer.my_role, 'reviewer')
  t.equal(asReviewer.notifications.length, 1)
  t.equal(asReviewer.notifications[0].action, 'project_closed')
  const asAdmin = (await client(app, tokens.admin).get(R.publicId)).json().project
  t.equal(asAdmin.is_pinned, false)
  t.equal(asAdmin.my_role, null)
  t.same(asAdmin.notifications, [])
  t.same(asAdmin.permissions, FULL)
  const asCompany = (await client(app, tokens.companyOnly).get(R.publicId)).json().project
  t.same(asCompany.permissions, VIEW)
  t.same({ ...asCompany, permissions: null, my_role: null, notifications: [], is_pinned: null },
    { ...project, permissions: null, my_role: null, notifications: [], is_pinned: null }, 'the rest is the same for everyone')
})

t.test('an empty project: nulls and empty arrays, never missing keys', async (t) => {
  const E = await createProject(db, space, { name: 'Bare', access: { company: 10 } })
  const res = await client(app, tokens.companyOnly).get(E.publicId)
  t.equal(res.statusCode, 200)
  const project = res.json().project
  t.same(Object.keys(project).sort(), [...PROJECT_KEYS].sort())
  for (const key of ['description', 'goal_id', 'archived_at', 'closed_at', 'next_check_in_scheduled_at', 'next_update_scheduled_at',
    'champion', 'reviewer', 'goal', 'last_check_in', 'next_milestone', 'my_role', 'subscription_list', 'retrospective',
    'success_status', 'timeframe']) {
    t.equal(project[key], null, `${key} is null`)
  }
  for (const key of ['contributors', 'key_resources', 'milestones', 'milestones_ordering_state', 'notifications', 'potential_subscribers', 'task_statuses']) {
    t.same(project[key], [], `${key} is []`)
  }
  for (const key of ['is_archived', 'is_outdated', 'is_pinned']) t.equal(project[key], false)
  t.match(project.inserted_at, TIMESTAMP)
  t.match(project.updated_at, TIMESTAMP)
  t.same(JSON.parse(project.tasks_kanban_state), {})
  t.equal(project.state, 'active')
  t.equal(project.status, 'pending')
  t.equal(project.privacy, 'internal')
  t.equal(project.id, `bare-${shortId(E.id)}`)
})

t.test('a timeframe with only an end: the start is null, the end complete', async (t) => {
  const F = await createProject(db, space, { name: 'Half timeframe', access: { company: 10 } })
  await db.updateTable('projects').set({ timeframe_end_type: 'day', timeframe_end_value: '2027-05-05', timeframe_end_date: '2027-05-05' }).where('id', '=', F.id).execute()
  const project = (await client(app, tokens.admin).get(F.publicId)).json().project
  t.same(project.timeframe, { contextual_start_date: null, contextual_end_date: { date_type: 'day', value: '2027-05-05', date: '2027-05-05' } })
})

t.test('milestones_ordering_state names only milestones the project still has, in its stored order', async (t) => {
  // The stored order can outlive a milestone (deleted) or name another project's;
  // those ids are left out, duplicates and the rest's order kept as stored.
  const O = await createProject(db, space, { name: 'Ordered', access: { company: 10 } })
  const other = await createProject(db, space, { name: 'Other ordered', access: { company: 10 } })
  const add = (projectId: string, title: string) => db.insertInto('project_milestones')
    .values({ project_id: projectId, title, status: 'pending' }).returning('id').executeTakeFirstOrThrow()
  const [a, b, gone, foreign] = [await add(O.id, 'A'), await add(O.id, 'B'), await add(O.id, 'Gone'), await add(other.id, 'Foreign')]
  const stored = [b.id, gone.id, foreign.id, a.id, b.id]
  await db.updateTable('projects').set({ milestones_ordering_state: sql<string[]>`ARRAY[${sql.join(stored.map((id) => sql`${id}::uuid`))}]` }).where('id', '=', O.id).execute()
  await db.deleteFrom('project_milestones').where('id', '=', gone.id).execute()

  const project = (await client(app, tokens.admin).get(O.publicId)).json().project
  t.same(project.milestones_ordering_state, [b.id, a.id, b.id].map(shortId))
  t.same(project.milestones.map((m: { title: string }) => m.title), ['B', 'A'], 'the milestones in that order')
})

// ---- Derived status ------------------------------------------------------------

async function statusOf (options: {
  state?: 'active' | 'paused' | 'closed'
  result?: 'achieved' | 'missed'
  checkIns?: Array<'on_track' | 'caution' | 'off_track'>
  nextCheckInDaysAgo?: number
}) {
  const p = await createProject(db, space, { access: { company: 10 }, state: options.state })
  if (options.result) await db.updateTable('projects').set({ success_status: options.result }).where('id', '=', p.id).execute()
  if (options.nextCheckInDaysAgo !== undefined) {
    await db.updateTable('projects')
      .set({ next_check_in_scheduled_at: sql<Date>`now() - make_interval(days => ${options.nextCheckInDaysAgo})` })
      .where('id', '=', p.id).execute()
  }
  for (const [i, status] of (options.checkIns ?? []).entries()) {
    await db.insertInto('project_check_ins').values({
      project_id: p.id, author_id: champion.id, status, description: null, inserted_at: sql<Date>`now() - make_interval(days => ${30 - i})`
    }).execute()
  }
  const res = await client(app, tokens.admin).get(p.publicId)
  return res.json().project as { status: string, is_outdated: boolean, success_status: string | null, state: string }
}

t.test('status is derived from state, result, schedule and the last check-in', async (t) => {
  t.match(await statusOf({}), { status: 'pending', is_outdated: false, state: 'active', success_status: null }, 'no check-in: pending')
  t.match(await statusOf({ checkIns: ['off_track', 'on_track'] }), { status: 'on_track', is_outdated: false })
  t.match(await statusOf({ checkIns: ['on_track', 'caution'] }), { status: 'caution', is_outdated: false }, 'the last check-in counts')
  t.match(await statusOf({ checkIns: ['caution', 'off_track'] }), { status: 'off_track' })
  t.match(await statusOf({ state: 'paused', checkIns: ['on_track'] }), { status: 'paused', state: 'paused', success_status: null })
  t.match(await statusOf({ state: 'paused', checkIns: ['caution'], nextCheckInDaysAgo: 10 }), { status: 'paused' })
  t.match(await statusOf({ state: 'closed', checkIns: ['off_track'] }), { status: 'achieved', success_status: 'achieved', state: 'closed' })
  t.match(await statusOf({ state: 'closed', result: 'missed', checkIns: ['on_track'] }), { status: 'missed', success_status: 'missed' })
  t.match(await statusOf({ state: 'closed', nextCheckInDaysAgo: 10 }), { status: 'achieved' })
  t.match(await statusOf({ nextCheckInDaysAgo: 4, checkIns: ['on_track'] }), { status: 'outdated', is_outdated: true }, 'overdue by 4 days')
  t.match(await statusOf({ nextCheckInDaysAgo: 4 }), { status: 'outdated', is_outdated: true }, 'overdue without any check-in')
  t.match(await statusOf({ nextCheckInDaysAgo: 2, checkIns: ['caution'] }), { status: 'caution', is_outdated: false }, 'overdue by 2 days is not outdated')
  t.match(await statusOf({ nextCheckInDaysAgo: 2 }), { status: 'pending', is_outdated: false })
  t.match(await statusOf({ nextCheckInDaysAgo: -5 }), { status: 'pending', is_outdated: false }, 'scheduled in the future')
})

t.test('neither mutation changes the derived fields', async (t) => {
  const p = await createProject(db, space, { name: 'Outdated one', access: { company: 10 } })
  await addContributor(db, p.id, champion.id, 'champion')
  await db.updateTable('projects').set({ next_check_in_scheduled_at: sql<Date>`now() - interval '5 days'` }).where('id', '=', p.id).execute()
  await db.insertInto('project_pins').values({ person_id: champion.id, project_id: p.id }).execute()
  const api = client(app, tokens.champion)
  const before = (await api.get(p.publicId)).json().project
  t.match(before, { status: 'outdated', is_outdated: true, is_pinned: true, state: 'active', success_status: null, is_archived: false })
  const renamed = (await api.updateName({ project_id: p.publicId, name: 'Outdated renamed' })).json().project
  const described = (await api.updateDescription({ project_id: p.publicId, description: '{"x":1}' })).json().project
  for (const after of [renamed, described]) {
    for (const key of ['state', 'status', 'success_status', 'is_archived', 'is_outdated', 'is_pinned']) {
      t.equal(after[key], before[key], key)
    }
  }
})

// ---- Helpers for walking the document ----------------------------------------------

function walk (value: unknown, path: string, visit: (path: string, key: string, value: unknown) => void) {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      visit(`${path}/${i}`, String(i), item)
      walk(item, `${path}/${i}`, visit)
    })
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      visit(`${path}/${key}`, key, item)
      walk(item, `${path}/${key}`, visit)
    }
  }
}

/** Every id in a Project: `id` and `*_id` fields and milestones_ordering_state. */
function collectIds (project: unknown) {
  const ids: Array<{ path: string, value: string, slugged: boolean }> = []
  walk(project, '', (path, key, value) => {
    if ((key === 'id' || key.endsWith('_id')) && value !== null) {
      // Only the project and its goal carry a slug.
      const slugged = path === '/id' || path === '/goal_id' || path === '/goal/id'
      ids.push({ path, value: value as string, slugged })
    }
    if (/^\/milestones_ordering_state\/\d+$/.test(path)) ids.push({ path, value: value as string, slugged: false })
  })
  return ids
}
