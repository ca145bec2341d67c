// POST /mcp as HTTP: tokens are judged before any message is read (401 naming the
// protected-resource metadata), the metadata document itself, malformed JSON-RPC
// answered in JSON-RPC with a 4xx, GET and DELETE refused with Allow, read-only
// tokens admitted, and a tool call counted once by the rate limit.
import t from '../tap.js'
import { loadDemo } from '../../src/demo/load.js'
import { createToken, revokeToken } from '../../src/auth/tokens.js'
import { build } from '../helper.js'
import { listen } from '../launch.js'
import { call, mcpClient } from './support.js'

const { app, db } = await build(t)
const demo = await loadDemo(db)
const { url } = await listen(app)
const alice = demo.tokens['alice@acme.test']!
const METADATA = `${url}/.well-known/oauth-protected-resource`

const ACCEPT = 'application/json, text/event-stream'
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } }

async function post (body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/mcp`, { method: 'POST', body, headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers } })
  return { status: response.status, headers: response.headers, body: await response.json() as Record<string, unknown> }
}

t.test('the protected-resource metadata names /mcp', async (t) => {
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    const response = await fetch(`${url}${path}`)
    t.equal(response.status, 200)
    t.match(response.headers.get('content-type'), /^application\/json/)
    t.same(await response.json(), {
      resource: `${url}/mcp`,
      resource_name: 'Projects API (MCP)',
      bearer_methods_supported: ['header'],
      resource_documentation: `${url}/docs`
    })
  }
})

t.test('a missing, invalid, expired or revoked token is 401 before the message is read', async (t) => {
  const expired = await createToken(db, { email: 'alice@acme.test', expiresInDays: 1 })
  await db.updateTable('api_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', expired.id).execute()
  const revoked = await createToken(db, { email: 'alice@acme.test' })
  await revokeToken(db, revoked.id)
  const cases: Array<[string, Record<string, string>, string]> = [
    ['missing', {}, `Bearer resource_metadata="${METADATA}", realm="api"`],
    ['another scheme', { authorization: `Basic ${alice.write}` }, `Bearer resource_metadata="${METADATA}", realm="api"`],
    ['unknown', { authorization: 'Bearer pat_nope' }, `Bearer resource_metadata="${METADATA}", realm="api", error="invalid_token"`],
    ['expired', { authorization: `Bearer ${expired.token}` }, `Bearer resource_metadata="${METADATA}", realm="api", error="invalid_token"`],
    ['revoked', { authorization: `Bearer ${revoked.token}` }, `Bearer resource_metadata="${METADATA}", realm="api", error="invalid_token"`]
  ]
  for (const [what, headers, challenge] of cases) {
    // A body that is not even JSON: authentication comes first.
    const answer = await post('{not json', headers)
    t.equal(answer.status, 401, what)
    t.equal(answer.headers.get('www-authenticate'), challenge)
    t.match(answer.body, { statusCode: 401, error: 'Unauthorized', code: 'unauthenticated' })
  }
  await t.rejects(mcpClient(t, url, 'pat_nope'), 'the SDK client cannot connect')
})

t.test('malformed JSON-RPC is a JSON-RPC error with a 4xx', async (t) => {
  const auth = { authorization: `Bearer ${alice.write}` }
  const syntax = await post('{"jsonrpc": "2.0",', auth)
  t.equal(syntax.status, 400)
  t.match(syntax.body, { jsonrpc: '2.0', id: null, error: { code: -32700, message: /body is not valid JSON/ } })
  const notRpc = await post('{"hello": "world"}', auth)
  t.equal(notRpc.status, 400)
  t.match(notRpc.body, { jsonrpc: '2.0', error: { code: -32700 } })
  const empty = await post('', auth)
  t.equal(empty.status, 400)
  t.match(empty.body, { jsonrpc: '2.0', error: { code: -32700 } })
  const text = await post('{}', { ...auth, 'content-type': 'text/plain' })
  t.equal(text.status, 415)
  t.match(text.body, { jsonrpc: '2.0', error: { code: -32600 } })
  const accept = await post(JSON.stringify(INITIALIZE), { ...auth, accept: 'text/html' })
  t.equal(accept.status, 406)
  t.match(accept.body, { jsonrpc: '2.0', error: { code: -32000 } })
  const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'no/such' }), auth)
  t.equal(unknown.status, 200)
  t.match(unknown.body, { jsonrpc: '2.0', id: 7, error: { code: -32601 } })
})

t.test('initialize answers in JSON, with the request id and the security headers', async (t) => {
  const answer = await post(JSON.stringify(INITIALIZE), { authorization: `Bearer ${alice.read_only}`, 'x-request-id': 'mcp-init-1' })
  t.equal(answer.status, 200, 'a read-only token is admitted')
  t.equal(answer.headers.get('x-request-id'), 'mcp-init-1')
  t.equal(answer.headers.get('x-content-type-options'), 'nosniff')
  t.equal(answer.headers.get('mcp-session-id'), null, 'stateless: no session')
  t.match(answer.body, { jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'projects-api' }, capabilities: { tools: {} } } })
})

t.test('GET and DELETE are 405 with Allow: POST, whatever the token', async (t) => {
  for (const method of ['GET', 'DELETE']) {
    const response = await fetch(`${url}/mcp`, { method, headers: { accept: 'text/event-stream', authorization: `Bearer ${alice.write}` } })
    t.equal(response.status, 405, method)
    t.equal(response.headers.get('allow'), 'POST')
    t.match(await response.json(), { statusCode: 405, code: 'method_not_allowed' })
  }
})

t.test('a tool call is counted once by the rate limit', async (t) => {
  const limited = await build(t, { env: { RATE_LIMIT_MAX: '4' } })
  const limitedDemo = await loadDemo(limited.db)
  const { url: limitedUrl } = await listen(limited.app)
  const token = limitedDemo.tokens['erin@acme.test']!.write
  // initialize and notifications/initialized: 2 requests; each tool call 1 more.
  const client = await mcpClient(t, limitedUrl, token)
  t.notOk((await call(client, 'get_me')).isError, 'third request')
  const fourth = await call(client, 'update_project_name', { project_id: limitedDemo.projects['Internal Tools']!.id, name: 'Counted once' })
  t.notOk(fourth.isError, 'fourth request, its operation not counted again')
  const fifth = await fetch(`${limitedUrl}/api/external/v1/people/get_me`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(fifth.status, 429, 'the fifth request is over the limit')
})
