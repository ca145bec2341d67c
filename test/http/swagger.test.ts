// The OpenAPI document and the reference at /docs: a valid OpenAPI 3.1 document that
// lists every project route with its request schema, every error status with the
// shared envelope, the bearer scheme where a token is needed, and examples that
// validate; /docs served wholly by this app under a policy of its own while the API
// keeps helmet's strict one; and the committed openapi.json equal to the live document.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import type { RouteOptions } from 'fastify'
import t from '../tap.js'
import { DOCUMENT_FILE } from '../openapi/generate.js'
import { build, createCompany, createPerson, tokenFor } from '../helper.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

const API = '/api/external/v1'
const PROJECTS = `${API}/projects`
const NOTIFICATIONS = `${API}/notifications`
const WEBHOOKS = `${API}/webhooks`
const DOCUMENT_URL = '/api/external/v1/openapi.json'
const ERROR_REF = '#/components/schemas/Error'
// helmet's default policy, which every API answer keeps.
const STRICT_CSP = "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';" +
  "frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';" +
  "style-src 'self' https: 'unsafe-inline';upgrade-insecure-requests"

// The app as the server builds it, plus a list of every route it registers.
const routes: RouteOptions[] = []
const { app: server, db } = await build(t, { before: (server) => { server.addHook('onRoute', (route) => { routes.push(route) }) } })
await server.ready()

const fetched = await server.inject({ method: 'GET', url: DOCUMENT_URL })
const doc = fetched.json<Json>()

const methodsOf = (route: RouteOptions) => [route.method].flat().filter((m) => m !== 'HEAD')
// Fastify adds a HEAD route beside each GET; it is not an operation of its own.
const apiRoutes = routes.filter((r) => r.url.startsWith(`${API}/`) && r.url !== DOCUMENT_URL && methodsOf(r).length > 0)
// The API's operations, each under the resource it is tagged with.
// Issue 64's operations of this branch: project mutations, each conditional.
const LIFECYCLE = ['pause', 'resume', 'close', 'update_champion', 'update_reviewer', 'create_contributor', 'update_contributor', 'delete_contributor']
const OPERATIONS = [
  `get ${API}/companies/get`,
  `get ${NOTIFICATIONS}/get_unread_count`, `get ${NOTIFICATIONS}/list`, `post ${NOTIFICATIONS}/mark_all_as_read`,
  `post ${NOTIFICATIONS}/mark_as_read`, `post ${NOTIFICATIONS}/mark_many_as_read`,
  `get ${API}/people/get_me`,
  `get ${PROJECTS}/get`, `get ${PROJECTS}/list`, `post ${PROJECTS}/update_description`, `post ${PROJECTS}/update_name`,
  `post ${PROJECTS}/create`, `post ${PROJECTS}/update_start_date`, `post ${PROJECTS}/update_due_date`,
  `post ${PROJECTS}/update_parent_goal`, `post ${PROJECTS}/move_to_space`, `post ${PROJECTS}/delete`,
  `post ${WEBHOOKS}/create`, `get ${WEBHOOKS}/list`, `post ${WEBHOOKS}/delete`, `post ${WEBHOOKS}/rotate_secret`, `get ${WEBHOOKS}/list_deliveries`,
  ...LIFECYCLE.map((op) => `post ${PROJECTS}/${op}`)
].sort()
const operationsOf = (d: Json) => Object.entries(d.paths as Json).flatMap(([path, item]) =>
  Object.entries(item as Json).map(([method, operation]) => ({ path, method, operation: operation as Json })))

t.test('the document is served without a token, as valid OpenAPI 3.1', async (t) => {
  t.equal(fetched.statusCode, 200)
  t.match(fetched.headers['content-type'], /^application\/json/)
  t.equal(doc.openapi, '3.1.0')
  const { valid, errors } = await new Validator().validate(doc)
  t.equal(valid, true, `the document is not valid OpenAPI:\n${JSON.stringify(errors, null, 2)}`)
  t.notOk(JSON.stringify(doc).includes('x-component'), 'no internal marker is left in the document')
  t.notOk(doc.paths[DOCUMENT_URL], 'the document does not list itself')
  t.notOk(Object.keys(doc.paths).some((path) => path.startsWith('/docs')), 'nor the reference')
})

