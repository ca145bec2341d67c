// Prometheus's own tools on what we ship: promtool checks the scrape config, the
// alert rules (and runs their unit tests, deploy/prometheus/alerts.test.yml) and
// the /metrics output of a service that has answered every kind of request; then a
// real Prometheus server scrapes the running service under load and is asked for
// request rates and p99 latency per operation. Both need Prometheus installed
// (`promtool` and `prometheus` on PATH; Debian's package `prometheus`); without
// it the file says so and skips.
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from '../tap.js'
import { shortId } from '../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, tokenFor, waitFor } from '../helper.js'
import { freePort } from '../launch.js'
import { call, mcpClient } from '../mcp/support.js'
import { metricsUrl } from './support.js'

const exec = promisify(execFile)
const root = fileURLToPath(new URL('../..', import.meta.url))

async function installed (command: string): Promise<boolean> {
  try {
    await exec(command, ['--version'])
    return true
  } catch {
    return false
  }
}

/** Runs promtool with `input` on its standard input; its exit code and what it printed. */
async function promtool (args: string[], input?: string): Promise<{ code: number | null, output: string }> {
  const child = spawn('promtool', args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stdin.end(input ?? '')
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  return { code, output }
}

if (!(await installed('promtool')) || !(await installed('prometheus'))) {
  t.comment('Prometheus is not installed (promtool, prometheus); install Debian\'s package prometheus to run these checks')
  t.pass('skipped: Prometheus is not installed')
} else {
  const { app, db } = await build(t, { env: { RATE_LIMIT_MAX: '1000', RATE_LIMIT_WINDOW_MS: '60000' } })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const metrics = await metricsUrl(t)

  const company = await createCompany(db)
  const person = await createPerson(db, company.id)
  const space = await createSpace(db, company.id, [person.id])
  const project = await createProject(db, space, { access: { space: 70 } })
  await addContributor(db, project.id, person.id, 'champion')
  const token = (await tokenFor(db, person.email)).token
  const projectId = shortId(project.id)
  const api = (path: string, options: RequestInit = {}) => fetch(`${base}/api/external/v1/${path}`, {
    ...options,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...options.headers }
  })

  /** One request of each kind: read, list, write, 404, 400, 401, an unmatched path, an MCP call. */
  async function traffic (): Promise<void> {
    await api(`projects/get?id=${projectId}`)
    await api('projects/list')
    await api('projects/update_name', { method: 'POST', body: JSON.stringify({ project_id: projectId, name: `Renamed ${Date.now()}` }) })
    await api(`projects/get?id=${shortId(company.id)}`)
    await api('projects/update_name', { method: 'POST', body: '{"project_id": 1}' })
    await api('projects/get', { headers: { authorization: 'Bearer nope' } })
    await fetch(`${base}/no/such/path`)
  }

  t.test('promtool accepts the scrape config and the alert rules, and their unit tests pass', async (t) => {
    const config = await promtool(['check', 'config', 'deploy/prometheus/prometheus.yml'])
    t.equal(config.code, 0, config.output)
    const rules = await promtool(['check', 'rules', 'deploy/prometheus/alerts.yml'])
    t.equal(rules.code, 0, rules.output)
    t.match(rules.output, /SUCCESS: 4 rules found/)
    const tests = await promtool(['test', 'rules', 'deploy/prometheus/alerts.test.yml'])
    t.equal(tests.code, 0, tests.output)
  })

  t.test('promtool check metrics accepts the output, lint included, after every kind of request', async (t) => {
    await traffic()
    const client = await mcpClient(t, base, token)
    await call(client, 'get_project', { project_id: projectId })
    await call(client, 'get_project', { project_id: 'nothing' })
    const text = await (await fetch(`${metrics}/metrics`)).text()
    t.match(text, /mcp_tool_calls_total\{tool="get_project"/)
    const checked = await promtool(['check', 'metrics'], text)
    t.equal(checked.code, 0, checked.output)
    t.equal(checked.output.trim(), '', 'no lint finding')
    // The check is real: a counter without _total is a lint finding.
    const bad = await promtool(['check', 'metrics'], '# HELP requests Requests.\n# TYPE requests counter\nrequests 1\n')
    t.not(bad.code, 0)
  })

  t.test('a real Prometheus scrapes the service under load and answers rates and p99 per operation', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'prometheus-'))
    t.teardown(() => rm(dir, { recursive: true, force: true }))
    const port = await freePort()
    await writeFile(join(dir, 'prometheus.yml'), [
      'global: { scrape_interval: 1s }',
      'scrape_configs:',
      '  - job_name: api',
      `    static_configs: [{ targets: ['${new URL(metrics).host}'] }]`,
      ''
    ].join('\n'))
    const server = spawn('prometheus', [
      `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
    let log = ''
    server.stderr.on('data', (chunk: Buffer) => { log += chunk.toString() })
    const exited = new Promise((resolve) => server.on('exit', resolve))
    t.teardown(async () => { server.kill('SIGTERM'); await exited })
    const prometheus = `http://127.0.0.1:${port}`
    t.ok(await waitFor(async () => (await fetch(`${prometheus}/-/ready`).catch(() => null))?.status === 200, 60_000), `Prometheus ready: ${log}`)

    const query = async (expression: string) => {
      const answer = await (await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(expression)}`)).json() as {
        status: string, data: { result: Array<{ metric: Record<string, string>, value: [number, string] }> }
      }
      t.equal(answer.status, 'success', expression)
      return answer.data.result
    }
    const rate = 'sum by (route, method, status_code) (rate(http_requests_total{job="api"}[5s]))'
    const p99 = 'histogram_quantile(0.99, sum by (route, le) (rate(http_request_duration_seconds_bucket{job="api"}[5s])))'
    const of = (rows: Awaited<ReturnType<typeof query>>, labels: Record<string, string>) =>
      rows.find((row) => Object.entries(labels).every(([key, value]) => row.metric[key] === value))
    // Load runs until Prometheus has scraped enough of it to answer a rate (two samples in range).
    const answered = await waitFor(async () => {
      await traffic()
      return Number(of(await query(rate), { route: '/api/external/v1/projects/get', status_code: '200' })?.value[1] ?? 0) > 0
    }, 120_000)
    t.ok(answered, `a rate for projects/get: ${log}`)

    const rates = await query(rate)
    for (const [route, method, status] of [
      ['/api/external/v1/projects/get', 'GET', '200'], ['/api/external/v1/projects/get', 'GET', '404'],
      ['/api/external/v1/projects/list', 'GET', '200'], ['/api/external/v1/projects/update_name', 'POST', '200'],
      ['/api/external/v1/projects/update_name', 'POST', '400'], ['/api/external/v1/projects/get', 'GET', '401'],
      ['unmatched', 'GET', '404']
    ] as const) {
      const row = of(rates, { route, method, status_code: status })
      t.ok(row !== undefined && Number(row.value[1]) > 0, `a rate for ${method} ${route} ${status}`)
    }
    t.notOk(rates.some((row) => row.metric.route!.includes(projectId) || row.metric.route!.includes('?')), 'routes are templates')
    const quantiles = await query(p99)
    for (const route of ['/api/external/v1/projects/get', '/api/external/v1/projects/list', '/api/external/v1/projects/update_name']) {
      const value = Number(of(quantiles, { route })?.value[1])
      t.ok(Number.isFinite(value) && value > 0 && value <= 10, `p99 of ${route}: ${value}`)
    }
    const pool = await query('db_pool_connections{job="api"}')
    t.ok(pool.length > 0, 'the pool is scraped too')
  })
}
