// The API as a client generated from its OpenAPI document sees it: the committed
// client types (test/openapi/api.d.ts) match the live document, and an openapi-fetch
// client typed by them drives every operation of a listening server, success and
// errors, with the database checked afterwards.
import { readFile } from 'node:fs/promises'
import createClient from 'openapi-fetch'
import t from './tap.js'
import { shortId } from '../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, projectActivities, projectRow, tokenFor } from './helper.js'
import type { paths } from './openapi/api.js'
import { clientTypes, TYPES_FILE } from './openapi/generate.js'
import { listen } from './launch.js'

const { app, db } = await build(t)
const { url: baseUrl } = await listen(app)

const company = await createCompany(db, 'Typed Client Co')
const champion = await createPerson(db, company.id, { fullName: 'Client Champion', title: 'Lead' })
const admin = await createPerson(db, company.id, { fullName: 'Client Admin', isAdmin: true })
const space = await createSpace(db, company.id, [champion.id])
const project = await createProject(db, space, { name: 'Typed Client', access: { space: 70 } })
await addContributor(db, project.id, champion.id, 'champion')
// Two more the champion sees, for a list of three: B, Typed Client, Z.
const before = await createProject(db, space, { name: 'B Typed', access: { space: 10 } })
const after = await createProject(db, space, { name: 'Z Typed', access: { space: 10 } })
const { token, id: tokenId } = await tokenFor(db, champion.email)

const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } })
const anonymous = createClient<paths>({ baseUrl })

t.test('the committed client types are generated from the live document', async (t) => {
  const doc = (await app.inject({ method: 'GET', url: '/api/external/v1/openapi.json' })).json<object>()
  const committed = await readFile(TYPES_FILE, 'utf8')
  t.equal(committed, await clientTypes(doc),
    'test/openapi/api.d.ts is out of date: run `npm run openapi && npx tsx test/openapi/generate.ts`')
})

t.test('update_name through the typed client: the trimmed name answered, stored and audited under the token', async (t) => {
  const { data, error, response } = await api.POST('/api/external/v1/projects/update_name', {
    body: { project_id: project.publicId, name: '  Typed Client 2  ' }
  })
  t.equal(response.status, 200)
  t.equal(error, undefined)
  if (!data) return t.fail('no body')
  const name: string = data.project.name
  t.equal(name, 'Typed Client 2')
  t.equal(data.project.my_role, 'champion')
  t.equal(data.project.permissions.can_edit, true)
  t.equal((await projectRow(db, project.id)).name, 'Typed Client 2')
  const activities = await projectActivities(db, project.id)
  t.match(activities.at(-1), { action: 'project_renamed', author_id: champion.id, token_id: tokenId })
})

t.test('update_description through the typed client: the document answered, stored and audited under the token', async (t) => {
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'From the typed client' }] }] })
  const { data, response } = await api.POST('/api/external/v1/projects/update_description', {
    body: { project_id: project.publicId, description }
  })
  t.equal(response.status, 200)
  t.equal(data?.project.description, description)
  t.equal((await projectRow(db, project.id)).description, description)
  const activities = await projectActivities(db, project.id)
  t.match(activities.at(-1), { action: 'project_description_changed', author_id: champion.id, token_id: tokenId })
})

t.test('get through the typed client: the renamed project with its access levels and champion', async (t) => {
  const { data, response } = await api.GET('/api/external/v1/projects/get', { params: { query: { id: project.publicId } } })
  t.equal(response.status, 200)
  if (!data) return t.fail('no body')
  t.equal(data.project.name, 'Typed Client 2')
  t.equal(data.project.space.id.length > 0, true)
  t.same(data.project.access_levels, { public: 0, company: 0, space: 70 })
  t.equal(data.project.champion?.full_name, 'Client Champion')
})

