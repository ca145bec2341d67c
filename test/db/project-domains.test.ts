// The rules on single columns of `projects` are types (domains), checked for the
// columns a statement writes, where table CHECK constraints were all checked on
// every update, each read back from text and compiled again at every statement
// (migrations/20261130200000_project_domains.ts). The table keeps the rules that
// relate columns. What is allowed is what it was, a violation is still 23514, the
// driver reads the base types' values, and the migration goes down and up again.
import type { Test } from 'tap'
import t from '../tap.js'
import { sql } from 'kysely'
import * as migration from '../../migrations/20261130200000_project_domains.js'
import * as spaceAccess from '../../migrations/20261208000000_space_access.js'
import { shortId } from '../../src/ids.js'
import { build, client, tokenFor, toldOfProject } from '../helper.js'

const { app, db } = await build(t)
await app.ready()

const { author, project } = await toldOfProject(db)

const checks = async () => (await sql<{ name: string }>`SELECT conname AS name FROM pg_constraint
  WHERE conrelid = 'projects'::regclass AND contype = 'c' ORDER BY conname`.execute(db)).rows.map((r) => r.name)
const types = async () => Object.fromEntries((await sql<{ column: string, type: string }>`SELECT a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_attribute a WHERE a.attrelid = 'projects'::regclass AND a.attname IN
  ('name', 'public_access', 'company_access', 'space_access', 'state', 'success_status', 'timeframe_start_type', 'timeframe_end_type', 'tasks_kanban_state')
  ORDER BY a.attname`.execute(db)).rows.map((r) => [r.column, r.type]))

const MULTI_COLUMN = ['projects_success_status_closed', 'projects_timeframe_end_complete', 'projects_timeframe_start_complete']
const DOMAIN_TYPES = {
  company_access: 'access_level',
  name: 'project_name',
  public_access: 'access_level',
  space_access: 'access_level',
  state: 'project_state',
  success_status: 'success_status',
  tasks_kanban_state: 'object_json',
  timeframe_end_type: 'timeframe_type',
  timeframe_start_type: 'timeframe_type'
}

// Each single-column rule, broken: the column and the value written (as SQL).
const BROKEN: Array<[string, string, string]> = [
  ['an empty name', 'name', `''`],
  ['a name of 256 characters', 'name', `repeat('x', 256)`],
  ['an access level of 5', 'public_access', '5'],
  ['a company access of 20', 'company_access', '20'],
  ['a space access of -1', 'space_access', '-1'],
  ['a state of "done"', 'state', `'done'`],
  ['a timeframe start of "week"', 'timeframe_start_type', `'week'`],
  ['a timeframe end of "week"', 'timeframe_end_type', `'week'`],
  ['a kanban state that is an array', 'tasks_kanban_state', `'[]'`]
]

const stored = async () => await db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow()

async function allowedAsBefore (t: Test) {
  const before = await stored()
  for (const [what, column, value] of BROKEN) {
    await t.rejects(sql`UPDATE projects SET ${sql.ref(column)} = ${sql.raw(value)} WHERE id = ${project.id}`.execute(db), { code: '23514' }, `${what}: refused, 23514`)
  }
  await t.rejects(sql`UPDATE projects SET success_status = 'won', state = 'closed' WHERE id = ${project.id}`.execute(db), { code: '23514' }, 'a result of "won": refused')
  await t.rejects(sql`UPDATE projects SET state = 'closed' WHERE id = ${project.id}`.execute(db), { code: '23514', constraint: 'projects_success_status_closed' }, 'closed without a result: refused by the table')
  await t.rejects(sql`UPDATE projects SET timeframe_start_type = 'day' WHERE id = ${project.id}`.execute(db), { code: '23514', constraint: 'projects_timeframe_start_complete' }, 'half a timeframe: refused by the table')
  t.same(await stored(), before, 'nothing written')
  await sql`UPDATE projects SET name = ${'x'.repeat(255)}, public_access = 100, state = 'closed', success_status = 'missed',
    timeframe_end_type = 'quarter', timeframe_end_value = '2027-Q1', timeframe_end_date = '2027-03-31', tasks_kanban_state = '{"a": [1]}' WHERE id = ${project.id}`.execute(db)
  const after = await stored()
  t.match(after, { name: 'x'.repeat(255), public_access: 100, state: 'closed', success_status: 'missed', timeframe_end_type: 'quarter', tasks_kanban_state: { a: [1] } },
    'allowed values written, read back as the base types\' values (a number, an object)')
  await sql`UPDATE projects SET name = ${before.name}, public_access = ${before.public_access}, state = ${before.state}, success_status = NULL,
    timeframe_end_type = NULL, timeframe_end_value = NULL, timeframe_end_date = NULL, tasks_kanban_state = '{}' WHERE id = ${project.id}`.execute(db)
}

t.test('the single-column rules of projects are domains; the table keeps the three that relate columns', async (t) => {
  t.same(await checks(), MULTI_COLUMN)
  t.same(await types(), DOMAIN_TYPES)
})

t.test('what a project may hold is what it was, and a violation is 23514 with nothing written', async (t) => {
  await allowedAsBefore(t)
})

t.test('through the API: a name too long is 400, and a rename answers as before', async (t) => {
  const api = client(app, (await tokenFor(db, author.email)).token)
  const long = await api.updateName({ project_id: shortId(project.id), name: 'x'.repeat(256) })
  t.equal(long.statusCode, 400)
  const res = await api.updateName({ project_id: shortId(project.id), name: 'Renamed under domains' })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { project: { name: 'Renamed under domains', state: 'active' } })
  t.equal((await stored()).name, 'Renamed under domains')
})

t.test('the migration goes down to the twelve table constraints and up again', async (t) => {
  // A later migration's columns take the access_level domain: it goes down first, and up last.
  await spaceAccess.down(db)
  await migration.down(db)
  t.equal((await checks()).length, 12, 'down: twelve constraints')
  t.same(await types(), {
    company_access: 'smallint', name: 'text', public_access: 'smallint', space_access: 'smallint', state: 'text',
    success_status: 'text', tasks_kanban_state: 'json', timeframe_end_type: 'text', timeframe_start_type: 'text'
  }, 'down: the base types')
  const { rows: [left] } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_type WHERE typtype = 'd'
    AND typname IN ('project_name', 'access_level', 'project_state', 'success_status', 'timeframe_type', 'object_json')`.execute(db)
  t.equal(left!.n, 0, 'down: no domain left')
  await allowedAsBefore(t)
  await migration.up(db)
  t.same(await checks(), MULTI_COLUMN, 'up again')
  t.same(await types(), DOMAIN_TYPES, 'up again')
  await spaceAccess.up(db)
})
