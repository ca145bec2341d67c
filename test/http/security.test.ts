// Transport basics on every answer: helmet's headers, Cache-Control: no-store,
// the request id handed back (a sane caller's one kept, anything else replaced),
// and tokens kept out of the logs even when a client puts one in the URL.
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import helmet from 'helmet'
import t from '../tap.js'
import { build, client, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'

const { app: server, db } = await build(t)
const company = await createCompany(db)
const person = await createPerson(db, company.id)
const space = await createSpace(db, company.id)
const project = await createProject(db, space, { access: { company: 70 } })
const { token } = await tokenFor(db, person.email)
const api = client(server, token)

t.test('security headers and no-store on successes and errors alike', async (t) => {
  const answers = [
    await api.get(project.publicId),
    await api.updateName({ project_id: project.publicId, name: 'Renamed' }),
    await client(server).get(project.publicId),
    await api.updateName({ project_id: project.publicId }),
    await server.inject({ method: 'GET', url: '/nowhere' })
  ]
  t.same(answers.map((r) => r.statusCode), [200, 200, 401, 400, 404])
  for (const res of answers) {
    t.equal(res.headers['cache-control'], 'no-store')
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.equal(res.headers['x-frame-options'], 'SAMEORIGIN')
    t.match(res.headers['content-security-policy'], /default-src 'self'/)
    t.equal(res.headers['cross-origin-resource-policy'], 'same-origin')
    t.equal(res.headers['x-powered-by'], undefined)
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'a request id is generated')
  }
})

t.test('every answer carries exactly the headers helmet\'s defaults set on a Node.js answer', async (t) => {
  // helmet's middleware on a real ServerResponse, as @fastify/helmet would run it for each request.
  const response = new ServerResponse(new IncomingMessage(new Socket()))
  response.setHeader('x-powered-by', 'something')
  let next = false
  helmet()(response.req, response, () => { next = true })
  t.ok(next, 'the middleware completed')
  const expected = Object.fromEntries(Object.entries(response.getHeaders()).map(([name, value]) => [name, String(value)]))
  t.ok(Object.keys(expected).length >= 10, `helmet set ${Object.keys(expected).join(', ')}`)
  t.notOk('x-powered-by' in expected, 'and took X-Powered-By away')

  const ordinary = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'cache-control', 'x-request-id', 'etag', 'allow'])
  const answers = [
    await api.get(project.publicId),
    await api.updateName({ project_id: project.publicId, name: 'Renamed again' }),
    await client(server).get(project.publicId),
    await api.updateName({ project_id: 7 }),
    await server.inject({ method: 'GET', url: '/nowhere' }),
    await server.inject({ method: 'GET', url: '/health/live' }),
    await server.inject({ method: 'DELETE', url: '/api/external/v1/projects/get' })
  ]
  t.same(answers.map((r) => r.statusCode), [200, 200, 401, 400, 404, 200, 405])
  for (const res of answers) {
    const security = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !ordinary.has(name) && name !== 'www-authenticate'))
    t.strictSame(security, expected, `${res.statusCode}: helmet's headers, no more, no fewer`)
  }
})

t.test('a plain X-Request-Id is kept and returned; anything else is replaced', async (t) => {
  const kept = await server.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'lb-7f3a:42' } })
  t.equal(kept.headers['x-request-id'], 'lb-7f3a:42')
  for (const bad of ['has space', 'x'.repeat(129), 'new\u0085line', '']) {
    const res = await server.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': bad } })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, `replaced: ${JSON.stringify(bad.slice(0, 20))}`)
  }
})

t.test('405 with Allow and 415 for a body that is not JSON', async (t) => {
  const wrong = await server.inject({ method: 'GET', url: '/api/external/v1/projects/update_name', headers: { authorization: `Bearer ${token}` } })
  t.equal(wrong.statusCode, 405)
  t.equal(wrong.headers.allow, 'POST')
  t.equal(wrong.json().code, 'method_not_allowed')
  const form = await server.inject({
    method: 'POST',
    url: '/api/external/v1/projects/update_name',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'project_id=x&name=y'
  })
  t.equal(form.statusCode, 415)
  t.equal(form.json().code, 'unsupported_media_type')
})

t.test('every log line carries the request id and no token, even one put in the URL', async (t) => {
  const lines: string[] = []
  const { app: logged } = await build(t, { db, env: { LOG_LEVEL: 'trace' }, logStream: { write: (line: string) => { lines.push(line) } } })

  const requests = [
    { method: 'GET' as const, url: `/api/external/v1/projects/get?id=${project.publicId}`, headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-1' } },
    { method: 'GET' as const, url: `/api/external/v1/projects/get?id=${project.publicId}&access_token=${token}`, headers: { 'x-request-id': 'trace-2' } },
    { method: 'POST' as const, url: '/api/external/v1/projects/update_name', headers: { authorization: `Bearer ${token}x`, 'x-request-id': 'trace-3' }, payload: { project_id: project.publicId, name: 'Logged' } },
    { method: 'GET' as const, url: `/nowhere/${token}`, headers: { authorization: `bearer ${token}`, 'x-request-id': 'trace-4' } }
  ]
  for (const request of requests) await logged.inject(request)

  const secret = token.slice('pat_'.length)
  t.ok(lines.length >= requests.length * 2, `the requests were logged (${lines.length} lines)`)
  for (const line of lines) {
    t.notOk(line.includes(secret), `no token in: ${line.slice(0, 120)}`)
    const entry = JSON.parse(line)
    if (entry.msg === 'incoming request' || entry.msg === 'request completed') t.match(entry.reqId, /^trace-\d$/)
  }
  const incoming = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'incoming request')
  t.same(incoming.map((e) => e.reqId), ['trace-1', 'trace-2', 'trace-3', 'trace-4'])
  t.match(incoming[1].req.url, /access_token=pat_\[redacted\]/)
})
