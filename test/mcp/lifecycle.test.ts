// The lifecycle tools (create, leaders, dates, goal, move, pause, resume, close,
// delete) through the SDK's own client over HTTP, with Operately's tool arguments:
// each call's answer is what the HTTP API answers for the project right after it,
// the database holds what the operation writes (Markdown stored as the rich-text
// document, a day as its contextual date, an argument left out as a clear), a
// read-only token is refused with nothing written, a project the person cannot see
// fails like a missing one, and bad arguments are tool errors naming the argument.
import { randomUUID } from 'node:crypto'
import t from '../tap.js'
import { loadDemo } from '../../src/demo/load.js'
import { decodeId, shortId, sluggedId } from '../../src/ids.js'
import { markdownToRichText } from '../../src/projects/markdown-in.js'
import { build, createSpace, projectActivities, projectRow } from '../helper.js'
import { listen } from '../launch.js'
import { call, http, mcpClient } from './support.js'

const { app, db } = await build(t)
const demo = await loadDemo(db)
const { url } = await listen(app)

const token = (email: string, kind: 'write' | 'read_only' = 'write') => demo.tokens[email]![kind]
const person = async (email: string) => (await db.selectFrom('people').where('email', '=', email).select(['id', 'company_id']).executeTakeFirstOrThrow())
const alice = await person('alice@acme.test')
const erin = await person('erin@acme.test')
const carol = await person('carol@acme.test')
const dave = await person('dave@globex.test')
const product = await db.selectFrom('spaces').where('name', '=', 'Product').select('id').executeTakeFirstOrThrow()
const goal = await db.selectFrom('goals').where('company_id', '=', alice.company_id).select(['id', 'name']).executeTakeFirstOrThrow()
const design = await createSpace(db, alice.company_id, [alice.id], 'Design')
const website = demo.projects['Website Redesign']!.id
const internal = demo.projects['Internal Tools']!.id

const aliceMcp = await mcpClient(t, url, token('alice@acme.test'))
const aliceReadOnly = await mcpClient(t, url, token('alice@acme.test', 'read_only'))
const bobMcp = await mcpClient(t, url, token('bob@acme.test'))

const LIFECYCLE = ['create_project', 'update_project_champion', 'update_project_reviewer', 'update_project_start_date',
  'update_project_due_date', 'update_project_goal', 'move_project_to_space', 'pause_project', 'resume_project',
  'close_project', 'delete_project']

/** The project as alice reads it over HTTP now. */
const asAliceSees = async (id: string) => (await http(app, token('alice@acme.test'), 'GET', 'projects/get', { id })).body.project as Record<string, unknown>
const contributorsOf = async (id: string) => await db.selectFrom('project_contributors').where('project_id', '=', id)
  .where('role', 'in', ['champion', 'reviewer']).select(['role', 'person_id']).orderBy('role').execute()