t.test('every API route is documented with its request schema', async (t) => {
  t.equal(apiRoutes.length, OPERATIONS.length, 'the operations of the API')
  for (const route of apiRoutes) {
    for (const method of methodsOf(route)) {
      const operation = doc.paths[route.url]?.[method.toLowerCase()] as Json | undefined
      if (!operation) {
        t.fail(`${method} ${route.url} is missing from the document`)
        continue
      }
      t.ok(operation.operationId, `${route.url} has an operationId`)
      t.same(operation.tags, [route.url.split('/')[4]], `${route.url} is tagged with its resource`)
      t.ok(operation.summary && operation.description, `${route.url} is described`)
      const schema = route.schema as Json
      if (schema.body) {
        const body = operation.requestBody?.content?.['application/json']?.schema as Json
        t.equal(operation.requestBody.required, true)
        t.same(Object.keys(body.properties), Object.keys(schema.body.properties), `${route.url}: body properties`)
        t.same(body.required, schema.body.required, `${route.url}: required body properties`)
        t.equal(body.additionalProperties, false, `${route.url}: unknown body fields are refused`)
      }
      if (schema.querystring) {
        const parameters = ((operation.parameters ?? []) as Json[]).filter((p) => p.in === 'query')
        t.same(parameters.map((p) => p.name), Object.keys(schema.querystring.properties), `${route.url}: query parameters`)
        for (const parameter of parameters) {
          t.equal(parameter.required, (schema.querystring.required ?? []).includes(parameter.name), `${route.url}: ${parameter.name} required`)
        }
      }
      t.ok(schema.body || schema.querystring, `${route.url} validates its input`)
    }
  }
  t.same(operationsOf(doc).filter((o) => o.path.startsWith(API)).map((o) => `${o.method} ${o.path}`).sort(), OPERATIONS, 'and nothing else is')
})

t.test('every error status an operation can answer is listed with the error envelope', async (t) => {
  const mutation = ['200', '400', '401', '403', '404', '408', '413', '415', '429', '500', '503']
  const query = ['200', '400', '401', '404', '429', '500', '503']
  // Conditional requests: a project mutation may be 412 (If-Match), projects/get 304 (If-None-Match).
  const conditionalMutation = [...mutation, '412'].sort()
  const expected: Record<string, string[]> = {
    [`post ${PROJECTS}/update_name`]: conditionalMutation,
    [`post ${PROJECTS}/update_description`]: conditionalMutation,
    [`post ${PROJECTS}/create`]: mutation,
    [`post ${PROJECTS}/update_start_date`]: conditionalMutation,
    [`post ${PROJECTS}/update_due_date`]: conditionalMutation,
    [`post ${PROJECTS}/update_parent_goal`]: conditionalMutation,
    [`post ${PROJECTS}/move_to_space`]: conditionalMutation,
    [`post ${PROJECTS}/delete`]: conditionalMutation,
    ...Object.fromEntries(LIFECYCLE.map((op) => [`post ${PROJECTS}/${op}`, conditionalMutation])),
    [`get ${PROJECTS}/get`]: [...query, '304'].sort(),
    [`get ${PROJECTS}/list`]: query,
    [`get ${API}/people/get_me`]: query,
    [`get ${API}/companies/get`]: query,
    [`get ${NOTIFICATIONS}/list`]: query,
    [`get ${NOTIFICATIONS}/get_unread_count`]: query,
    [`post ${NOTIFICATIONS}/mark_as_read`]: mutation,
    [`post ${NOTIFICATIONS}/mark_many_as_read`]: mutation,
    [`post ${NOTIFICATIONS}/mark_all_as_read`]: mutation,
    [`post ${WEBHOOKS}/create`]: mutation,
    [`get ${WEBHOOKS}/list`]: [...query, '403'].sort(),
    [`post ${WEBHOOKS}/delete`]: mutation,
    [`post ${WEBHOOKS}/rotate_secret`]: mutation,
    [`get ${WEBHOOKS}/list_deliveries`]: [...query, '403'].sort(),
    'get /health/live': ['200', '500'],
    'get /health/ready': ['200', '500', '503']
  }
  const operations = operationsOf(doc)
  t.same(operations.map((o) => `${o.method} ${o.path}`).sort(), Object.keys(expected).sort())
  for (const { path, method, operation } of operations) {
    const name = `${method} ${path}`
    t.same(Object.keys(operation.responses).sort(), expected[name], `${name}: statuses`)
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      t.ok(response.description && response.description !== 'Default Response', `${name} ${status} is described`)
      if (status === '304') {
        t.notOk(response.content, `${name} 304 has no body`)
        continue
      }
      const media = response.content?.['application/json'] as Json
      if (status === '200') {
        t.not(media.schema.$ref, ERROR_REF)
        continue
      }
      t.same(media.schema, { $ref: ERROR_REF }, `${name} ${status} is the error envelope`)
      const examples = Object.values(media.examples as Json)
      t.ok(examples.length > 0, `${name} ${status} has an example`)
      for (const example of examples) t.equal(example.value.statusCode, Number(status), `${name} ${status}: example status`)
    }
    const headers = (status: string) => Object.keys(operation.responses[status]?.headers ?? {})
    if (operation.responses['401']) t.same(headers('401'), ['WWW-Authenticate'])
    if (operation.responses['429']) t.ok(headers('429').includes('Retry-After'))
    if (operation.responses['503']) t.same(headers('503'), ['Retry-After'])
    // Every answer that carries one project carries its tag; so do a 304 and a 412.
    const carriesProject = path.startsWith(PROJECTS) && !path.endsWith('/list')
    t.equal(headers('200').includes('ETag'), carriesProject, `${name} 200: ETag ${carriesProject ? 'documented' : 'absent'}`)
    for (const status of ['304', '412']) {
      if (operation.responses[status]) t.same(headers(status), ['ETag'], `${name} ${status}: ETag`)
    }
    const conditional = ((operation.parameters ?? []) as Json[]).filter((p) => p.in === 'header').map((p) => p.name)
    // A new project has no version to be conditional on.
    const conditionable = carriesProject && !path.endsWith('/create')
    t.same(conditional, !conditionable ? [] : method === 'get' ? ['if-none-match'] : ['if-match'], `${name}: its conditional header`)
  }
  const envelope = doc.components.schemas.Error as Json
  t.same(Object.keys(envelope.properties), ['statusCode', 'error', 'code', 'message', 'details'])
  t.same(envelope.required, ['statusCode', 'error', 'code', 'message'])
})

