// Requests that could be read two ways are refused, not guessed, and write nothing:
// a body in a content coding (415, never decoded, never taken as it is), a key
// repeated within a JSON object (400 pointing at it), two Authorization headers
// (400 with error="invalid_request", whatever the tokens), two Content-Type headers
// (415), two Host headers (400).
import { gzipSync } from 'node:zlib'
import type { Test } from 'tap'
import t from '../tap.js'
import { build, createCompany, createPerson, createProject, createSpace, projectActivities, tokenFor } from '../helper.js'
import { sendRaw } from '../http.js'
import { listen } from '../launch.js'

const RENAME = '/api/external/v1/projects/update_name'
const DESCRIBE = '/api/external/v1/projects/update_description'
const GET = '/api/external/v1/projects/get'

const { app, db } = await build(t)
const company = await createCompany(db)
const person = await createPerson(db, company.id)
const space = await createSpace(db, company.id)
const first = await createProject(db, space, { access: { company: 70 } })
const second = await createProject(db, space, { access: { company: 70 } })
const { token } = await tokenFor(db, person.email)
const auth = { authorization: `Bearer ${token}` }
const { port } = await listen(app)

/** Neither project's name nor description changed, and no activity was recorded. */
async function nothingWritten (t: Test) {
  for (const project of [first, second]) {
    const row = await db.selectFrom('projects').select(['name', 'description']).where('id', '=', project.id).executeTakeFirstOrThrow()
    t.same(row, { name: project.name, description: null }, `${project.name} unchanged`)
    t.same(await projectActivities(db, project.id), [], 'no activity')
  }
}

t.test('a body with a Content-Encoding other than identity is 415, neither decoded nor taken as it is', async (t) => {
  const body = JSON.stringify({ project_id: first.publicId, name: 'Encoded' })
  const cases: Array<[string, string | Buffer]> = [
    ['gzip', body], // labelled gzip, sent plain: once taken as it was
    ['gzip', gzipSync(body)],
    ['GZIP', body],
    ['deflate', body],
    ['br', body],
    ['x-custom', body],
    ['identity, gzip', body],
    ['gzip, identity', body]
  ]
  for (const [coding, payload] of cases) {
    const res = await app.inject({ method: 'POST', url: RENAME, headers: { ...auth, 'content-type': 'application/json', 'content-encoding': coding }, payload })
    t.equal(res.statusCode, 415, `Content-Encoding: ${coding}`)
    t.same(res.json(), {
      statusCode: 415,
      error: 'Unsupported Media Type',
      code: 'unsupported_media_type',
      message: `Content-Encoding ${coding.split(',').map((c) => c.trim()).find((c) => c.toLowerCase() !== 'identity')} is not supported; send the body uncompressed`
    })
  }
  await nothingWritten(t)

  // Authentication still comes first.
  const anonymous = await app.inject({ method: 'POST', url: RENAME, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: body })
  t.equal(anonymous.statusCode, 401)

  // Over a real socket too.
  const raw = await sendRaw(port, [`POST ${RENAME} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`])
  t.equal(raw.status, 415)
  t.equal(JSON.parse(raw.body).code, 'unsupported_media_type')
  await nothingWritten(t)
})

t.test('identity (in any case), or no coding, is the body as it is', async (t) => {
  for (const [i, coding] of ['identity', 'Identity', ' identity ', 'identity, identity'].entries()) {
    const name = `Plain ${i}`
    const res = await app.inject({ method: 'POST', url: RENAME, headers: { ...auth, 'content-type': 'application/json', 'content-encoding': coding }, payload: { project_id: first.publicId, name } })
    t.equal(res.statusCode, 200, `Content-Encoding: ${coding}`)
    t.equal(res.json().project.name, name)
  }
  // A GET has no body to decode: a stray Content-Encoding there changes nothing.
  const read = await app.inject({ method: 'GET', url: GET, query: { id: first.publicId }, headers: { ...auth, 'content-encoding': 'gzip' } })
  t.equal(read.statusCode, 200)
  await db.updateTable('projects').set({ name: first.name }).where('id', '=', first.id).execute()
  await db.deleteFrom('activities').execute()
})