t.test('tools/list: the lifecycle tools with Operately\'s arguments and their annotations', async (t) => {
  const { tools } = await aliceReadOnly.listTools()
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
  t.same(LIFECYCLE.filter((name) => byName[name] === undefined), [], 'every lifecycle tool is listed')
  const args = (name: string) => Object.keys(byName[name]!.inputSchema.properties!)
  t.same(args('create_project'), ['space_id', 'name', 'champion_id', 'reviewer_id', 'goal_id', 'description',
    'anonymous_access_level', 'company_access_level', 'space_access_level'])
  t.same(byName.create_project!.inputSchema.required, ['space_id', 'name'])
  t.match(byName.create_project!.inputSchema.properties!.description, { type: 'string', description: /Markdown/ })
  for (const [name, argument] of [['update_project_champion', 'champion_id'], ['update_project_reviewer', 'reviewer_id'],
    ['update_project_start_date', 'start_date'], ['update_project_due_date', 'due_date'], ['update_project_goal', 'goal_id']]) {
    t.same(args(name!), ['project_id', argument], `${name} arguments`)
    t.same(byName[name!]!.inputSchema.required, ['project_id'], `${name}: ${argument} may be left out`)
  }
  t.match(byName.update_project_due_date!.inputSchema.properties!.due_date, { anyOf: [{ type: 'string', pattern: /YYYY|\[0-9\]/ }, { type: 'null' }] })
  t.same(byName.move_project_to_space!.inputSchema.required, ['project_id', 'space_id'])
  for (const name of ['pause_project', 'resume_project']) {
    t.same(args(name), ['project_id', 'message', 'notify_everyone', 'notify_person_ids'], `${name} arguments`)
    t.same(byName[name]!.inputSchema.required, ['project_id', 'message'])
  }
  t.same(args('close_project'), ['project_id', 'retrospective', 'success_status', 'notify_everyone', 'notify_person_ids'])
  t.same(byName.close_project!.inputSchema.required, ['project_id', 'retrospective', 'success_status'])
  t.same(args('delete_project'), ['project_id'])
  const hints = (name: string) => byName[name]!.annotations
  t.match(hints('create_project'), { readOnlyHint: false, destructiveHint: false, idempotentHint: false })
  for (const name of ['close_project', 'delete_project']) t.match(hints(name), { readOnlyHint: false, destructiveHint: true }, `${name}: destructive`)
  for (const name of LIFECYCLE.slice(1, 9)) t.match(hints(name), { readOnlyHint: false, destructiveHint: false, idempotentHint: true }, `${name}: write`)
})

t.test('each tool with a write token: the HTTP answer, and the database afterwards', async (t) => {
  const description = `Rebuild the **pricing** page with @[Carol Martinez](${shortId(carol.id)}).`
  const created = await call(aliceMcp, 'create_project', { space_id: shortId(product.id), name: ' Pricing ', description, champion_id: shortId(alice.id) })
  t.notOk(created.isError, 'created')
  const project = created.body.project as { id: string, access_levels: unknown }
  const id = decodeId(project.id)!
  t.same(created.body.project, await asAliceSees(id), 'create_project: the project as alice reads it')
  t.same(JSON.parse(created.text), created.body, 'the text block is the JSON')
  let row = await projectRow(db, id)
  t.match(row, { name: 'Pricing', space_id: product.id, description: markdownToRichText(description), public_access: 0, company_access: 0, space_access: 40 })
  t.match((await projectActivities(db, id)).at(-1), { action: 'project_created' })

  const step = async (tool: string, args: Record<string, unknown>, key = 'project') => {
    const answer = await call(aliceMcp, tool, { project_id: project.id, ...args })
    t.notOk(answer.isError, `${tool} ${JSON.stringify(args)}`)
    t.same(answer.body[key], await asAliceSees(id), `${tool}: the project as alice reads it`)
    return answer
  }

  await step('update_project_champion', { champion_id: shortId(erin.id) })
  await step('update_project_reviewer', { reviewer_id: shortId(carol.id) })
  t.same(await contributorsOf(id), [{ role: 'champion', person_id: erin.id }, { role: 'reviewer', person_id: carol.id }])
  await step('update_project_reviewer', {})
  t.same(await contributorsOf(id), [{ role: 'champion', person_id: erin.id }], 'reviewer_id left out: no reviewer')
  await step('update_project_champion', {})
  t.same(await contributorsOf(id), [], 'champion_id left out: no champion')

  await step('update_project_start_date', { start_date: '2026-07-01' })
  await step('update_project_due_date', { due_date: '2026-09-30' })
  row = await projectRow(db, id)
  t.match(row, {
    timeframe_start_type: 'day', timeframe_start_value: 'Jul 1, 2026', timeframe_start_date: '2026-07-01',
    timeframe_end_type: 'day', timeframe_end_value: 'Sep 30, 2026', timeframe_end_date: '2026-09-30'
  })
  t.match((await asAliceSees(id)).timeframe, { contextual_end_date: { date_type: 'day', value: 'Sep 30, 2026', date: '2026-09-30' } })
  await step('update_project_start_date', {})
  await step('update_project_due_date', { due_date: null })
  t.match(await projectRow(db, id), { timeframe_start_type: null, timeframe_start_date: null, timeframe_end_type: null, timeframe_end_date: null }, 'left out or null: cleared')

  await step('update_project_goal', { goal_id: sluggedId(goal.id, goal.name) })
  t.equal((await projectRow(db, id)).goal_id, goal.id)
  await step('update_project_goal', {})
  t.equal((await projectRow(db, id)).goal_id, null, 'goal_id left out: disconnected')

  await step('move_project_to_space', { space_id: shortId(design.id) })
  t.equal((await projectRow(db, id)).space_id, design.id)
  t.match((await projectActivities(db, id)).at(-1), { action: 'project_moved', content: { old_space_id: product.id, new_space_id: design.id } })

  await step('pause_project', { message: 'Waiting for the **budget**.', notify_person_ids: [shortId(erin.id)] })
  t.equal((await projectRow(db, id)).state, 'paused')
  const paused = (await projectActivities(db, id)).at(-1)!
  t.match(paused, { action: 'project_pausing', content: { message: markdownToRichText('Waiting for the **budget**.') } })
  const told = await db.selectFrom('notifications').where('activity_id', '=', paused.id).select('person_id').execute()
  t.same(told.map((n) => n.person_id), [erin.id], 'notify_person_ids: the people told')

  await step('resume_project', { message: 'Budget approved.', notify_everyone: false })
  t.equal((await projectRow(db, id)).state, 'active')
  t.match((await projectActivities(db, id)).at(-1), { action: 'project_resuming' })

  const closed = await step('close_project', { retrospective: '## Done\n\nShipped.', success_status: 'achieved' })
  t.match(closed.body.retrospective, { content: markdownToRichText('## Done\n\nShipped.'), success_status: 'achieved' })
  t.match(await projectRow(db, id), { state: 'closed', success_status: 'achieved' })

  const before = await asAliceSees(id)
  const deleted = await call(aliceMcp, 'delete_project', { project_id: project.id })
  t.notOk(deleted.isError)
  t.same(deleted.body, { project: before }, 'delete_project: the project as it was')
  t.equal(await db.selectFrom('projects').where('id', '=', id).select('id').executeTakeFirst(), undefined, 'the row is gone')
  t.match((await call(aliceMcp, 'get_project', { project_id: project.id })).body, { statusCode: 404, code: 'not_found' })
})

