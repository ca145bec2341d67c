// A project's creation, dates, goal, move and deletion driven the way Operately's
// command-line client sends them (its cli/ package, as test/operately-cli.test.ts
// does for rename and describe). What the CLI makes of each flag, read from its
// source (core/flags.ts, core/input-coercion.ts, core/contextual-date-parser.ts):
// inputs in the catalog's order; `null` as a flag value is null; an access level
// is the number; a `json` input given Markdown is the TipTap document it converts
// to, serialised; a contextual date given as YYYY-MM-DD is that day (labelled
// `Jul 1, 2026`), YYYY/q#[^] the quarter's end (or start), YYYY/MM[^] the month's
// end (or start), YYYY[^] the year's. The CLI exits 0 on any 2xx answer; each
// change is then visible in `projects get`, and the deleted project is 404.
import type { Test } from 'tap'
import t from './tap.js'
import { loadDemo } from '../src/demo/load.js'
import { decodeId, shortId } from '../src/ids.js'
import { build, createSpace } from './helper.js'
import { listen } from './launch.js'
import { operatelyCli, type CliAnswer } from './operately-client.js'

const { app, db } = await build(t)
const { url: baseUrl } = await listen(app)
const demo = await loadDemo(db)
const alice = demo.tokens['alice@acme.test']!


const cli = operatelyCli(baseUrl)

/** A 2xx answer: what the CLI prints and exits 0 on. */
const accepted = (t: Test, answer: CliAnswer, what: string) => t.ok(answer.status >= 200 && answer.status < 300, `${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`)

const me = (await cli(alice.write, 'query', 'people/get_me')).body.me as { id: string }
const website = (await cli(alice.write, 'query', 'projects/list')).body.projects.find((p: { name: string }) => p.name === 'Website Redesign')
const goal = (await cli(alice.write, 'query', 'projects/get', { id: website.id })).body.project.goal as { id: string, name: string }
const acme = await db.selectFrom('companies').where('name', '=', 'Acme Corp').select('id').executeTakeFirstOrThrow()
// A second space of Acme, alice a member, to move the project to.
const design = await createSpace(db, acme.id, [decodeId(me.id)!], 'Design')

let id = ''
const get = async () => await cli(alice.read_only, 'query', 'projects/get', { id })

t.test('projects create --space-id … --name … --description <Markdown> --champion-id … --goal-id null --…-access-level n', async (t) => {
  // --description 'Rebuild the **pricing** page.': marked's HTML, read by TipTap's StarterKit.
  const description = JSON.stringify({
    type: 'doc',
    content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Rebuild the ' }, { type: 'text', marks: [{ type: 'bold' }], text: 'pricing' }, { type: 'text', text: ' page.' }] }]
  })
  const created = await cli(alice.write, 'mutation', 'projects/create', {
    space_id: website.space.id,
    name: 'Pricing page',
    champion_id: me.id,
    goal_id: null,
    description,
    anonymous_access_level: 0,
    company_access_level: 40,
    space_access_level: 70
  })
  accepted(t, created, 'create')
  id = created.body.project.id
  const answer = await get()
  t.equal(answer.status, 200)
  t.match(answer.body.project, {
    name: 'Pricing page',
    description,
    space_id: website.space.id,
    goal: null,
    champion: { id: me.id },
    state: 'active',
    // Product gives its company no access, so neither does a project of it, whatever is asked (as in Operately).
    access_levels: { public: 0, company: 0, space: 70 }
  })
  t.same(answer.body.project, created.body.project, 'get answers what create answered')
})

t.test('projects update_parent_goal --goal-id <id>, then --goal-id null', async (t) => {
  accepted(t, await cli(alice.write, 'mutation', 'projects/update_parent_goal', { project_id: id, goal_id: goal.id }), 'a goal')
  t.match((await get()).body.project, { goal_id: goal.id, goal: { id: goal.id, name: goal.name } })
  accepted(t, await cli(alice.write, 'mutation', 'projects/update_parent_goal', { project_id: id, goal_id: null }), 'no goal')
  t.match((await get()).body.project, { goal_id: null, goal: null })
})

t.test('projects update_start_date and update_due_date with each of the CLI\'s date formats', async (t) => {
  const steps: Array<['start_date' | 'due_date', string, { date: string, date_type: string, value: string } | null]> = [
    ['start_date', '2026-07-01', { date_type: 'day', value: 'Jul 1, 2026', date: '2026-07-01' }],
    ['start_date', '2026/q3^', { date_type: 'quarter', value: 'Q3 2026', date: '2026-07-01' }],
    ['due_date', '2026/q4', { date_type: 'quarter', value: 'Q4 2026', date: '2026-12-31' }],
    ['due_date', '2026/09', { date_type: 'month', value: 'Sep 2026', date: '2026-09-30' }],
    ['start_date', '2026/06^', { date_type: 'month', value: 'Jun 2026', date: '2026-06-01' }],
    ['due_date', '2027', { date_type: 'year', value: '2027', date: '2027-12-31' }],
    ['start_date', '2027^', { date_type: 'year', value: '2027', date: '2027-01-01' }],
    ['due_date', 'null', null]
  ]
  for (const [field, flag, sent] of steps) {
    const operation = field === 'start_date' ? 'projects/update_start_date' : 'projects/update_due_date'
    const answer = await cli(alice.write, 'mutation', operation, { project_id: id, [field]: sent })
    accepted(t, answer, `--${field.replace('_', '-')} ${flag}`)
    t.equal(answer.body.success, true)
    const timeframe = (await get()).body.project.timeframe
    t.same(timeframe[field === 'start_date' ? 'contextual_start_date' : 'contextual_end_date'], sent, `${flag}: as sent`)
  }
  t.same((await get()).body.project.timeframe, { contextual_start_date: { date_type: 'year', value: '2027', date: '2027-01-01' }, contextual_end_date: null })
})

t.test('projects move_to_space --space-id <another space of Acme>', async (t) => {
  accepted(t, await cli(alice.write, 'mutation', 'projects/move_to_space', { project_id: id, space_id: shortId(design.id) }), 'move')
  t.match((await get()).body.project, { space_id: shortId(design.id), space: { id: shortId(design.id), name: 'Design' } })
})

t.test('projects delete: 200, then 404 to get and gone from list', async (t) => {
  const deleted = await cli(alice.write, 'mutation', 'projects/delete', { project_id: id })
  accepted(t, deleted, 'delete')
  t.equal(deleted.body.project.id, id)
  const after = await get()
  t.equal(after.status, 404)
  t.match(after.body, { error: 'Not Found', code: 'not_found', message: 'project not found' })
  const listed = (await cli(alice.write, 'query', 'projects/list')).body.projects as Array<{ id: string }>
  t.notOk(listed.some((p) => p.id === id), 'not listed')
  t.equal((await cli(alice.write, 'mutation', 'projects/delete', { project_id: id })).status, 404, 'a second delete is 404: the CLI exits 1')
})
