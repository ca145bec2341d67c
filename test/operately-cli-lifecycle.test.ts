// The lifecycle operations driven the way Operately's command-line client sends
// them (its cli/ package, as test/operately-cli.test.ts does for rename and
// describe): a JSON body of the catalog's inputs, rich text as a JSON string
// (Markdown converted to its TipTap document first), lists as JSON arrays, booleans
// as booleans. Each change is then visible in projects get.
import t from './tap.js'
import { loadDemo } from '../src/demo/load.js'
import { build } from './helper.js'
import { listen } from './launch.js'
import { operatelyCli } from './operately-client.js'

const { app, db } = await build(t)
const { url: baseUrl } = await listen(app)
const demo = await loadDemo(db)
const alice = demo.tokens['alice@acme.test']!


const cli = operatelyCli(baseUrl)

/** What the CLI sends for `--message "<text>"`: the Markdown paragraph as a TipTap document, serialised. */
const markdown = (text: string) => JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] })

const id = (await cli(alice.write, 'query', 'projects/list')).body.projects.find((p: { name: string }) => p.name === 'Website Redesign').id
const get = async () => (await cli(alice.read_only, 'query', 'projects/get', { id })).body.project
const me = async (token: string) => (await cli(token, 'query', 'people/get_me')).body.me.id as string
const bob = await me(demo.tokens['bob@acme.test']!.write)
const carol = await me(demo.tokens['carol@acme.test']!.write)

t.test('projects update_champion and update_reviewer (as erin, a company admin)', async (t) => {
  const erin = demo.tokens['erin@acme.test']!.write
  const champion = await cli(erin, 'mutation', 'projects/update_champion', { project_id: id, champion_id: carol })
  t.equal(champion.status, 200, JSON.stringify(champion.body).slice(0, 200))
  t.equal(champion.body.success, true)
  t.equal((await get()).champion.full_name, 'Carol Martinez')
  const reviewer = await cli(erin, 'mutation', 'projects/update_reviewer', { project_id: id, reviewer_id: bob })
  t.equal(reviewer.status, 200)
  t.equal((await get()).reviewer.email, 'bob@acme.test')
  // Back to alice, so that the rest runs as the demo's champion.
  t.equal((await cli(erin, 'mutation', 'projects/update_champion', { project_id: id, champion_id: (await get()).contributors.find((c: any) => c.person.email === 'alice@acme.test').person.id })).status, 200)
})

t.test('projects delete_contributor, create_contributor, update_contributor', async (t) => {
  // bob was the reviewer until now and stays a contributor; alice removes him, adds him back, changes his binding.
  t.equal((await cli(demo.tokens['erin@acme.test']!.write, 'mutation', 'projects/update_reviewer', { project_id: id, reviewer_id: null })).status, 200)
  const bobs = (await get()).contributors.find((c: { person: { id: string } }) => c.person.id === bob).id
  const removed = await cli(demo.tokens['erin@acme.test']!.write, 'mutation', 'projects/delete_contributor', { contrib_id: bobs })
  t.equal(removed.status, 200, JSON.stringify(removed.body).slice(0, 200))
  t.notOk((await get()).contributors.some((c: { id: string }) => c.id === bobs))
  const added = await cli(alice.write, 'mutation', 'projects/create_contributor', { project_id: id, person_id: bob, responsibility: 'Budget', permissions: 'comment_access', role: 'contributor' })
  t.equal(added.status, 200, JSON.stringify(added.body).slice(0, 200))
  const contribId = added.body.contributor.id
  t.match((await get()).contributors.find((c: { id: string }) => c.id === contribId), { responsibility: 'Budget', access_level: 40 })
  const updated = await cli(alice.write, 'mutation', 'projects/update_contributor', { contrib_id: contribId, responsibility: 'Budget and hiring', permissions: 'edit_access' })
  t.equal(updated.status, 200)
  t.match((await get()).contributors.find((c: { id: string }) => c.id === contribId), { responsibility: 'Budget and hiring', access_level: 70 })
})

t.test('projects pause, resume, close (Markdown messages, subscriber ids as a list)', async (t) => {
  const paused = await cli(alice.write, 'mutation', 'projects/pause', { project_id: id, message: markdown('Waiting for the budget.'), send_notifications_to_everyone: false, subscriber_ids: [carol] })
  t.equal(paused.status, 200, JSON.stringify(paused.body).slice(0, 200))
  t.equal((await get()).state, 'paused')
  const carolsNotes = (await cli(demo.tokens['carol@acme.test']!.write, 'query', 'notifications/list')).body.notifications
  t.ok(carolsNotes.some((n: { action: string }) => n.action === 'project_pausing'), 'carol is told')
  const resumed = await cli(alice.write, 'mutation', 'projects/resume', { project_id: id, message: markdown('Budget approved.') })
  t.equal(resumed.status, 200)
  t.equal((await get()).state, 'active')
  const closed = await cli(alice.write, 'mutation', 'projects/close', { project_id: id, retrospective: markdown('Shipped on time.'), success_status: 'achieved', send_notifications_to_everyone: true })
  t.equal(closed.status, 200)
  t.equal(closed.body.retrospective.content, markdown('Shipped on time.'))
  const project = await get()
  t.match(project, { state: 'closed', success_status: 'achieved', status: 'achieved', retrospective: { content: markdown('Shipped on time.') } })
  // The CLI prints a 4xx as it came: a closed project cannot be paused.
  const refused = await cli(alice.write, 'mutation', 'projects/pause', { project_id: id, message: markdown('Again.') })
  t.equal(refused.status, 400)
  t.match(refused.body, { code: 'invalid_input' })
})
