// The API's metrics: requests counted and timed by route template, method and
// status (never the URL sent: no id, token or e-mail reaches a label), the
// rejections of authentication and the rate limit, MCP tool calls by tool and
// outcome; the output valid in Prometheus's text format; /metrics absent from
// the API's own port.
import t from '../tap.js'
import { shortId } from '../../src/ids.js'
import { build, createCompany, createPerson, createProject, createSpace, addContributor, tokenFor } from '../helper.js'
import { call, mcpClient } from '../mcp/support.js'
import { metricsUrl, scrape, valueOf } from './support.js'

const { app, db } = await build(t, { env: { RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '60000' } })
const base = await app.listen({ host: '127.0.0.1', port: 0 })
const metrics = await metricsUrl(t)

const company = await createCompany(db, 'Metrics Company Name')
const person = await createPerson(db, company.id, { email: 'metrics-person@example.test', fullName: 'Mara Metrics' })
const space = await createSpace(db, company.id, [person.id])
const project = await createProject(db, space, { name: 'Secret Project Name', access: { space: 70 } })
await addContributor(db, project.id, person.id, 'champion')
const token = (await tokenFor(db, person.email)).token
const readOnly = (await tokenFor(db, person.email, { readOnly: true })).token
const projectId = `secret-project-name-${shortId(project.id)}`

const GET = '/api/external/v1/projects/get'

async function get (url: string, bearer?: string) {
  return await fetch(`${base}${url}`, { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } })
}

t.test('requests are counted and timed by route template, method and status', async (t) => {
  const before = (await scrape(metrics)).families
  t.equal((await get(`${GET}?id=${projectId}`, token)).status, 200)
  t.equal((await get(`${GET}?id=${projectId}`, token)).status, 200)
  t.equal((await get(`${GET}?id=nothing-${shortId(company.id)}`, token)).status, 404)
  const { families } = await scrape(metrics)
  const labels = (status: string) => ({ method: 'GET', route: GET, status_code: status })
  const delta = (name: string, l: Record<string, string>) => valueOf(families, name, l) - valueOf(before, name, l)
  t.equal(delta('http_requests_total', labels('200')), 2)
  t.equal(delta('http_requests_total', labels('404')), 1)
  t.equal(delta('http_request_duration_seconds_count', labels('200')), 2)
  t.equal(delta('http_request_duration_seconds_bucket', { ...labels('200'), le: '+Inf' }), 2)
  t.ok(valueOf(families, 'http_request_duration_seconds_sum', labels('200')) > 0)
  const les = families.get('http_request_duration_seconds')!.samples
    .filter((s) => s.name.endsWith('_bucket') && s.labels.route === GET && s.labels.status_code === '200').map((s) => s.labels.le)
  t.same(les, ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'])
})

t.test('a path no route matches is one fixed label, whatever it holds', async (t) => {
  const before = (await scrape(metrics)).families
  t.equal((await get(`/api/external/v1/projects/${projectId}/${token}`)).status, 404)
  t.equal((await fetch(`${base}${GET}?id=${projectId}`, { method: 'DELETE' })).status, 405)
  const { families } = await scrape(metrics)
  const delta = (l: Record<string, string>) => valueOf(families, 'http_requests_total', l) - valueOf(before, 'http_requests_total', l)
  t.equal(delta({ method: 'GET', route: 'unmatched', status_code: '404' }), 1)
  t.equal(delta({ method: 'DELETE', route: 'unmatched', status_code: '405' }), 1)
})

t.test('authentication failures and rate-limit rejections are counted by reason', async (t) => {
  const before = (await scrape(metrics)).families
  t.equal((await get(GET)).status, 401)
  t.equal((await get(GET, 'pat_made_up_token')).status, 401)
  const rename = await fetch(`${base}/api/external/v1/projects/update_name`, {
    method: 'POST',
    headers: { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: projectId, name: 'x' })
  })
  t.equal(rename.status, 403)
  // The budget is 20 per token: the read-only token is used until it is refused once.
  let status = 0
  for (let i = 0; i < 25 && status !== 429; i++) status = (await get(`${GET}?id=${projectId}`, readOnly)).status
  t.equal(status, 429)
  const { families } = await scrape(metrics)
  const delta = (name: string, l: Record<string, string>) => valueOf(families, name, l) - valueOf(before, name, l)
  t.equal(delta('auth_failures_total', { reason: 'missing' }), 1)
  t.equal(delta('auth_failures_total', { reason: 'invalid' }), 1)
  t.equal(delta('auth_failures_total', { reason: 'read_only' }), 1)
  t.equal(delta('rate_limit_rejections_total', { limit: 'requests' }), 1)
  t.equal(delta('http_requests_total', { route: GET, status_code: '429' }), 1)
})

t.test('MCP tool calls are counted by tool and outcome, and their inner requests are not', async (t) => {
  const other = await createPerson(db, company.id)
  const agent = (await tokenFor(db, other.email)).token
  const client = await mcpClient(t, base, agent)
  const before = (await scrape(metrics)).families
  t.equal((await call(client, 'list_projects', {})).isError, false)
  const missing = await call(client, 'get_project', { project_id: projectId }) // not shared with the agent's person
  t.equal(missing.isError, true)
  t.equal(missing.body.code, 'not_found')
  t.equal((await call(client, 'get_project', { nonsense: 1 })).isError, true)
  const { families } = await scrape(metrics)
  const delta = (name: string, l: Record<string, string>) => valueOf(families, name, l) - valueOf(before, name, l)
  t.equal(delta('mcp_tool_calls_total', { tool: 'list_projects', outcome: 'success' }), 1)
  t.equal(delta('mcp_tool_calls_total', { tool: 'get_project', outcome: 'tool_error' }), 1)
  t.equal(delta('mcp_tool_calls_total', { tool: 'get_project', outcome: 'invalid_arguments' }), 1)
  t.equal(delta('http_requests_total', { method: 'POST', route: '/mcp', status_code: '200' }), 3)
  t.equal(delta('http_requests_total', { method: 'GET', route: '/api/external/v1/projects/list', status_code: '200' }), 0)
})

t.test('the output is valid text format, and no label holds anything a user sent', async (t) => {
  const { text, families, contentType } = await scrape(metrics)
  t.match(contentType, /^text\/plain; version=0\.0\.4/)
  for (const name of ['process_cpu_user_seconds_total', 'nodejs_heap_size_used_bytes', 'db_pool_connections', 'webhook_deliveries_pending']) {
    t.ok(families.has(name) || [...families.values()].some((f) => f.samples.some((s) => s.name === name)), name)
  }
  for (const secret of [project.id, shortId(project.id), projectId, 'Secret', token, readOnly, 'pat_', person.email, 'Mara', 'Metrics Company', company.id, shortId(company.id), '?id']) {
    t.notOk(text.includes(secret), `no ${secret.slice(0, 12)}`)
  }
})

t.test("the API's own port has no /metrics", async (t) => {
  const answer = await get('/metrics')
  t.equal(answer.status, 404)
  t.equal((await answer.json() as { code: string }).code, 'route_not_found')
})
