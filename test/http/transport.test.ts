// The HTTP layer under the routes, over real sockets on 127.0.0.1: slow and stalled
// clients get 408 within HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS and their
// connection closed; what Node.js's parser and Fastify's router refuse before any
// route runs (malformed HTTP, headers too large, a malformed path, an Expect other
// than 100-continue, no Host, a CONNECT) is answered in the envelope with the headers of
// every answer; a client that goes away mid-body is logged as such, at info. No
// case writes anything.
import { STATUS_CODES } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import pg from 'pg'
import type { Test } from 'tap'
import t from '../tap.js'
import { SECURITY_HEADERS } from '../../src/http/security.js'
import { sendRaw, type RawAnswer } from '../http.js'
import { build, seedWriters, tokenFor, waitFor } from '../helper.js'
import { listen } from '../launch.js'

const HEADERS_TIMEOUT_MS = 500
const REQUEST_TIMEOUT_MS = 1500
const UPDATE_NAME = '/api/external/v1/projects/update_name'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const lines: string[] = []
const { app: server, db, url } = await build(t, {
  env: { LOG_LEVEL: 'info', HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) },
  logStream: { write: (line: string) => { lines.push(line) } }
})
const { port } = await listen(server)
const { projects: [project], writers: [writer] } = await seedWriters(db, 1)
const writerEmail = (await db.selectFrom('people').select('email').where('id', '=', writer!.personId).executeTakeFirstOrThrow()).email
const readOnlyToken = (await tokenFor(db, writerEmail, { readOnly: true })).token

const logged = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>)

/** Everything the API may write: every project row and every activity. */
async function written (): Promise<string> {
  const result = await sql<{ state: string }>`
    SELECT (SELECT md5(coalesce(string_agg(to_jsonb(p)::text, ',' ORDER BY p.id), '')) FROM projects p) ||
           (SELECT count(*) FROM activities)::text AS state`.execute(db)
  return result.rows[0]!.state
}

/** A rename of the fixture project, as HTTP/1.1 text: its head, and its body. */
function rename (name: string, headers: Record<string, string> = {}): { head: string, body: string } {
  const body = JSON.stringify({ project_id: project!.publicId, name })
  const all = { host: 'localhost', authorization: `Bearer ${writer!.token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers }
  return { head: `POST ${UPDATE_NAME} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, body }
}

/** The envelope with these status and code, and the headers of every answer, on a connection the server closes. */
function assertAnswer (t: Test, res: RawAnswer, status: number, code: string, options: { closed?: boolean } = {}): Record<string, unknown> {
  t.equal(res.status, status, `status ${status}: ${res.status || res.error} ${res.body}`)
  let body: Record<string, unknown> = {}
  try { body = JSON.parse(res.body) } catch { t.fail(`not JSON: ${res.body}`) }
  t.strictSame(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'], 'the envelope, no details')
  t.match(body, { statusCode: status, error: STATUS_CODES[status], code, message: String })
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.headers['x-request-id'], UUID, 'a request id')
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) t.equal(res.headers[name], value, name)
  if (options.closed !== false) {
    t.equal(res.headers.connection, 'close', 'the answer says the connection closes')
    t.ok(res.closed, 'and the server closes it')
  }
  return body
}

t.test('the answers before routing carry exactly the security headers of a routed answer', async (t) => {
  const routed = await server.inject({ method: 'GET', url: '/health/live' })
  const ordinary = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'cache-control', 'x-request-id'])
  const helmet = Object.fromEntries(Object.entries(routed.headers).filter(([name]) => !ordinary.has(name)))
  t.strictSame(helmet, SECURITY_HEADERS)
})

t.test('a body that never comes is 408 within REQUEST_TIMEOUT_MS, and nothing is written', async (t) => {
  const before = await written()
  const { head, body } = rename('Never Arrives', { 'content-length': '1000' })
  const res = await sendRaw(port, [head + body])
  const answer = assertAnswer(t, res, 408, 'request_timeout')
  t.equal(answer.message, 'the request did not arrive whole within 1500 ms')
  // The 408 is the server's own timeout (the client never gives up): the time is shown, not bounded.
  t.comment(`answered and closed after ${res.ms} ms`)
  t.equal(await written(), before, 'nothing written')

  // The 408 is logged as the request's (same id), at info, and nothing at error.
  const id = res.headers['x-request-id']
  t.ok(await waitFor(() => logged().some((l) => l.reqId === id && l.statusCode === 408 && l.level === 30), 30_000), 'the 408 is logged at info under the request id')
  t.ok(logged().some((l) => l.reqId === id && (l.req as { url?: string } | undefined)?.url === UPDATE_NAME), 'the id is the one the request was logged with')
  t.same(logged().filter((l) => l.reqId === id && Number(l.level) >= 40), [], 'nothing logged as a failure')
})