t.test('each operation describes its own 404: what is not found, in its own words', async (t) => {
  const notFound = (name: string) => {
    const [method, path] = name.split(' ') as [string, string]
    const response = doc.paths[path][method].responses['404'] as Json
    const messages = Object.values(response.content['application/json'].examples as Json).map((e) => e.value.message as string)
    return { description: response.description as string, messages }
  }
  const names: Record<string, string> = {
    [`post ${PROJECTS}/update_name`]: 'project not found',
    [`post ${PROJECTS}/update_description`]: 'project not found',
    [`post ${PROJECTS}/create`]: 'space not found',
    [`post ${PROJECTS}/update_start_date`]: 'project not found',
    [`post ${PROJECTS}/update_due_date`]: 'project not found',
    [`post ${PROJECTS}/update_parent_goal`]: 'project not found',
    [`post ${PROJECTS}/move_to_space`]: 'project not found',
    [`post ${PROJECTS}/delete`]: 'project not found',
    [`get ${PROJECTS}/get`]: 'project not found',
    ...Object.fromEntries(LIFECYCLE.map((op) => [`post ${PROJECTS}/${op}`, 'project not found'])),
    [`post ${NOTIFICATIONS}/mark_as_read`]: 'notification not found',
    [`post ${NOTIFICATIONS}/mark_many_as_read`]: 'notification not found',
    [`get ${API}/people/get_me`]: 'person not found',
    [`get ${API}/companies/get`]: 'company not found',
    [`post ${WEBHOOKS}/delete`]: 'webhook not found',
    [`post ${WEBHOOKS}/rotate_secret`]: 'webhook not found',
    [`get ${WEBHOOKS}/list_deliveries`]: 'webhook not found'
  }
  for (const name of OPERATIONS) {
    const { description, messages } = notFound(name)
    const noun = names[name]
    if (noun === undefined) {
      t.same(messages, ['not found'], `${name}: names nothing to find`)
      t.match(description, /^Not answered by this operation: /, `${name}: says it never answers 404`)
    } else {
      t.same(messages, [noun], `${name}: the example says what is not found`)
      t.match(description, new RegExp(`\\b${noun.split(' ')[0]}`), `${name}: so does the description`)
    }
    if (!name.includes('/projects/')) t.notMatch(description, /project/i, `${name}: the 404 is not about a project`)
  }

  // What the document says is what the operations answer.
  const person = await createPerson(db, (await createCompany(db)).id)
  const headers = { authorization: `Bearer ${(await tokenFor(db, person.email)).token}` }
  const unknown = '0123456789ABCDEFGHIJKL'
  const answers: Array<[string, () => Promise<{ json: () => Json, statusCode: number }>]> = [
    [`post ${NOTIFICATIONS}/mark_as_read`, () => server.inject({ method: 'POST', url: `${NOTIFICATIONS}/mark_as_read`, headers, payload: { id: unknown } })],
    [`post ${NOTIFICATIONS}/mark_many_as_read`, () => server.inject({ method: 'POST', url: `${NOTIFICATIONS}/mark_many_as_read`, headers, payload: { ids: [unknown] } })],
    [`get ${PROJECTS}/get`, () => server.inject({ method: 'GET', url: `${PROJECTS}/get?id=${unknown}`, headers })],
    [`post ${PROJECTS}/update_name`, () => server.inject({ method: 'POST', url: `${PROJECTS}/update_name`, headers, payload: { project_id: unknown, name: 'A' } })]
  ]
  for (const [name, request] of answers) {
    const res = await request()
    t.equal(res.statusCode, 404, name)
    t.equal(res.json().message, notFound(name).messages[0], `${name}: answers the documented 404`)
  }
})

