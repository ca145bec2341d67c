// The MCP tools through the SDK's own client over HTTP, as every demo person with
// a write and a read-only token: each answer is the HTTP API's for the same call
// (structuredContent its body, the text block its JSON, an error its envelope with
// isError), the write tools change what the HTTP operations change, and what they
// refuse writes nothing.
import { randomUUID } from 'node:crypto'
import t from '../tap.js'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { loadDemo } from '../../src/demo/load.js'
import { shortId } from '../../src/ids.js'
import { build, projectActivities, projectRow } from '../helper.js'
import { listen } from '../launch.js'
import { call, http, mcpClient } from './support.js'

const { app, db } = await build(t)
const demo = await loadDemo(db)
const { url } = await listen(app)

const PEOPLE = ['alice@acme.test', 'bob@acme.test', 'carol@acme.test', 'dave@globex.test', 'erin@acme.test']
const KINDS = ['write', 'read_only'] as const
const project = (name: string) => demo.projects[name]!.id
const website = project('Website Redesign')
const internal = project('Internal Tools')
const token = (email: string, kind: 'write' | 'read_only' = 'write') => demo.tokens[email]![kind]

const clients = new Map<string, Client>()
for (const email of PEOPLE) for (const kind of KINDS) clients.set(`${email} ${kind}`, await mcpClient(t, url, token(email, kind)))
const mcp = (email: string, kind: 'write' | 'read_only' = 'write') => clients.get(`${email} ${kind}`)!

t.test('tools/list: every tool with its schemas and annotations', async (t) => {
  const { tools } = await mcp('bob@acme.test', 'read_only').listTools()
  const lifecycle = ['create_project', 'update_project_champion', 'update_project_reviewer', 'update_project_start_date',
    'update_project_due_date', 'update_project_goal', 'move_project_to_space', 'pause_project', 'resume_project',
    'close_project', 'delete_project']
  t.same(tools.map((tool) => tool.name), ['get_me', 'get_current_company', 'list_projects', 'get_project', 'update_project_name',
    'update_project_description', ...lifecycle, 'list_notifications', 'mark_notifications_read', 'search', 'fetch'])
  const writes = new Set(['update_project_name', 'update_project_description', 'mark_notifications_read'])
  // The lifecycle tools' annotations are checked in lifecycle.test.ts.
  for (const tool of tools.filter((tool) => !lifecycle.includes(tool.name))) {
    t.equal(tool.inputSchema.type, 'object', `${tool.name}: input schema`)
    t.equal(tool.outputSchema?.type, 'object', `${tool.name}: output schema`)
    t.equal(tool.annotations?.readOnlyHint, !writes.has(tool.name), `${tool.name}: readOnlyHint`)
    t.equal(tool.annotations?.destructiveHint, false, `${tool.name}: destructiveHint`)
    t.equal(tool.annotations?.idempotentHint, true, `${tool.name}: idempotentHint`)
  }
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
  t.same(byName.get_project!.inputSchema.required, ['project_id'])
  t.same(Object.keys(byName.get_project!.inputSchema.properties!), ['project_id', 'include_markdown'])
  t.match(byName.get_project!.inputSchema.properties!.include_markdown, { type: 'boolean' })
  t.same(byName.update_project_description!.inputSchema.required, ['project_id', 'description'])
  t.match(byName.update_project_description!.inputSchema.properties!.description, { type: 'string', description: /Markdown/ })
  t.match(byName.list_projects!.inputSchema.properties, { only_my_projects: { type: 'boolean' }, limit: { type: 'integer' } })
  t.same(byName.search!.inputSchema.required, ['query'])
  t.same(byName.fetch!.inputSchema.required, ['id'])
})