t.test('a body refused before it is read (401) gets that one answer, and its connection is closed with it', async (t) => {
  const before = await written()
  const { head } = rename('Unauthenticated Stall', { authorization: 'Bearer pat_unknown', 'content-length': '1000' })
  const res = await sendRaw(port, [head + '{"project_id":'])
  t.equal(res.status, 401, res.body)
  t.equal(JSON.parse(res.body).code, 'unauthenticated')
  t.equal(res.headers.connection, 'close', 'the answer closes the connection: the body is not waited for')
  t.equal(res.raw.match(/^HTTP\/1\.1 /gm)?.length, 1, 'no 408 after it')
  t.ok(res.closed, 'closed by the server')
  t.equal(await written(), before, 'nothing written')
})

t.test('Expect: 100-continue is answered only once the token is good: a refused client is never asked for its body', async (t) => {
  const before = await written()
  const { head } = rename('Unauthenticated Continue', { authorization: 'Bearer pat_unknown', expect: '100-continue' })
  const refused = await sendRaw(port, [head])
  t.match(refused.raw, /^HTTP\/1\.1 401 /, 'the first thing sent is the 401, not 100 Continue')
  t.notMatch(refused.raw, /100 Continue/)
  t.equal(refused.headers.connection, 'close')
  t.ok(refused.closed, 'and the connection closed')
  const readOnly = await sendRaw(port, [rename('Read-only Continue', { authorization: `Bearer ${readOnlyToken}`, expect: '100-continue' }).head])
  t.match(readOnly.raw, /^HTTP\/1\.1 403 /, 'a read-only token on a mutation: 403 first')
  t.equal(await written(), before, 'nothing written')

  // A good token is asked for its body, which is then read.
  const { head: good, body } = rename('Continued After Auth', { expect: '100-continue' })
  let asked = false
  const served = await sendRaw(port, [good, body], { gapMs: 100, untilClosed: false, onData: (raw) => { asked ||= /^HTTP\/1\.1 100 Continue/.test(raw) } })
  t.ok(asked, '100 Continue once authenticated')
  t.equal(served.status, 200, served.body)
})

t.test('a body trickled a byte at a time is cut off at REQUEST_TIMEOUT_MS, not accepted late', async (t) => {
  const before = await written()
  const { head, body } = rename('Trickled In Too Slowly')
  const res = await sendRaw(port, [head, ...body], { gapMs: 50 }) // ~3.5 s for the whole body
  assertAnswer(t, res, 408, 'request_timeout')
  t.comment(`cut off after ${res.ms} ms`)
  t.equal(await written(), before, 'nothing written')
})

t.test('headers that never finish, and a connection that sends nothing, are 408 within HEADERS_TIMEOUT_MS', async (t) => {
  const partial = await sendRaw(port, [`GET /health/live HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${writer!.token}\r\n`])
  const answer = assertAnswer(t, partial, 408, 'request_timeout')
  t.equal(answer.message, 'the request headers did not arrive within 500 ms')
  t.comment(`partial headers answered after ${partial.ms} ms`)

  const silent = await sendRaw(port, [])
  assertAnswer(t, silent, 408, 'request_timeout')
  t.comment(`a silent connection closed after ${silent.ms} ms`)

  const trickled = await sendRaw(port, [...'GET /health/live HTTP/1.1\r\nhost: localhost\r\n\r\n'], { gapMs: 50 })
  assertAnswer(t, trickled, 408, 'request_timeout')
  t.comment(`trickled headers cut off after ${trickled.ms} ms`)
})

t.test('a request within the bounds is served, on a connection kept alive', async (t) => {
  const { head, body } = rename('Sent In Time')
  const res = await sendRaw(port, [head, body.slice(0, 10), body.slice(10)], { gapMs: 200, untilClosed: false })
  t.equal(res.status, 200, res.body)
  t.equal(JSON.parse(res.body).project?.name, 'Sent In Time')
  t.notOk(res.closed, 'the connection stays open')
})

