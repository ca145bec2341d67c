// The Prometheus files as Prometheus reads them (promtool is not needed here):
// the compose service scrapes the API and the workers on their metrics port, and
// every metric the alert rules and the docs name is one the registry serves.
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import t from '../tap.js'
import { parse } from 'yaml'
import { registry } from '../../src/metrics/registry.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const compose = parse(await readFile(`${root}/docker-compose.yml`, 'utf8'), { merge: true })
const config = parse(await readFile(`${root}/deploy/prometheus/prometheus.yml`, 'utf8'))
const rules = parse(await readFile(`${root}/deploy/prometheus/alerts.yml`, 'utf8'))
const served = new Set((await registry.getMetricsAsJSON()).flatMap((m) =>
  String(m.type) === 'histogram' ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name]))

t.test('compose runs Prometheus on these files, scraping the API and the workers', async (t) => {
  const { prometheus, api, worker } = compose.services
  t.match(prometheus.image, /^prom\/prometheus(:|$)/)
  t.ok(prometheus.volumes.includes('./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro'))
  t.ok(prometheus.volumes.includes('./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro'))
  t.same(config.rule_files, ['alerts.yml']) // beside the config, in the container as here
  t.equal(api.environment.METRICS_HOST, '0.0.0.0')
  t.equal(worker.environment.METRICS_HOST, '0.0.0.0')
  t.notOk(JSON.stringify(api.ports ?? []).includes('9464'), 'the metrics port is not published')
  const jobs = Object.fromEntries(config.scrape_configs.map((job: { job_name: string, dns_sd_configs: Array<{ names: string[], port: number }> }) => [job.job_name, job.dns_sd_configs[0]]))
  t.same(jobs.api, { names: ['api'], type: 'A', port: 9464 })
  t.same(jobs.worker, { names: ['worker'], type: 'A', port: 9464 })
})

t.test('the alert rules are well formed and name metrics the registry serves', async (t) => {
  const alerts = rules.groups.flatMap((group: { rules: Array<Record<string, unknown>> }) => group.rules)
  t.same(alerts.map((rule: Record<string, unknown>) => rule.alert).sort(), ['ApiHighErrorRate', 'ApiSlowP99', 'DatabasePoolWaiting', 'WebhookBacklogOld'])
  for (const rule of alerts) {
    t.type(rule.expr, 'string', `${rule.alert}: an expression`)
    t.match(rule.for, /^\d+[smh]$/, `${rule.alert}: a duration`)
    t.ok((rule.annotations as Record<string, string>).summary, `${rule.alert}: a summary`)
    const names = String(rule.expr).match(/\b[a-z_]+_(?:total|seconds_bucket|seconds|clients)\b/g) ?? []
    t.ok(names.length > 0)
    for (const name of names) t.ok(served.has(name), `${rule.alert}: ${name} is served`)
  }
})

t.test('every metric docs/observability.md lists is served', async (t) => {
  const doc = await readFile(`${root}/docs/observability.md`, 'utf8')
  const listed = [...doc.matchAll(/^\| `([a-z_]+)` \| (counter|gauge|histogram) \|/gm)].map((m) => m[1]!)
  t.ok(listed.length >= 12)
  for (const name of listed) t.ok(served.has(name) || served.has(`${name}_count`), name)
  for (const name of served) {
    const family = name.replace(/_(bucket|sum|count)$/, '')
    if (/^(process|nodejs)_/.test(name)) continue
    t.ok(listed.includes(name) || listed.includes(family), `${name} is documented`)
  }
})