t.test('get with include_markdown=true through the typed client: the project and its Markdown', async (t) => {
  const { data, response } = await api.GET('/api/external/v1/projects/get', { params: { query: { id: project.publicId, include_markdown: 'true' } } })
  t.equal(response.status, 200)
  if (!data) return t.fail('no body')
  const markdown: string | undefined = data.markdown
  t.type(markdown, 'string')
  t.match(markdown, /^# Typed Client 2\n/)
  t.match(markdown, /^- Champion: Client Champion \(Lead\)$/m)
  t.match(markdown, /^## Description\n\nFrom the typed client$/m)
  t.equal(data.project.name, 'Typed Client 2')
  const plain = await api.GET('/api/external/v1/projects/get', { params: { query: { id: project.publicId, include_markdown: 'false' } } })
  t.equal(plain.data?.markdown, undefined, 'false: no markdown')
  t.same(plain.data?.project, data.project)
})

t.test('people/get_me through the typed client: the token\'s person', async (t) => {
  const { data, response } = await api.GET('/api/external/v1/people/get_me', { params: { query: { include_manager: 'true' } } })
  t.equal(response.status, 200)
  if (!data) return t.fail('no body')
  const fullName: string = data.me.full_name
  t.equal(fullName, 'Client Champion')
  t.same(data.me, { id: shortId(champion.id), full_name: 'Client Champion', email: champion.email, title: 'Lead', avatar_url: null, type: 'human' })
})

t.test('companies/get through the typed client: the company, with its admins when asked', async (t) => {
  const { data, response } = await api.GET('/api/external/v1/companies/get', { params: { query: { include_admins: 'true' } } })
  t.equal(response.status, 200)
  if (!data) return t.fail('no body')
  const count: number = data.company.member_count
  t.equal(count, 2)
  t.equal(data.company.id, shortId(company.id))
  t.equal(data.company.name, 'Typed Client Co')
  t.same(data.company.admins?.map((a) => a.full_name), ['Client Admin'])
  t.equal(data.company.people, null)
  t.equal(admin.email, data.company.admins?.[0]?.email)
})

t.test('projects/list through the typed client: pages of two, then one, by name, following next_cursor', async (t) => {
  const first = await api.GET('/api/external/v1/projects/list', { params: { query: { limit: '2' } } })
  t.equal(first.response.status, 200)
  if (!first.data) return t.fail('no body')
  t.same(first.data.projects.map((p) => p.name), ['B Typed', 'Typed Client 2'])
  const cursor: string | null = first.data.next_cursor
  if (cursor === null) return t.fail('no next page')
  const second = await api.GET('/api/external/v1/projects/list', { params: { query: { limit: '2', cursor } } })
  t.equal(second.response.status, 200)
  t.same(second.data?.projects.map((p) => p.id), [after.publicId])
  t.equal(second.data?.next_cursor, null)
  t.equal(first.data.projects[0]?.id, before.publicId)
  t.equal(first.data.projects[1]?.my_role, 'champion')

  const bad = await api.GET('/api/external/v1/projects/list', { params: { query: { cursor: `${cursor}x` } } })
  t.equal(bad.response.status, 400)
  t.same(bad.error?.details?.map((d) => d.path), ['/cursor'])
})

t.test('both health probes answer the typed client without a token', async (t) => {
  const live = await anonymous.GET('/health/live')
  t.equal(live.response.status, 200)
  t.equal(live.data?.status, 'live')
  const ready = await anonymous.GET('/health/ready')
  t.equal(ready.response.status, 200)
  t.equal(ready.data?.status, 'ready')
  t.match(ready.data?.migration, /^\d{14}_/)
})

t.test('401, 404 and 400 arrive as the typed error envelope, and the 400 writes nothing', async (t) => {
  const unauthenticated = await anonymous.GET('/api/external/v1/projects/get', { params: { query: { id: project.publicId } } })
  t.equal(unauthenticated.response.status, 401)
  t.equal(unauthenticated.data, undefined)
  const code: string | undefined = unauthenticated.error?.code
  t.equal(code, 'unauthenticated')
  t.equal(unauthenticated.error?.statusCode, 401)
  t.equal(unauthenticated.response.headers.get('www-authenticate'), 'Bearer realm="api"')

  const missing = await api.GET('/api/external/v1/projects/get', { params: { query: { id: 'no-such-project-4Ck0aqTnqYgPo0FVqTbLYS' } } })
  t.equal(missing.response.status, 404)
  t.same(missing.error, { statusCode: 404, error: 'Not Found', code: 'not_found', message: 'project not found' })

  const blank = await api.POST('/api/external/v1/projects/update_name', { body: { project_id: project.publicId, name: ' ' } })
  t.equal(blank.response.status, 400)
  t.same(blank.error?.details, [{ path: '/name', message: 'must not be blank' }])
  t.equal((await projectRow(db, project.id)).name, 'Typed Client 2', 'nothing changed')
})

t.test('notifications through the typed client: a mention arrives, is counted, listed and marked as read', async (t) => {
  const colleague = await createPerson(db, company.id, { fullName: 'Client Colleague' })
  await db.insertInto('space_members').values({ space_id: space.id, person_id: colleague.id }).execute()
  const theirs = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${(await tokenFor(db, colleague.email)).token}` } })
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { id: shortId(colleague.id) } }] }] })
  const described = await api.POST('/api/external/v1/projects/update_description', { body: { project_id: project.publicId, description } })
  t.equal(described.response.status, 200)
  t.same(described.data?.project.subscription_list?.subscriptions.map((s) => [s.person.full_name, s.type]), [['Client Colleague', 'mentioned']])

  const count = await theirs.GET('/api/external/v1/notifications/get_unread_count')
  t.equal(count.response.status, 200)
  const unread: number | undefined = count.data?.unread
  t.equal(unread, 1)
  const listed = await theirs.GET('/api/external/v1/notifications/list', { params: { query: { per_page: '10' } } })
  t.equal(listed.response.status, 200)
  const item = listed.data?.notifications[0]
  const stored = await db.selectFrom('notifications').selectAll().where('person_id', '=', colleague.id).executeTakeFirstOrThrow()
  t.equal(listed.data?.notifications.length, 1)
  t.equal(item?.id, shortId(stored.id))
  t.equal(item?.action, 'project_description_changed')
  t.equal(item?.project?.name, 'Typed Client 2')
  t.equal(item?.author?.full_name, 'Client Champion')

  const marked = await theirs.POST('/api/external/v1/notifications/mark_as_read', { body: { id: shortId(stored.id) } })
  t.equal(marked.response.status, 200)
  t.same(marked.data, {})
  t.equal((await db.selectFrom('notifications').select('read').where('id', '=', stored.id).executeTakeFirstOrThrow()).read, true)
  const many = await theirs.POST('/api/external/v1/notifications/mark_many_as_read', { body: { ids: [shortId(stored.id)] } })
  t.equal(many.response.status, 200)
  const all = await theirs.POST('/api/external/v1/notifications/mark_all_as_read', { body: {} })
  t.equal(all.response.status, 200)
  t.same((await theirs.GET('/api/external/v1/notifications/get_unread_count')).data, { unread: 0 })

  const foreign = await api.POST('/api/external/v1/notifications/mark_as_read', { body: { id: shortId(stored.id) } })
  t.equal(foreign.response.status, 404)
  t.equal(foreign.error?.code, 'not_found', "the champion may not mark the colleague's")
})

t.test('webhooks through the typed client: an admin creates, lists, rotates, reads deliveries and deletes; others get a typed 403', async (t) => {
  const admins = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${(await tokenFor(db, admin.email)).token}` } })
  const created = await admins.POST('/api/external/v1/webhooks/create', { body: { url: 'https://8.8.8.8/typed', events: ['project.renamed'] } })
  t.equal(created.response.status, 200)
  const secret: string | undefined = created.data?.secret
  const webhook = created.data?.webhook
  t.match(secret, /^whsec_/)
  t.same(webhook?.events, ['project.renamed'])
  const stored = await db.selectFrom('webhooks').selectAll().where('company_id', '=', company.id).executeTakeFirstOrThrow()
  t.equal(stored.secret, secret)

  const renamed = await api.POST('/api/external/v1/projects/update_name', { body: { project_id: project.publicId, name: 'Typed Client 3' } })
  t.equal(renamed.response.status, 200)
  const deliveries = await admins.GET('/api/external/v1/webhooks/list_deliveries', { params: { query: { webhook_id: webhook!.id } } })
  t.equal(deliveries.response.status, 200)
  t.equal(deliveries.data?.deliveries.length, 1)
  t.equal(deliveries.data?.deliveries[0]?.event_type, 'project.renamed')

  const listed = await admins.GET('/api/external/v1/webhooks/list')
  t.same(listed.data?.webhooks.map((w) => w.url), ['https://8.8.8.8/typed'])
  const rotated = await admins.POST('/api/external/v1/webhooks/rotate_secret', { body: { id: webhook!.id } })
  t.not(rotated.data?.secret, secret)

  const refused = await api.GET('/api/external/v1/webhooks/list')
  t.equal(refused.response.status, 403)
  t.equal(refused.error?.code, 'forbidden', 'the champion is no admin')
  const deleted = await admins.POST('/api/external/v1/webhooks/delete', { body: { id: webhook!.id } })
  t.same(deleted.data, {})
  t.equal((await db.selectFrom('webhooks').select('id').where('company_id', '=', company.id).execute()).length, 0)
})