t.test('the bearer scheme guards the API operations and not the health probes', async (t) => {
  t.match(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: /pat_.*tokens create/s })
  for (const { path, method, operation } of operationsOf(doc)) {
    const security = operation.security ?? doc.security
    if (path.startsWith(API)) t.same(security, [{ bearerAuth: [] }], `${method} ${path} needs a token`)
    else t.same(security, [], `${method} ${path} needs none`)
  }
  const health = await server.inject({ method: 'GET', url: '/health/live' })
  t.equal(health.statusCode, 200, 'and indeed a probe answers without one')
  const project = await server.inject({ method: 'GET', url: `${PROJECTS}/get?id=x` })
  t.equal(project.statusCode, 401, 'while a project operation refuses to')
})

t.test('every example in the document validates against its own schema', async (t) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  formats.default(ajv)
  const ROOT = 'https://projects-api.test/openapi.json'
  ajv.addSchema({ ...doc, $id: ROOT })
  const pointer = (path: string[]) => path.map((p) => encodeURIComponent(p.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')
  const checked: string[] = []
  const check = (value: unknown, schemaPath: string[], where: string) => {
    const validate = ajv.getSchema(`${ROOT}#/${pointer(schemaPath)}`)
    if (!validate) return t.fail(`no schema at ${schemaPath.join(' ')}`)
    checked.push(where)
    t.ok(validate(value), `${where}: ${JSON.stringify(validate.errors)}`)
  }
  // Examples on a schema and on the schemas inside it.
  const walkSchema = (schema: Json, path: string[]) => {
    if (typeof schema !== 'object' || schema === null) return
    for (const [i, example] of (Array.isArray(schema.examples) ? schema.examples : []).entries()) {
      check(example, path, `${path.join(' ')} examples[${i}]`)
    }
    for (const key of ['properties', 'patternProperties', '$defs']) {
      for (const [name, sub] of Object.entries((schema[key] ?? {}) as Json)) walkSchema(sub, [...path, key, name])
    }
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
      for (const [i, sub] of ((schema[key] ?? []) as Json[]).entries()) walkSchema(sub, [...path, key, String(i)])
    }
    for (const key of ['items', 'additionalProperties', 'not', 'contains']) {
      if (typeof schema[key] === 'object') walkSchema(schema[key], [...path, key])
    }
  }
  // Examples of media types (request bodies, responses) and parameters.
  const walkMedia = (media: Json, path: string[]) => {
    if ('example' in media) check(media.example, [...path, 'schema'], `${path.join(' ')} example`)
    for (const [name, example] of Object.entries((media.examples ?? {}) as Json)) {
      check(example.value, [...path, 'schema'], `${path.join(' ')} examples.${name}`)
    }
    walkSchema(media.schema, [...path, 'schema'])
  }
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) walkSchema(schema, ['components', 'schemas', name])
  for (const { path, method, operation } of operationsOf(doc)) {
    const at = ['paths', path, method]
    for (const [type, media] of Object.entries((operation.requestBody?.content ?? {}) as Json)) {
      walkMedia(media, [...at, 'requestBody', 'content', type])
    }
    for (const [i, parameter] of ((operation.parameters ?? []) as Json[]).entries()) walkMedia(parameter, [...at, 'parameters', String(i)])
    for (const [status, response] of Object.entries(operation.responses as Json)) {
      for (const [type, media] of Object.entries((response.content ?? {}) as Json)) {
        walkMedia(media, [...at, 'responses', status, 'content', type])
      }
    }
  }

  for (const { path, operation } of operationsOf(doc).filter((o) => o.method === 'post')) {
    t.ok(operation.requestBody.content['application/json'].example, `${path}: a request example`)
  }
  for (const { path, method, operation } of operationsOf(doc)) {
    t.ok(operation.responses['200'].content['application/json'].example, `${method} ${path}: a 200 example`)
  }
  t.ok(checked.length > 50, `${checked.length} examples checked`)

  // The check itself can fail: a project with one key too many is refused.
  const ok = ajv.getSchema(`${ROOT}#/${pointer(['paths', `${PROJECTS}/get`, 'get', 'responses', '200', 'content', 'application/json', 'schema'])}`)!
  const example = doc.paths[`${PROJECTS}/get`].get.responses['200'].content['application/json'].example
  t.equal(ok(example), true)
  t.equal(ok({ project: { ...example.project, extra: 1 } }), false, 'an unknown key is refused')
  t.equal(ok({ project: { ...example.project, champion: { ...example.project.champion, type: 'robot' } } }), false, 'so is a bad nested value')
})

