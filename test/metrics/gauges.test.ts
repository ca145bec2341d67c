// The gauges read at scrape time (the database pool, the webhook backlog), the
// webhook attempts counted by outcome, and the metrics server itself: its one
// route, and METRICS_PORT=0 opening nothing.
import { createServer, type AddressInfo } from 'node:net'
import { sql } from 'kysely'
import t from '../tap.js'
import { loadConfig } from '../../src/config.js'
import { createDb, dbOptions, poolOf } from '../../src/db/index.js'
import { watchDatabase } from '../../src/metrics/registry.js'
import { startMetricsServer } from '../../src/metrics/server.js'
import { build, testConfig, waitFor } from '../helper.js'
import { freePort } from '../launch.js'
import { deliveriesOf, deliveryFixture, insertWebhook, startReceiver, startWorker } from '../webhooks/support.js'
import { metricsUrl, scrape, valueOf } from './support.js'

t.test('the webhook backlog and the attempts by outcome', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '0.01' } })
  const { db, api, company, project } = fixture
  const metrics = await metricsUrl(t)
  const retried = await startReceiver(t)
  const gone = await startReceiver(t)
  let first = true
  retried.answer(() => {
    const status = first ? 500 : 200
    first = false
    return { status }
  })
  gone.answer(() => ({ status: 410 }))
  const retriedHook = await insertWebhook(db, company.id, retried.url, { events: ['project.renamed'] })
  const goneHook = await insertWebhook(db, company.id, gone.url, { events: ['project.renamed'] })
  const before = (await scrape(metrics)).families
  t.equal(valueOf(before, 'webhook_deliveries_pending'), 0)
  t.equal(valueOf(before, 'webhook_oldest_pending_delivery_age_seconds'), 0)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Backlog' })).statusCode, 200)
  await db.updateTable('webhook_deliveries').set({ inserted_at: sql<Date>`now() - interval '120 seconds'` }).execute()
  const backlog = (await scrape(metrics)).families
  t.equal(valueOf(backlog, 'webhook_deliveries_pending'), 2, 'both deliveries pending')
  const age = valueOf(backlog, 'webhook_oldest_pending_delivery_age_seconds')
  t.ok(age >= 120 && age < 3600, `the oldest is about 120 s old (${age})`)

  await startWorker(t, db, fixture.config)
  t.ok(await waitFor(async () => {
    const rows = [...await deliveriesOf(db, retriedHook.id), ...await deliveriesOf(db, goneHook.id)]
    return rows.every((row) => row.status !== 'pending')
  }, 20_000), 'both deliveries settled')
  const after = (await scrape(metrics)).families
  t.equal(valueOf(after, 'webhook_deliveries_pending'), 0)
  t.equal(valueOf(after, 'webhook_oldest_pending_delivery_age_seconds'), 0)
  const delta = (outcome: string) => valueOf(after, 'webhook_delivery_attempts_total', { outcome }) -
    valueOf(before, 'webhook_delivery_attempts_total', { outcome })
  t.equal(delta('retried'), 1)
  t.equal(delta('delivered'), 1)
  t.equal(delta('failed'), 1)
})

t.test("the pool's size, open, idle and waiting connections", async (t) => {
  const { url } = await build(t)
  const metrics = await metricsUrl(t)
  if (url === undefined) {
    // The embedded database: one connection, the statements queued behind it waiting.
    const { families } = await scrape(metrics)
    t.equal(valueOf(families, 'db_pool_max_connections'), 1)
    t.equal(valueOf(families, 'db_pool_connections'), 1)
    t.equal(valueOf(families, 'db_pool_waiting_clients'), 0)
    return
  }
  const db = await createDb({ ...dbOptions(testConfig({ DATABASE_URL: url })), poolSize: 2 })
  t.teardown(() => db.destroy())
  t.teardown(watchDatabase(db))
  const pool = poolOf(db)!
  const held = [await pool.connect(), await pool.connect()]
  const waiting = pool.query('SELECT 1')
  const busy = (await scrape(metrics)).families
  t.equal(valueOf(busy, 'db_pool_max_connections'), 2)
  t.equal(valueOf(busy, 'db_pool_connections'), 2)
  t.equal(valueOf(busy, 'db_pool_idle_connections'), 0)
  t.equal(valueOf(busy, 'db_pool_waiting_clients'), 1)
  for (const client of held) client.release()
  await waiting
  const idle = (await scrape(metrics)).families
  t.equal(valueOf(idle, 'db_pool_connections'), 2)
  t.equal(valueOf(idle, 'db_pool_idle_connections'), 2)
  t.equal(valueOf(idle, 'db_pool_waiting_clients'), 0)
})

t.test('the metrics server answers GET /metrics and nothing else', async (t) => {
  const port = await freePort()
  const server = await startMetricsServer(loadConfig({ METRICS_PORT: String(port) }))
  t.teardown(() => server?.close())
  t.equal(server?.port, port)
  const base = `http://127.0.0.1:${port}`
  const answer = await fetch(`${base}/metrics`)
  t.equal(answer.status, 200)
  t.match(await answer.text(), /^# HELP /)
  t.equal((await fetch(`${base}/`)).status, 404)
  t.equal((await fetch(`${base}/metrics/x`)).status, 404)
  t.equal((await fetch(`${base}/metrics`, { method: 'POST' })).status, 405)
})

t.test('a metrics port in use is refused naming METRICS_PORT, and how to choose', async (t) => {
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())))
  const { port } = taken.address() as AddressInfo
  await t.rejects(startMetricsServer(loadConfig({ METRICS_PORT: String(port) })), {
    message: `METRICS_PORT=${port}: 127.0.0.1:${port} is in use by another process (another server?); choose a free port, or 0 to turn metrics off`
  })
})

t.test('METRICS_PORT=0 opens nothing and counts nothing', async (t) => {
  t.equal(loadConfig({}).METRICS_PORT, 9464)
  t.equal(loadConfig({}).METRICS_HOST, '127.0.0.1')
  t.throws(() => loadConfig({ METRICS_PORT: '70000' }), /METRICS_PORT/)
  const handles = () => (process as unknown as { _getActiveHandles: () => unknown[] })._getActiveHandles().length
  const open = handles()
  t.equal(await startMetricsServer(loadConfig({ METRICS_PORT: '0' })), null)
  t.equal(handles(), open, 'no server or socket opened')
  const { app } = await build(t, { env: { METRICS_PORT: '0' } })
  const metrics = await metricsUrl(t)
  const count = async () => valueOf((await scrape(metrics)).families, 'http_requests_total', { route: '/health/live' })
  const before = await count()
  t.equal((await app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200)
  t.equal(await count(), before, 'requests are not counted')
})