/** Valid arguments for each tool on `project`, as alice may send them. */
function argumentsFor (project: string): Array<[string, Record<string, unknown>]> {
  return [
    ['create_project', { space_id: shortId(product.id), name: 'Refused' }],
    ['update_project_champion', { project_id: project, champion_id: shortId(erin.id) }],
    ['update_project_reviewer', { project_id: project }],
    ['update_project_start_date', { project_id: project, start_date: '2027-01-04' }],
    ['update_project_due_date', { project_id: project, due_date: '2027-12-31' }],
    ['update_project_goal', { project_id: project }],
    ['move_project_to_space', { project_id: project, space_id: shortId(design.id) }],
    ['pause_project', { project_id: project, message: 'Hold' }],
    ['resume_project', { project_id: project, message: 'Go' }],
    ['close_project', { project_id: project, retrospective: 'Done', success_status: 'missed' }],
    ['delete_project', { project_id: project }]
  ]
}

const snapshot = async () => ({
  projects: await db.selectFrom('projects').selectAll().orderBy('id').execute(),
  activities: (await db.selectFrom('activities').select('id').execute()).length,
  notifications: (await db.selectFrom('notifications').select('id').execute()).length,
  contributors: await db.selectFrom('project_contributors').selectAll().orderBy('id').execute()
})

t.test('a read-only token is refused by every lifecycle tool, and nothing is written', async (t) => {
  const before = await snapshot()
  for (const [tool, args] of argumentsFor(website)) {
    const answer = await call(aliceReadOnly, tool, args)
    t.ok(answer.isError, `${tool} refused`)
    t.same(answer.body, { statusCode: 403, error: 'Forbidden', code: 'read_only_token', message: 'this token is read-only and cannot be used for mutations' }, tool)
  }
  t.same(await snapshot(), before, 'nothing written')
})