t.test('/docs is served by this app alone, under its own policy', async (t) => {
  const redirect = await server.inject({ method: 'GET', url: '/docs' })
  t.equal(redirect.statusCode, 301)
  t.equal(redirect.headers.location, '/docs/')

  const page = await server.inject({ method: 'GET', url: '/docs/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.equal(page.headers['cache-control'], 'no-store', 'the page is fetched afresh')
  const html = page.body
  t.notMatch(html, /(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i, 'no address elsewhere in the page')

  const sources = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/gi)].map((m) => m[1]!)
  t.ok(sources.length > 0, 'the page loads a script')
  for (const source of sources) {
    const url = new URL(source, 'http://self.test/docs/')
    t.equal(url.origin, 'http://self.test', `${source} is served from this origin`)
    const script = await server.inject({ method: 'GET', url: url.pathname })
    t.equal(script.statusCode, 200, `${url.pathname} answers`)
    t.match(script.headers['content-type'], /javascript/)
    t.ok(script.body.length > 100_000, `${url.pathname} is the reference's bundle`)
    t.equal(script.headers['cache-control'], 'public, max-age=3600', `${url.pathname} may be kept for an hour`)
  }
  t.match(html, `"url": "${DOCUMENT_URL}"`, 'the reference reads the document of this app')

  // Scripts: this origin, plus the page's inline ones by hash; nothing else.
  const policy = String(page.headers['content-security-policy'])
  const directives = new Map(policy.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1)]))
  const inline = [...html.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)]
  t.ok(inline.length > 0, 'the page configures the reference inline')
  t.same(directives.get('script-src'), ["'self'", ...inline.map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`)])
  t.same(directives.get('default-src'), ["'self'"])
  t.same(directives.get('object-src'), ["'none'"])
  t.notOk(directives.has('upgrade-insecure-requests'), 'the page works over plain HTTP')
  t.notMatch(policy, /https:|\*/, 'nothing from elsewhere')
})

t.test('the API keeps the strict policy', async (t) => {
  const token = await server.inject({ method: 'GET', url: `${PROJECTS}/get?id=x` })
  const probe = await server.inject({ method: 'GET', url: '/health/live' })
  const unknown = await server.inject({ method: 'GET', url: '/api/external/v1/nothing' })
  for (const [name, res] of Object.entries({ project: token, probe, unknown, document: fetched })) {
    t.equal(res.headers['content-security-policy'], STRICT_CSP, `${name}: ${res.statusCode}`)
  }
})

t.test('the committed openapi.json is the live document', async (t) => {
  const committed = await readFile(DOCUMENT_FILE, 'utf8')
  t.equal(committed, JSON.stringify(doc, null, 2) + '\n', 'openapi.json is out of date: run `npm run openapi`')
})