t.test('a request received whole is not cut off by REQUEST_TIMEOUT_MS, however long it then takes', {
  skip: url === undefined ? 'needs PostgreSQL: a row lock held from a second connection keeps the request waiting' : false
}, async (t) => {
  const locker = new pg.Client({ connectionString: url })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('BEGIN')
  await locker.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [project!.id])
  const { head, body } = rename('Waited Past The Request Timeout')
  const pending = sendRaw(port, [head + body], { untilClosed: false })
  await sleep(REQUEST_TIMEOUT_MS + 1000)
  await locker.query('ROLLBACK')
  const res = await pending
  t.equal(res.status, 200, res.body)
  t.equal(JSON.parse(res.body).project?.name, 'Waited Past The Request Timeout')
})

t.test('a client that goes away mid-body is a client abort, logged at info; nothing is written', async (t) => {
  for (const reset of [false, true]) {
    const before = await written()
    const mark = lines.length
    const { head, body } = rename(reset ? 'Reset Mid Body' : 'Closed Mid Body')
    const res = await sendRaw(port, [head + body.slice(0, 10)], { abortAfterMs: 200, reset })
    t.equal(res.status, 0, 'no answer to a client that is gone')
    const mine = () => logged().slice(mark)
    t.ok(await waitFor(() => mine().some((l) => l.code === 'client_aborted'), 30_000), `logged as a client abort (${reset ? 'RST' : 'FIN'})`)
    const abort = mine().find((l) => l.code === 'client_aborted')!
    t.equal(abort.level, 30, 'at info')
    t.same(mine().filter((l) => Number(l.level) >= 40).map((l) => l.msg), [], 'nothing at warn or error')
    t.notOk(mine().some((l) => l.statusCode === 503 || /unavailable|database/i.test(String(l.msg))), 'not taken for a database outage')
    t.equal(await written(), before, 'nothing written')
  }
})

t.test('malformed HTTP is 400 invalid_input in the envelope, and the connection closed', async (t) => {
  const before = await written()
  const { head, body } = rename('Malformed')
  const malformed: Record<string, string> = {
    'a control byte in a header value': head.replace('host: localhost', 'host: local\x01host') + body,
    'a space in a header name': head.replace('host: localhost', 'host: localhost\r\nx bad: 1') + body,
    'an obsolete folded header': head.replace('host: localhost', 'host: localhost\r\nx-folded: a\r\n b') + body,
    'a Content-Length that is not a number': head.replace(/content-length: \d+/, 'content-length: 4x') + body,
    'a negative Content-Length': head.replace(/content-length: \d+/, 'content-length: -1') + body,
    'a Content-Length list': head.replace(/content-length: (\d+)/, 'content-length: $1, $1') + body,
    'two Content-Length headers, equal': head.replace(/content-length: (\d+)/, 'content-length: $1\r\ncontent-length: $1') + body,
    'two Content-Length headers, different': head.replace(/content-length: (\d+)/, 'content-length: $1\r\ncontent-length: 5') + body,
    'Content-Length with Transfer-Encoding': head.replace('content-type', 'transfer-encoding: chunked\r\ncontent-type') + `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    'a Transfer-Encoding other than chunked': head.replace(/content-length: \d+/, 'transfer-encoding: gzip') + body,
    'chunked twice': head.replace(/content-length: \d+/, 'transfer-encoding: chunked, chunked') + `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    'a malformed chunk size': head.replace(/content-length: \d+/, 'transfer-encoding: chunked') + `zz\r\n${body}\r\n0\r\n\r\n`,
    'a method with a bad character': 'GE@T /health/live HTTP/1.1\r\nhost: localhost\r\n\r\n',
    'an unknown HTTP version': 'GET /health/live HTTP/3.7\r\nhost: localhost\r\n\r\n',
    'bare LF line ends': 'GET /health/live HTTP/1.1\nhost: localhost\n\n',
    'a space in the target': 'GET /health /live HTTP/1.1\r\nhost: localhost\r\n\r\n'
  }
  for (const [what, request] of Object.entries(malformed)) {
    await t.test(what, async (t) => {
      const res = await sendRaw(port, [request])
      const answer = assertAnswer(t, res, 400, 'invalid_input')
      t.match(answer.message, /^malformed HTTP request: /)
      t.notOk(String(answer.message).includes(writer!.token), 'no token echoed')
    })
  }
  t.equal(await written(), before, 'nothing written')
})