t.test('a project (or space) the person cannot see fails exactly like a missing one', async (t) => {
  const before = await snapshot()
  const dav = await mcpClient(t, url, token('dave@globex.test'))
  const hidden = argumentsFor(internal).slice(1)
  const missing = argumentsFor(randomUUID()).slice(1)
  for (const [index, [tool, args]] of hidden.entries()) {
    const bob = await call(bobMcp, tool, args)
    const none = await call(bobMcp, tool, missing[index]![1])
    t.ok(bob.isError, `${tool}: bob cannot see Internal Tools`)
    t.same(bob.body, { statusCode: 404, error: 'Not Found', code: 'not_found', message: 'project not found' }, tool)
    t.same(bob.body, none.body, `${tool}: as a missing project`)
    t.equal(bob.text, none.text)
    t.same((await call(dav, tool, argumentsFor(website)[index + 1]![1])).body, none.body, `${tool}: dave and Website Redesign`)
  }
  const foreign = await call(dav, 'create_project', { space_id: shortId(product.id), name: 'Mine' })
  const unknown = await call(dav, 'create_project', { space_id: shortId(randomUUID()), name: 'Mine' })
  t.match(foreign.body, { statusCode: 404, code: 'not_found', message: 'space not found' })
  t.same(foreign.body, unknown.body, 'a space of another company is a missing space')
  t.same(await snapshot(), before, 'nothing written')
})

t.test('bad arguments are tool errors naming the argument, and write nothing', async (t) => {
  const before = await snapshot()
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['create_project', { name: 'x' }, '/space_id', 'space_id is required'],
    ['create_project', { space_id: shortId(product.id), name: '  ' }, '/name', 'name must not be blank'],
    ['create_project', { space_id: shortId(product.id), name: 'x', champion_id: shortId(dave.id) }, '/champion_id', 'champion_id must be a person of the company'],
    ['create_project', { space_id: shortId(product.id), name: 'x', space_access_level: 50 }, '/space_access_level', ''],
    ['update_project_champion', { champion_id: shortId(erin.id) }, '/project_id', 'project_id is required'],
    ['update_project_champion', { project_id: website, champion_id: 7 }, '/champion_id', ''],
    ['update_project_start_date', { project_id: website, start_date: '2026-02-30' }, '/start_date', 'start_date must be a calendar date (YYYY-MM-DD)'],
    ['update_project_due_date', { project_id: website, due_date: 'next Friday' }, '/due_date', ''],
    ['move_project_to_space', { project_id: website }, '/space_id', 'space_id is required'],
    ['move_project_to_space', { project_id: website, space_id: ' ' }, '/space_id', 'space_id must not be blank'],
    ['pause_project', { project_id: website }, '/message', 'message is required'],
    ['pause_project', { project_id: website, message: 'x', subscriber_ids: [] }, '/subscriber_ids', 'subscriber_ids is not allowed'],
    ['pause_project', { project_id: website, message: 'x', notify_everyone: 'yes' }, '/notify_everyone', ''],
    ['close_project', { project_id: website, retrospective: 'x', success_status: 'done' }, '/success_status', ''],
    ['delete_project', { project_id: '' }, '/project_id', 'project_id must not be blank']
  ]
  for (const [tool, args, path, message] of cases) {
    const answer = await call(aliceMcp, tool, args)
    t.ok(answer.isError, `${tool} ${JSON.stringify(args)}`)
    t.match(answer.body, { statusCode: 400, code: 'invalid_input', details: [{ path }] }, `${tool}: names ${path}`)
    t.match(answer.body.message, new RegExp(`^${path.slice(1)}\\b`), `${tool}: the message starts with the argument`)
    if (message !== '') t.equal(answer.body.message, message)
  }
  const unknownPerson = await call(aliceMcp, 'pause_project', { project_id: website, message: 'x', notify_person_ids: [shortId(dave.id)] })
  t.match(unknownPerson.body, { statusCode: 400, message: "notify_person_ids must name people of the project's company", details: [{ path: '/notify_person_ids' }] },
    "the operation's error (on subscriber_ids) in the argument's name")
  t.same(await snapshot(), before, 'nothing written')
})