t.test('the read tools answer what the HTTP API answers, as everyone with either token', async (t) => {
  const projectIds = [...Object.values(demo.projects).map((p) => p.id), randomUUID(), 'not-an-id']
  for (const email of PEOPLE) {
    for (const kind of KINDS) {
      const client = mcp(email, kind)
      const same = async (tool: string, args: Record<string, unknown>, url: string, query: Record<string, string> = {}) => {
        const answer = await call(client, tool, args)
        const expected = await http(app, token(email, kind), 'GET', url, query)
        t.same(answer.body, expected.body, `${email} ${kind} ${tool} ${JSON.stringify(args)}`)
        t.equal(answer.isError, expected.status !== 200)
        t.same(JSON.parse(answer.text), answer.body, 'the text block is the JSON')
        return answer
      }
      await same('get_me', {}, 'people/get_me')
      await same('get_current_company', {}, 'companies/get')
      await same('get_current_company', { include_people: true, include_admins: false }, 'companies/get', { include_people: 'true', include_admins: 'false' })
      await same('list_projects', {}, 'projects/list')
      await same('list_projects', { only_my_projects: true, limit: 1 }, 'projects/list', { only_my_projects: 'true', limit: '1' })
      await same('list_notifications', { per_page: 5 }, 'notifications/list', { per_page: '5' })
      for (const id of projectIds) {
        const answer = await same('get_project', { project_id: id }, 'projects/get', { id })
        if (answer.isError) t.match(answer.body, { statusCode: 404, code: 'not_found' })
        await same('get_project', { project_id: id, include_markdown: true }, 'projects/get', { id, include_markdown: 'true' })
      }
    }
  }
})

t.test('a project the person cannot see fails exactly like a missing one', async (t) => {
  const hidden = await call(mcp('bob@acme.test'), 'get_project', { project_id: internal })
  const missing = await call(mcp('bob@acme.test'), 'get_project', { project_id: randomUUID() })
  t.ok(hidden.isError)
  t.same(hidden.body, missing.body)
  t.equal(hidden.text, missing.text)
  const rename = await call(mcp('dave@globex.test'), 'update_project_name', { project_id: website, name: 'Mine' })
  t.same(rename.body, { statusCode: 404, error: 'Not Found', code: 'not_found', message: 'project not found' })
})

t.test('update_project_name: the HTTP answer, the row and the activity; refusals write nothing', async (t) => {
  const before = await projectRow(db, website)
  const activities = (await projectActivities(db, website)).length
  for (const [email, kind, code] of [
    ['alice@acme.test', 'read_only', 'read_only_token'],
    ['bob@acme.test', 'write', 'forbidden'],
    ['dave@globex.test', 'write', 'not_found'],
    ['erin@acme.test', 'read_only', 'read_only_token']
  ] as const) {
    const answer = await call(mcp(email, kind), 'update_project_name', { project_id: website, name: 'Refused' })
    t.ok(answer.isError, `${email} ${kind} refused`)
    t.equal(answer.body.code, code)
  }
  t.same(await projectRow(db, website), before, 'nothing written')
  t.equal((await projectActivities(db, website)).length, activities, 'nothing recorded')

  const renamed = await call(mcp('carol@acme.test'), 'update_project_name', { project_id: shortId(website), name: '  Website 3.0 ' })
  t.notOk(renamed.isError)
  t.same(renamed.body, (await http(app, token('carol@acme.test'), 'GET', 'projects/get', { id: website })).body, 'the project as carol now sees it')
  t.equal((await projectRow(db, website)).name, 'Website 3.0')
  const recorded = (await projectActivities(db, website)).at(-1)!
  t.match(recorded, { action: 'project_renamed', content: { old_name: before.name, new_name: 'Website 3.0' } })
  const carolsToken = await db.selectFrom('api_tokens').innerJoin('people', 'people.id', 'api_tokens.person_id')
    .where('people.email', '=', 'carol@acme.test').where('api_tokens.read_only', '=', false).select('api_tokens.id').executeTakeFirstOrThrow()
  t.equal(recorded.token_id, carolsToken.id, 'under the token of the call')
})

