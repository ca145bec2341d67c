// The server driven the way Operately's command-line client (its cli/ package)
// drives it, over real HTTP: the same methods, paths, query encoding (inputs in the
// catalog's order, booleans as true/false, nothing sent for an input left out),
// JSON bodies and headers (axios's, with the Bearer token). Each step is a command
// of the README's "Using Operately's CLI": log in (get_me, then companies/get),
// whoami, find a project by listing, rename it, describe it in Markdown (the CLI
// sends the TipTap document its Markdown converts to), read it back as Markdown.
import t from './tap.js'
import { loadDemo } from '../src/demo/load.js'
import { shortId } from '../src/ids.js'
import { build } from './helper.js'
import { listen } from './launch.js'
import { operatelyCli } from './operately-client.js'

const { app, db } = await build(t)
const { url: baseUrl } = await listen(app)
const demo = await loadDemo(db)
const alice = demo.tokens['alice@acme.test']!


const cli = operatelyCli(baseUrl)

interface Me { me: { full_name: string, email: string, title: string | null } }
interface CompanyAnswer { company: { name: string } }
interface ProjectList { projects: Array<{ id: string, name: string, space: { id: string } }>, next_cursor: string | null }
interface ProjectAnswer { project: { id: string, name: string, description: string | null }, markdown?: string }

t.test('auth login --token: get_me gives the name, companies/get the company; a bad token is "Invalid token"', async (t) => {
  const me = await cli(alice.write, 'query', 'people/get_me')
  t.equal(me.status, 200)
  t.match(me.headers.get('content-type'), /^application\/json/)
  const { full_name: fullName, email, title } = (me.body as Me).me
  t.same({ fullName, email, title }, { fullName: 'Alice Johnson', email: 'alice@acme.test', title: 'Product Manager' })
  const company = await cli(alice.write, 'query', 'companies/get')
  t.equal(company.status, 200)
  t.equal((company.body as CompanyAnswer).company.name, 'Acme Corp')

  // The CLI says "Invalid token" on a 401 or 403 from get_me and saves nothing.
  const refused = await cli('pat_not-a-real-token', 'query', 'people/get_me')
  t.equal(refused.status, 401)
  t.match(refused.body, { code: 'unauthenticated', error: 'Unauthorized' })
  // A read-only token logs in too: get_me and companies/get are queries.
  t.equal((await cli(alice.read_only, 'query', 'people/get_me')).status, 200)
  t.equal((await cli(alice.read_only, 'query', 'companies/get')).status, 200)
})

t.test('auth whoami: get_me for each demo person', async (t) => {
  for (const [email, tokens] of Object.entries(demo.tokens)) {
    const me = await cli(tokens.write, 'query', 'people/get_me')
    t.equal(me.status, 200)
    t.equal((me.body as Me).me.email, email)
  }
})

t.test('projects list, with no flags and with flags in the catalog order: finds the project to change', async (t) => {
  const all = await cli(alice.write, 'query', 'projects/list')
  t.equal(all.status, 200)
  const list = all.body as ProjectList
  t.same(list.projects.map((p) => p.name), ['Internal Tools', 'Website Redesign'], 'every project alice can see, by name')
  t.equal(list.next_cursor, null, 'one page: a client that knows nothing of paging has them all')
  const website = list.projects.find((p) => p.name === 'Website Redesign')!
  t.equal(website.id, `website-redesign-${shortId(demo.projects['Website Redesign']!.id)}`, 'the id the seed gives')

  // `operately projects list --include-archived --space-id S --only-my-projects=false`
  const filtered = await cli(alice.write, 'query', 'projects/list', {
    only_my_projects: false, space_id: website.space.id, include_space: true, include_archived: true
  })
  t.equal(filtered.status, 200)
  t.same((filtered.body as ProjectList).projects.map((p) => p.name), ['Internal Tools', 'Website Redesign'])
  const mine = await cli(alice.write, 'query', 'projects/list', { only_my_projects: true })
  t.same((mine.body as ProjectList).projects.map((p) => p.name), ['Internal Tools', 'Website Redesign'], 'alice champions both')
  const reviewed = await cli(demo.tokens['erin@acme.test']!.write, 'query', 'projects/list', { only_reviewed_by_me: true })
  t.same((reviewed.body as ProjectList).projects.map((p) => p.name), ['Website Redesign'], 'erin reviews Website Redesign')
  // The CLI sends null as the text "null": not a boolean, so a 400 the CLI prints as it came.
  const bad = await cli(alice.write, 'query', 'projects/list', { include_archived: 'null' })
  t.equal(bad.status, 400)
  t.match(bad.body, { code: 'invalid_input' })
})

t.test('projects update_name, update_description (Markdown sent as its TipTap document), get --include-markdown', async (t) => {
  const list = (await cli(alice.write, 'query', 'projects/list')).body as ProjectList
  const id = list.projects.find((p) => p.name === 'Website Redesign')!.id

  const renamed = await cli(alice.write, 'mutation', 'projects/update_name', { project_id: id, name: 'Website Redesign (CLI)' })
  t.equal(renamed.status, 200)
  t.equal((renamed.body as ProjectAnswer).project.name, 'Website Redesign (CLI)')

  // `--description "# Launch plan\n\nShip **v2** by March. Ask @Carol."`: the CLI converts the
  // Markdown to this TipTap document and sends it as a JSON string.
  const carol = ((await cli(demo.tokens['carol@acme.test']!.write, 'query', 'people/get_me')).body as { me: { id: string } }).me.id
  const document = JSON.stringify({
    type: 'doc',
    content: [
      { type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'Launch plan' }] },
      {
        type: 'paragraph',
        content: [
          { type: 'text', text: 'Ship ' }, { type: 'text', text: 'v2', marks: [{ type: 'bold' }] }, { type: 'text', text: ' by March. Ask ' },
          { type: 'mention', attrs: { id: carol, label: 'Carol Martinez' } }, { type: 'text', text: '.' }
        ]
      }
    ]
  })
  const described = await cli(alice.write, 'mutation', 'projects/update_description', { project_id: id, description: document })
  t.equal(described.status, 200)
  t.equal((described.body as ProjectAnswer).project.description, document, 'stored and answered byte for byte')

  // The old id (its slug names the old name) still works, as ids do after a rename.
  const read = await cli(alice.read_only, 'query', 'projects/get', { id, include_markdown: true })
  t.equal(read.status, 200)
  const { project, markdown } = read.body as ProjectAnswer
  t.equal(project.name, 'Website Redesign (CLI)')
  t.equal(project.description, document)
  t.type(markdown, 'string')
  t.match(markdown, /^# Website Redesign \(CLI\)\n/)
  t.match(markdown, /Launch plan/)
  t.match(markdown, /Ship \*\*v2\*\* by March\. Ask @Carol Martinez\./)

  // Without the flag, the answer is the project alone.
  const plain = await cli(alice.write, 'query', 'projects/get', { id })
  t.same(Object.keys(plain.body as object), ['project'])
  const flagOff = await cli(alice.write, 'query', 'projects/get', { id, include_markdown: false })
  t.same(Object.keys(flagOff.body as object), ['project'])

  // A person who may only view gets the CLI's "API request failed (403)".
  const bob = await cli(demo.tokens['bob@acme.test']!.write, 'mutation', 'projects/update_name', { project_id: id, name: 'Nope' })
  t.equal(bob.status, 403)
  t.match(bob.body, { code: 'forbidden' })
})