t.test('a key repeated within a JSON object is 400 naming it, however it is spelled; nothing written', async (t) => {
  const cases: Array<[string, string, string]> = [
    // project_id twice: a proxy reading the first and this service the last would disagree on the project.
    [RENAME, `{"project_id":"${first.publicId}","name":"Twice","project_id":"${second.publicId}"}`, '/project_id'],
    [RENAME, `{"project_id":"${first.publicId}","name":"One","name":"Two"}`, '/name'],
    [RENAME, `{"project_id":"${first.publicId}","name":"One","\\u006eame":"Two"}`, '/name'],
    [RENAME, `{"project_id":"${first.publicId}","name":"Same","name":"Same"}`, '/name'],
    [DESCRIBE, `{"project_id":"${first.publicId}","description":"{}","description":"[]"}`, '/description'],
    [RENAME, `{"project_id":"${first.publicId}","name":"X","extra":{"a":1,"b":[{"c":1},{"c":2,"c":3}]}}`, '/extra/b/1/c'],
    [RENAME, `{"project_id":"${first.publicId}","name":"X","a/b~c":1,"a/b~c":2}`, '/a~1b~0c']
  ]
  for (const [url, payload, path] of cases) {
    const res = await app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload })
    t.equal(res.statusCode, 400, payload)
    const field = path.slice(1).replaceAll('/', '.')
    t.same(res.json(), {
      statusCode: 400,
      error: 'Bad Request',
      code: 'invalid_input',
      message: `${field} must appear only once in its object`,
      details: [{ path, message: 'must appear only once in its object' }]
    })
  }
  await nothingWritten(t)

  // Equal keys in different objects are not repeats; a description is text, stored as given.
  const description = '{"type":"doc","attrs":{"a":1,"a":2}}'
  const res = await app.inject({ method: 'POST', url: DESCRIBE, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ project_id: first.publicId, description }) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().project.description, description)
  await db.updateTable('projects').set({ description: null }).where('id', '=', first.id).execute()
  await db.deleteFrom('activities').execute()
})

t.test('two Authorization headers are 400 with error="invalid_request", whatever the tokens', async (t) => {
  const pairs = [
    [`Bearer ${token}`, `Bearer ${token}`],
    [`Bearer ${token}`, 'Bearer pat_unknown'],
    ['Bearer pat_unknown', `Bearer ${token}`],
    [`Bearer ${token}`, 'Basic dXNlcjpwYXNz'],
    ['', `Bearer ${token}`]
  ]
  const expected = {
    statusCode: 400,
    error: 'Bad Request',
    code: 'invalid_input',
    message: 'send one Authorization header'
  }
  for (const pair of pairs) {
    for (const request of [
      { method: 'POST' as const, url: RENAME, payload: { project_id: first.publicId, name: 'Two credentials' } },
      { method: 'GET' as const, url: `${GET}?id=${first.publicId}` }
    ]) {
      // Node.js's header types say one Authorization; light-my-request sends each value of an array.
      const headers: Record<string, string[]> = { authorization: pair }
      const res = await app.inject({ ...request, headers })
      t.equal(res.statusCode, 400, `${request.method} with ${pair.map((p) => p.slice(0, 12)).join(' + ')}`)
      t.same(res.json(), expected)
      t.equal(res.headers['www-authenticate'], 'Bearer realm="api", error="invalid_request"')
    }
  }
  await nothingWritten(t)

  // Over a real socket, where Node.js itself would keep the first header.
  const raw = await sendRaw(port, [`GET ${GET}?id=${first.publicId} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${token}\r\nAuthorization: Bearer ${token}\r\nconnection: close\r\n\r\n`])
  t.equal(raw.status, 400)
  t.same(JSON.parse(raw.body), expected)
  t.equal(raw.headers['www-authenticate'], 'Bearer realm="api", error="invalid_request"')

  // Routing still comes first.
  const twice: Record<string, string[]> = { authorization: [`Bearer ${token}`, `Bearer ${token}`] }
  const unknown = await app.inject({ method: 'GET', url: '/api/external/v1/nowhere', headers: twice })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().code, 'route_not_found')
})

t.test('two Content-Type headers are 415; two Host headers are 400', async (t) => {
  const body = JSON.stringify({ project_id: first.publicId, name: 'Two types' })
  const types = await sendRaw(port, [`POST ${RENAME} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`])
  t.equal(types.status, 415)
  t.same(JSON.parse(types.body), { statusCode: 415, error: 'Unsupported Media Type', code: 'unsupported_media_type', message: 'send one Content-Type header' })

  const hosts = await sendRaw(port, [`GET ${GET}?id=${first.publicId} HTTP/1.1\r\nhost: localhost\r\nhost: example.com\r\nauthorization: Bearer ${token}\r\n\r\n`])
  t.equal(hosts.status, 400)
  t.same(JSON.parse(hosts.body), { statusCode: 400, error: 'Bad Request', code: 'invalid_input', message: 'a request must have one Host header' })
  t.equal(hosts.headers.connection, 'close')
  t.equal(hosts.headers['cache-control'], 'no-store')
  await nothingWritten(t)
})
