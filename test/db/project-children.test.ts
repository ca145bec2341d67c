// A project's children are kept built in project_children by triggers
// (migrations/20261128000000_project_children.ts). Every kind of change to what
// they are built from leaves the kept row equal to one built afresh, and the
// answer shows the change; two transactions changing one project's children at
// once leave both changes in it; the text is in UTC whoever wrote it.
import { sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'
import type { Db } from '../../src/db/index.js'

const { app, db, url } = await build(t)

const KEPT = ['space_name', 'contributors', 'goal', 'key_resources', 'last_check_in', 'milestones',
  'milestones_ordering_state', 'subscription_list', 'retrospective', 'task_statuses'] as const

/** Projects whose kept children differ from children built now (or that have none kept, or kept for no project). */
async function stale (db: Db): Promise<string[]> {
  const differs = KEPT.map((column) => `kept.${column}::text IS DISTINCT FROM now.${column}::text`).join(' OR ')
  return db.transaction().execute(async (trx) => {
    await sql`SET LOCAL TimeZone = 'UTC'`.execute(trx)
    const { rows } = await sql<{ id: string }>`
      SELECT coalesce(kept.project_id, now.project_id) AS id
      FROM project_children kept
      FULL JOIN project_children_of(ARRAY(SELECT id FROM projects)) now ON now.project_id = kept.project_id
      WHERE kept.project_id IS NULL OR now.project_id IS NULL OR ${sql.raw(differs)}`.execute(trx)
    return rows.map((row) => row.id)
  })
}

const company = await createCompany(db)
const champion = await createPerson(db, company.id, { fullName: 'Cora Champion' })
const reader = await createPerson(db, company.id, { fullName: 'Rex Reader' })
const helper = await createPerson(db, company.id, { fullName: 'Hal Helper' })
const space = await createSpace(db, company.id, [reader.id])
const project = await createProject(db, space, { access: { space: 10 } })
const other = await createProject(db, space, { access: { space: 10 } })
const api = client(app, (await tokenFor(db, reader.email)).token)
await addContributor(db, project.id, champion.id, 'champion')

/** The project as the reader gets it. */
async function read (): Promise<Record<string, any>> {
  const res = await api.get(project.publicId)
  if (res.statusCode !== 200) throw new Error(`get: ${res.statusCode} ${res.body}`)
  return res.json().project
}

t.test('a new project has its children kept', async (t) => {
  const kept = await db.selectFrom('project_children').select(['project_id', 'space_name']).where('project_id', 'in', [project.id, other.id]).execute()
  t.same(kept.map((k) => k.space_name).sort(), [space.name, space.name])
  t.same(await stale(db), [])
})

// Each change, then what the answer shows of it; after each, nothing is stale.
const changes: Array<[string, () => Promise<unknown>, (project: Record<string, any>) => unknown, unknown]> = [
  ['a contributor added', () => addContributor(db, project.id, helper.id, 'contributor', 40), (p) => p.contributors.map((c: any) => c.person.full_name), ['Cora Champion', 'Hal Helper']],
  ['a contributor\'s responsibility', () => db.updateTable('project_contributors').set({ responsibility: 'Design' }).where('person_id', '=', helper.id).execute(),
    (p) => p.contributors[1].responsibility, 'Design'],
  ['a person renamed', () => db.updateTable('people').set({ full_name: 'Cora Chief' }).where('id', '=', champion.id).execute(), (p) => p.champion.full_name, 'Cora Chief'],
  ['a person\'s title', () => db.updateTable('people').set({ title: 'Lead' }).where('id', '=', champion.id).execute(), (p) => p.champion.title, 'Lead'],
  ['a contributor suspended', () => db.updateTable('people').set({ suspended_at: new Date() }).where('id', '=', helper.id).execute(), (p) => p.contributors.length, 1],
  ['a contributor back', () => db.updateTable('people').set({ suspended_at: null }).where('id', '=', helper.id).execute(), (p) => p.contributors.length, 2],
  ['a goal set', async () => {
    const goal = await db.insertInto('goals').values({ company_id: company.id, space_id: space.id, name: 'Grow' }).returning('id').executeTakeFirstOrThrow()
    await db.updateTable('projects').set({ goal_id: goal.id }).where('id', '=', project.id).execute()
  }, (p) => p.goal.name, 'Grow'],
  ['a goal renamed', () => db.updateTable('goals').set({ name: 'Grow more' }).where('name', '=', 'Grow').execute(), (p) => p.goal.name, 'Grow more'],
  ['a goal deleted', () => db.deleteFrom('goals').where('name', '=', 'Grow more').execute(), (p) => p.goal, null],
  ['a space renamed', () => db.updateTable('spaces').set({ name: 'Renamed space' }).where('id', '=', space.id).execute(), (p) => p.space.name, 'Renamed space'],
  ['milestones added', () => db.insertInto('project_milestones').values([
    { project_id: project.id, title: 'B', due_date: '2027-02-01' }, { project_id: project.id, title: 'A', due_date: '2027-01-01' }
  ]).execute(), (p) => p.milestones.map((m: any) => m.title), ['A', 'B']],
  ['the milestones reordered', async () => {
    const ids = await db.selectFrom('project_milestones').select('id').where('project_id', '=', project.id).orderBy('title', 'desc').execute()
    await db.updateTable('projects').set({ milestones_ordering_state: ids.map((m) => m.id) }).where('id', '=', project.id).execute()
  }, (p) => p.milestones.map((m: any) => m.title), ['B', 'A']],
  ['a milestone done', () => db.updateTable('project_milestones').set({ status: 'done', completed_at: new Date() }).where('title', '=', 'A').execute(),
    (p) => p.milestones.map((m: any) => m.status), ['pending', 'done']],
  ['a milestone deleted', () => db.deleteFrom('project_milestones').where('title', '=', 'B').execute(), (p) => [p.milestones.length, p.milestones_ordering_state.length], [1, 1]],
  ['a key resource', () => db.insertInto('project_key_resources').values({ project_id: project.id, title: 'Repo', link: 'https://example.test/repo' }).execute(),
    (p) => p.key_resources.map((k: any) => k.title), ['Repo']],
  ['a check-in', () => db.insertInto('project_check_ins').values({ project_id: project.id, author_id: champion.id, status: 'caution' }).execute(),
    (p) => [p.last_check_in.status, p.status], ['caution', 'caution']],
  ['the check-in acknowledged', () => db.updateTable('project_check_ins').set({ acknowledged_by_id: reader.id, acknowledged_at: new Date() }).where('project_id', '=', project.id).execute(),
    (p) => p.last_check_in.acknowledged_by.full_name, 'Rex Reader'],
  ['the acknowledging person renamed', () => db.updateTable('people').set({ full_name: 'Rex Royal' }).where('id', '=', reader.id).execute(),
    (p) => p.last_check_in.acknowledged_by.full_name, 'Rex Royal'],
  ['a retrospective', () => db.insertInto('project_retrospectives').values({ project_id: project.id, author_id: helper.id, content: '{}', success_status: 'achieved' }).execute(),
    (p) => p.retrospective.author.full_name, 'Hal Helper'],
  ['a task status', () => db.insertInto('project_task_statuses').values({ project_id: project.id, label: 'Doing', color: 'blue', index: 1, value: 'doing' }).execute(),
    (p) => p.task_statuses.map((s: any) => s.label), ['Doing']],
  ['a subscription list and a subscription', async () => {
    const list = await db.insertInto('subscription_lists').values({ project_id: project.id }).returning('id').executeTakeFirstOrThrow()
    await db.insertInto('subscriptions').values({ subscription_list_id: list.id, person_id: helper.id, type: 'joined' }).execute()
  }, (p) => [p.subscription_list.subscriptions.length, p.potential_subscribers.find((s: any) => s.person.full_name === 'Hal Helper').is_subscribed], [1, true]],
  ['a subscription canceled', () => db.updateTable('subscriptions').set({ canceled: true }).where('person_id', '=', helper.id).execute(),
    (p) => [p.subscription_list.subscriptions[0].canceled, p.potential_subscribers.find((s: any) => s.person.full_name === 'Hal Helper').is_subscribed], [true, false]],
  ['the list sent to everyone', () => db.updateTable('subscription_lists').set({ send_to_everyone: true }).where('project_id', '=', project.id).execute(),
    (p) => p.subscription_list.send_to_everyone, true],
  ['a subscription deleted', () => db.deleteFrom('subscriptions').where('person_id', '=', helper.id).execute(), (p) => p.subscription_list.subscriptions, []],
  ['a contributor removed', () => db.deleteFrom('project_contributors').where('person_id', '=', helper.id).execute(), (p) => p.contributors.length, 1],
  ['a project moved to another space', async () => {
    const next = await createSpace(db, company.id, [reader.id], 'Next space')
    await db.updateTable('projects').set({ space_id: next.id }).where('id', '=', project.id).execute()
  }, (p) => p.space.name, 'Next space']
]

for (const [what, change, shown, expected] of changes) {
  t.test(`${what}: kept as built afresh, and answered`, async (t) => {
    await change()
    t.same(await stale(db), [], 'no project\'s kept children differ from a fresh build')
    t.same(shown(await read()), expected)
  })
}

t.test('a child table emptied with TRUNCATE: every project\'s kept children follow', async (t) => {
  t.ok((await read()).key_resources.length > 0, 'key resources before')
  await sql`TRUNCATE project_key_resources`.execute(db)
  t.same(await stale(db), [])
  t.same((await read()).key_resources, [])
})

t.test('a deleted project leaves no kept children', async (t) => {
  await db.deleteFrom('projects').where('id', '=', other.id).execute()
  t.equal((await db.selectFrom('project_children').select('project_id').where('project_id', '=', other.id).execute()).length, 0)
  t.same(await stale(db), [])
})

t.test('a rename and a description change leave the kept children untouched', async (t) => {
  const before = await db.selectFrom('project_children').select(sql<string>`xmin::text`.as('version')).where('project_id', '=', project.id).executeTakeFirstOrThrow()
  const writer = client(app, (await tokenFor(db, (await db.selectFrom('people').select('email').where('id', '=', champion.id).executeTakeFirstOrThrow()).email)).token)
  t.equal((await writer.updateName({ project_id: project.publicId, name: 'Kept as it was' })).statusCode, 200)
  t.equal((await writer.updateDescription({ project_id: project.publicId, description: '{"type":"doc"}' })).statusCode, 200)
  const after = await db.selectFrom('project_children').select(sql<string>`xmin::text`.as('version')).where('project_id', '=', project.id).executeTakeFirstOrThrow()
  t.equal(after.version, before.version, 'the row was not written again')
})

t.test('written in UTC whatever the time zone of the session that changed a child', async (t) => {
  await db.transaction().execute(async (trx) => {
    await sql`SET LOCAL TimeZone = 'Asia/Tokyo'`.execute(trx)
    await trx.insertInto('project_check_ins').values({ project_id: project.id, author_id: champion.id, status: 'on_track' }).execute()
  })
  const { rows: [row] } = await sql<{ inserted_at: string }>`SELECT last_check_in->>'inserted_at' AS inserted_at FROM project_children WHERE project_id = ${project.id}`.execute(db)
  t.match(row!.inserted_at, /\+00:00$/)
  t.same(await stale(db), [])
})

t.test('two transactions changing one project\'s children at once leave both changes', { skip: url === undefined && 'needs two connections (real PostgreSQL: set DATABASE_URL)' }, async (t) => {
  const first = new pg.Client({ connectionString: url })
  const second = new pg.Client({ connectionString: url })
  await first.connect()
  await second.connect()
  t.teardown(async () => { await first.end(); await second.end() })
  await first.query('BEGIN')
  await first.query('INSERT INTO project_milestones (project_id, title) VALUES ($1, $2)', [project.id, 'From the first'])
  await second.query('BEGIN')
  // Waits for the first's lock on the kept row, then builds it with the first's milestone.
  const waiting = second.query('INSERT INTO project_key_resources (project_id, title, link) VALUES ($1, $2, $3)', [project.id, 'From the second', 'https://example.test/second'])
  await new Promise((resolve) => setTimeout(resolve, 200))
  await first.query('COMMIT')
  await waiting
  await second.query('COMMIT')
  const p = await read()
  t.ok(p.milestones.some((m: any) => m.title === 'From the first'), 'the first\'s milestone')
  t.ok(p.key_resources.some((k: any) => k.title === 'From the second'), 'the second\'s key resource')
  t.same(await stale(db), [])
})
