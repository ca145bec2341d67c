// Server-side request forgery at delivery, with WEBHOOKS_ALLOW_PRIVATE_TARGETS
// off (the default): an endpoint whose host is, or resolves to, a loopback,
// link-local (cloud metadata) or otherwise private address, or that is not https,
// gets a failed attempt that says why, and no connection is ever opened to it;
// a host is judged as registration judges it (a trailing dot, the case), and
// port 0 is refused before any connection.
// The endpoints are written straight into the table, as if made when the setting
// was on or when their name resolved elsewhere: creation checks, and so does
// every delivery.
import t from '../tap.js'
import {
  deliveriesOf, deliveryFixture, insertWebhook, startReceiver, startWorker, waitForDeliveries
} from './support.js'

t.test('a private target is a failed attempt saying why, and no request reaches it', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOKS_RETRY_SCHEDULE: '60' } })
  const { db, api, company, project } = fixture
  t.equal(fixture.config.WEBHOOKS_ALLOW_PRIVATE_TARGETS, false)
  // Listening on both loopbacks, as an internal service would.
  const receiver = await startReceiver(t, { host: '::' })
  const port = receiver.port
  const cases = [
    { url: `https://localhost:${port}/hooks`, error: /^refused: localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/ },
    // The host as registration judges it: one trailing dot and the case do not make another name.
    { url: `https://localhost.:${port}/hooks`, error: /^refused: localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/ },
    { url: `https://LocalHost.:${port}/other`, error: /^refused: localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/ },
    { url: 'https://8.8.8.8:0/hooks', error: /^refused: port 0 is not a port to connect to$/ },
    { url: `https://127.0.0.1:${port}/hooks`, error: /^refused: 127\.0\.0\.1 is not a public address$/ },
    { url: `https://[::1]:${port}/hooks`, error: /^refused: ::1 is not a public address$/ },
    { url: `https://[::ffff:127.0.0.1]:${port}/hooks`, error: /^refused: ::ffff:7f00:1 is not a public address$/ },
    { url: 'https://169.254.169.254/latest/meta-data/', error: /^refused: 169\.254\.169\.254 is not a public address$/ },
    { url: 'https://10.1.2.3/hooks', error: /^refused: 10\.1\.2\.3 is not a public address$/ },
    { url: `http://127.0.0.1:${port}/hooks`, error: /^refused: only https targets are allowed \(WEBHOOKS_ALLOW_PRIVATE_TARGETS is off\)$/ }
  ]
  const hooks = []
  for (const c of cases) hooks.push({ ...c, ...await insertWebhook(db, company.id, c.url) })
  await startWorker(t, db, fixture.config)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Forged' })).statusCode, 200)
  for (const hook of hooks) {
    t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.attempts === 1), `${hook.url}: attempted`)
    const [row] = await deliveriesOf(db, hook.id)
    t.match(row, { status: 'pending', attempts: 1, last_status_code: null, delivered_at: null, next_attempt_at: Date }, `${hook.url}: a failed attempt, retried later`)
    t.match(row?.last_error, hook.error, `${hook.url}: ${row?.last_error}`)
  }
  t.equal(receiver.connections(), 0, 'no connection reached the receiver')
  t.equal(receiver.requests.length, 0)
})

t.test('with WEBHOOKS_ALLOW_PRIVATE_TARGETS on, the same loopback targets are delivered to', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t, { host: '::' })
  const urls = [`http://localhost:${receiver.port}/hooks`, `http://127.0.0.1:${receiver.port}/hooks`, `http://[::1]:${receiver.port}/hooks`]
  const hooks = []
  for (const url of urls) hooks.push(await insertWebhook(db, company.id, url))
  await startWorker(t, db, fixture.config)
  t.equal((await api.updateName({ project_id: project.publicId, name: 'Allowed' })).statusCode, 200)
  for (const hook of hooks) t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'delivered'))
  t.equal(receiver.requests.length, 3)
})