t.test('update_project_description: Markdown stored as the document, mentions subscribed', async (t) => {
  const carol = await db.selectFrom('people').where('email', '=', 'carol@acme.test').select('id').executeTakeFirstOrThrow()
  const markdown = `## Plan\n\nShip **v2** by *March*; ask @[Carol Diaz](${shortId(carol.id)}).\n\n- Home page\n- Pricing`
  const refused = await call(mcp('alice@acme.test', 'read_only'), 'update_project_description', { project_id: website, description: markdown })
  t.equal(refused.body.code, 'read_only_token')
  const answer = await call(mcp('alice@acme.test'), 'update_project_description', { project_id: website, description: markdown })
  t.notOk(answer.isError)
  const stored = (await projectRow(db, website)).description as string
  t.same(JSON.parse(stored), {
    type: 'doc',
    content: [
      { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Plan' }] },
      {
        type: 'paragraph',
        content: [
          { type: 'text', text: 'Ship ' }, { type: 'text', marks: [{ type: 'bold' }], text: 'v2' }, { type: 'text', text: ' by ' },
          { type: 'text', marks: [{ type: 'italic' }], text: 'March' }, { type: 'text', text: '; ask ' },
          { type: 'mention', attrs: { id: shortId(carol.id), label: 'Carol Diaz' } }, { type: 'text', text: '.' }
        ]
      },
      {
        type: 'bulletList',
        content: [
          { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Home page' }] }] },
          { type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Pricing' }] }] }
        ]
      }
    ]
  })
  t.equal((answer.body.project as { description: string }).description, stored, 'answered as stored')
  const subscribed = await db.selectFrom('subscriptions').innerJoin('subscription_lists', 'subscription_lists.id', 'subscriptions.subscription_list_id')
    .where('subscription_lists.project_id', '=', website).where('subscriptions.person_id', '=', carol.id).select('subscriptions.type').execute()
  t.equal(subscribed.length, 1, 'the mentioned person is subscribed')
  t.match((await projectActivities(db, website)).at(-1), { action: 'project_description_changed' })

  const cleared = await call(mcp('alice@acme.test'), 'update_project_description', { project_id: website, description: '  ' })
  t.equal((cleared.body.project as { description: string }).description, '{"type":"doc","content":[{"type":"paragraph"}]}', 'blank clears it')
})

t.test('list_notifications and mark_notifications_read', async (t) => {
  // alice's description changes above notified the project's other subscribers.
  const notified = await db.selectFrom('notifications').innerJoin('people', 'people.id', 'notifications.person_id')
    .where('notifications.read', '=', false).select(['people.email', 'notifications.id']).executeTakeFirstOrThrow()
  const id = shortId(notified.id)
  const listed = await call(mcp(notified.email), 'list_notifications', {})
  t.ok((listed.body.notifications as Array<{ id: string, read: boolean }>).some((n) => n.id === id && !n.read), 'listed, unread')
  const refused = await call(mcp(notified.email, 'read_only'), 'mark_notifications_read', { ids: [id] })
  t.equal(refused.body.code, 'read_only_token')
  t.equal((await db.selectFrom('notifications').where('id', '=', notified.id).select('read').executeTakeFirstOrThrow()).read, false, 'still unread')
  const unknown = await call(mcp(notified.email), 'mark_notifications_read', { ids: [id, shortId(randomUUID())] })
  t.equal(unknown.body.code, 'not_found')
  t.equal((await db.selectFrom('notifications').where('id', '=', notified.id).select('read').executeTakeFirstOrThrow()).read, false, 'all or none')
  const marked = await call(mcp(notified.email), 'mark_notifications_read', { ids: [id] })
  t.same(marked, { isError: false, body: {}, text: '{}' })
  const row = await db.selectFrom('notifications').where('id', '=', notified.id).select(['read', 'read_at']).executeTakeFirstOrThrow()
  t.equal(row.read, true)
  t.ok(row.read_at)
})

t.test('bad arguments are tool errors naming the argument', async (t) => {
  const client = mcp('alice@acme.test')
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['get_project', {}, '/project_id', 'project_id is required'],
    ['get_project', { project_id: '   ' }, '/project_id', 'project_id must not be blank'],
    ['get_project', { project_id: 42 }, '/project_id', 'project_id must be a string'],
    ['get_project', { project_id: website, include_markdown: 'true' }, '/include_markdown', 'include_markdown must be a boolean'],
    ['get_project', { project_id: website, id: website }, '/id', 'id is not allowed'],
    ['update_project_name', { project_id: website, name: '' }, '/name', 'name must not be blank'],
    ['update_project_name', { project_id: website, name: 7 }, '/name', 'name must be a string'],
    ['update_project_description', { project_id: website }, '/description', 'description is required'],
    ['update_project_description', { project_id: website, description: { type: 'doc' } }, '/description', 'description must be a string'],
    ['list_projects', { limit: 0 }, '/limit', 'limit must be from 1 to 100'],
    ['list_notifications', { per_page: 'ten' }, '/per_page', 'per_page must be an integer'],
    ['mark_notifications_read', { ids: [''] }, '/ids/0', 'ids.0 must not be blank'],
    ['search', { query: ' ' }, '/query', 'query must not be blank'],
    // An argument that takes one of several kinds: one reason, naming them all.
    ['update_project_goal', { project_id: website, goal_id: 5 }, '/goal_id', 'goal_id must be a string or null'],
    ['update_project_due_date', { project_id: website, due_date: 20270101 }, '/due_date', 'due_date must be a string or null'],
    ['create_project', { space_id: website, name: 'New', company_access_level: 55 }, '/company_access_level', 'company_access_level must be 0, 10, 40, 70 or 100']
  ]
  for (const [tool, args, path, message] of cases) {
    const answer = await call(client, tool, args)
    t.ok(answer.isError, `${tool} ${JSON.stringify(args)}`)
    t.match(answer.body, { statusCode: 400, error: 'Bad Request', code: 'invalid_input', message, details: [{ path }] })
  }
  t.equal((await projectRow(db, website)).name, 'Website 3.0', 'nothing written')
  await t.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /unknown tool/)
})

t.test('search and fetch: the projects the person can see, as ChatGPT connectors read them', async (t) => {
  const found = await call(mcp('alice@acme.test', 'read_only'), 'search', { query: 'website' })
  const websiteId = (await http(app, token('alice@acme.test'), 'GET', 'projects/get', { id: website })).body.project as { id: string, name: string }
  t.same(found.body, { results: [{ id: websiteId.id, title: websiteId.name, url: `${url}/api/external/v1/projects/get?id=${websiteId.id}` }] })
  t.same((await call(mcp('alice@acme.test'), 'search', { query: 'INTERNAL tools' })).body.results, [
    { id: `internal-tools-${shortId(internal)}`, title: 'Internal Tools', url: `${url}/api/external/v1/projects/get?id=internal-tools-${shortId(internal)}` }
  ])
  t.same((await call(mcp('bob@acme.test'), 'search', { query: 'internal' })).body, { results: [] }, 'not what bob cannot see')
  t.same((await call(mcp('dave@globex.test'), 'search', { query: 'website' })).body, { results: [] })

  const fetched = await call(mcp('bob@acme.test', 'read_only'), 'fetch', { id: websiteId.id })
  const expected = await http(app, token('bob@acme.test'), 'GET', 'projects/get', { id: websiteId.id, include_markdown: 'true' })
  const p = expected.body.project as Record<string, string> & { space: { name: string } }
  t.same(fetched.body, {
    id: p.id,
    title: p.name,
    text: expected.body.markdown,
    url: `${url}/api/external/v1/projects/get?id=${p.id}`,
    metadata: { space: p.space.name, state: p.state, status: p.status, privacy: p.privacy, updated_at: p.updated_at }
  })
  const hidden = await call(mcp('bob@acme.test'), 'fetch', { id: internal })
  t.match(hidden.body, { statusCode: 404, code: 'not_found' })
})