t.test('a malformed percent escape in the path is 400 in the envelope, the path not echoed', async (t) => {
  const before = await written()
  for (const path of ['/%zz', `${UPDATE_NAME}%`, '/api/external/v1/projects/%E0%A4%A', `/${writer!.token}%G0`]) {
    const { head, body } = rename('Bad Path')
    const res = await sendRaw(port, [head.replace(UPDATE_NAME, path) + body], { untilClosed: false })
    const answer = assertAnswer(t, res, 400, 'invalid_input', { closed: false })
    t.equal(answer.message, 'the path is not a valid URL: it has a malformed percent escape')
    t.notOk(res.body.includes('%'), `${path} not echoed`)
  }
  t.equal(await written(), before, 'nothing written')
  t.notOk(lines.some((line) => line.includes(writer!.token.slice(4))), 'no token in the logs')
})

t.test('headers larger than Node.js accepts are 431 headers_too_large', async (t) => {
  const before = await written()
  const { head, body } = rename('Huge Headers', { 'x-padding': 'a'.repeat(20 * 1024) })
  const res = await sendRaw(port, [head + body])
  const answer = assertAnswer(t, res, 431, 'headers_too_large')
  t.equal(answer.message, 'the request line and headers are larger than 16 KiB')
  const manyHeaders = rename('Many Headers', Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`x-h${i}`, 'v'.repeat(20)])))
  assertAnswer(t, await sendRaw(port, [manyHeaders.head + manyHeaders.body]), 431, 'headers_too_large')
  t.equal(await written(), before, 'nothing written')
})

t.test('an Expect other than 100-continue is 417 expectation_failed; 100-continue is served', async (t) => {
  const before = await written()
  for (const expect of ['200-ok', 'foo', '100-continue-please, x']) {
    const { head, body } = rename('Expected Too Much', { expect })
    const answer = assertAnswer(t, await sendRaw(port, [head + body]), 417, 'expectation_failed')
    t.equal(answer.message, 'Expect may only be 100-continue')
  }
  // On a route that does not exist too: the expectation is judged first.
  assertAnswer(t, await sendRaw(port, ['GET /nowhere HTTP/1.1\r\nhost: localhost\r\nexpect: foo\r\n\r\n']), 417, 'expectation_failed')
  t.equal(await written(), before, 'nothing written')

  const { head, body } = rename('Continued', { expect: '100-continue' })
  const res = await sendRaw(port, [head, body], { gapMs: 100, untilClosed: false })
  t.equal(res.status, 200, res.body)
  t.equal(JSON.parse(res.body).project?.name, 'Continued')
})

t.test('an HTTP/1.1 request without Host is 400 in the envelope; HTTP/1.0 needs none', async (t) => {
  const before = await written()
  const { head, body } = rename('No Host')
  const answer = assertAnswer(t, await sendRaw(port, [head.replace('host: localhost\r\n', '') + body]), 400, 'invalid_input')
  t.equal(answer.message, 'an HTTP/1.1 request must have a Host header')
  t.equal(await written(), before, 'nothing written')
  const old = await sendRaw(port, ['GET /health/live HTTP/1.0\r\n\r\n'])
  t.equal(old.status, 200, old.body)
})

t.test('CONNECT is 405 method_not_allowed in the envelope, with Allow, whatever its target', async (t) => {
  const before = await written()
  const cases: Array<[string, string, string]> = [
    ['an authority, as a proxy client sends it', 'example.com:443', ''],
    ['a known path', '/health/live', 'GET, HEAD'],
    ['a mutation\'s path', UPDATE_NAME, 'POST'],
    ['an unknown path', '/nowhere', '']
  ]
  for (const [what, target, allow] of cases) {
    await t.test(what, async (t) => {
      // A tunnel's first bytes after the request are never read as a request.
      const res = await sendRaw(port, [`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\nGET /health/live HTTP/1.1\r\nhost: localhost\r\n\r\n`])
      const answer = assertAnswer(t, res, 405, 'method_not_allowed')
      t.equal(res.headers.allow, allow, 'Allow names what the path takes')
      t.match(answer.message, /^CONNECT is not allowed/)
      t.equal(res.raw.match(/HTTP\/1\.1 /g)?.length, 1, 'one answer, nothing for the bytes after it')
    })
  }
  // A client that resets its connection right after asking takes nothing down.
  await sendRaw(port, ['CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n'], { abortAfterMs: 20, reset: true })
  t.equal((await sendRaw(port, ['GET /health/live HTTP/1.1\r\nhost: localhost\r\n\r\n'], { untilClosed: false })).status, 200, 'still serving')
  t.equal(await written(), before, 'nothing written')
})

t.test('no malformed or slow request was logged as a failure', async (t) => {
  t.same(logged().filter((l) => Number(l.level) >= 50).map((l) => l.msg), [])
})
