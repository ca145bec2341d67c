// Webhook delivery end to end in one process: a change made through the API, the
// delivery workers of this process, and a real HTTP receiver on loopback that
// verifies each request with `standardwebhooks`, as a consumer would. Retries,
// timeouts, refused connections, 410, Retry-After, redirects, secret rotation,
// the schedule running out, stale jobs, and changes that queue nothing.
import { sql } from 'kysely'
import { Webhook } from 'standardwebhooks'
import t from '../tap.js'
import { shortId } from '../../src/ids.js'
import { Deliverer, deliverySettings } from '../../src/webhooks/deliver.js'
import { createPerson, client, projectActivities, tokenFor, waitFor } from '../helper.js'
import { freePort } from '../launch.js'
import {
  captureLog, deliveriesOf, deliveryFixture, deliveryJobs, insertWebhook, newSecret, startReceiver, startWorker, waitForDeliveries, type Received
} from './support.js'

/** The body as a consumer gets it, checked by the reference verifier with the endpoint's secret. */
function verified (secret: string, request: Received): unknown {
  return new Webhook(secret).verify(request.body, request.headers)
}

t.test('a rename and a description change reach the receiver signed, with the event as the body', async (t) => {
  const fixture = await deliveryFixture(t)
  const { db, api, company, person, project } = fixture
  const receiver = await startReceiver(t)
  const renames = await startReceiver(t)
  const all = await insertWebhook(db, company.id, receiver.url)
  const renamesOnly = await insertWebhook(db, company.id, renames.url, { events: ['project.renamed'] })
  const { log, lines } = captureLog()
  await startWorker(t, db, fixture.config, log)

  const renamed = await api.updateName({ project_id: project.publicId, name: 'Launch 2.0' })
  t.equal(renamed.statusCode, 200)
  t.ok(await receiver.waitForRequests(1), 'the rename arrived')
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Ship it — ✓' }] }] })
  t.equal((await api.updateDescription({ project_id: project.publicId, description })).statusCode, 200)
  t.ok(await receiver.waitForRequests(2), 'the description change arrived')
  t.ok(await renames.waitForRequests(1))

  const [rename, describe] = receiver.requests as [Received, Received]
  const [renameActivity, describeActivity] = await projectActivities(db, project.id)
  const parts = (activity: { inserted_at: Date }) => ({
    timestamp: activity.inserted_at.toISOString(),
    project: { id: renamed.json().project.id, name: 'Launch 2.0' },
    company: { id: shortId(company.id), name: company.name },
    actor: { id: shortId(person.id), full_name: person.full_name }
  })
  const expectedRename = {
    type: 'project.renamed',
    timestamp: parts(renameActivity!).timestamp,
    data: {
      project: parts(renameActivity!).project,
      company: parts(renameActivity!).company,
      actor: parts(renameActivity!).actor,
      change: { old_name: project.name, new_name: 'Launch 2.0' }
    }
  }
  t.same(verified(all.secret, rename), expectedRename, 'verified with the secret: the rename event')
  t.equal(rename.body, JSON.stringify(expectedRename), 'the body is exactly this JSON, keys in this order')
  t.equal(rename.method, 'POST')
  t.equal(rename.url, '/hooks')
  t.equal(rename.headers['content-type'], 'application/json')
  t.equal(rename.headers['webhook-id'], shortId(renameActivity!.id), "webhook-id: the event's public id")
  t.match(rename.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/, 'one signature')
  t.ok(Math.abs(Number(rename.headers['webhook-timestamp']) - rename.at / 1000) < 5, 'webhook-timestamp: the time of the attempt, in seconds')
  t.throws(() => new Webhook(newSecret()).verify(rename.body, rename.headers), 'another secret does not verify')
  t.throws(() => new Webhook(all.secret).verify(rename.body.replace('Launch', 'Lunch'), rename.headers), 'a changed body does not verify')

  t.same(verified(all.secret, describe), {
    type: 'project.description_changed',
    timestamp: parts(describeActivity!).timestamp,
    data: {
      project: parts(describeActivity!).project,
      company: parts(describeActivity!).company,
      actor: parts(describeActivity!).actor,
      change: { description, description_omitted: false, description_bytes: Buffer.byteLength(description) }
    }
  }, 'the description event: the new description, whole')
  t.equal(describe.headers['webhook-id'], shortId(describeActivity!.id))

  t.equal(renames.requests.length, 1, 'an endpoint subscribed to renames only gets the rename')
  t.same(verified(renamesOnly.secret, renames.requests[0]!), expectedRename, 'the same event, signed with its own secret')
  t.equal(renames.requests[0]!.headers['webhook-id'], rename.headers['webhook-id'], 'the same webhook-id on every endpoint')

  t.ok(await waitForDeliveries(db, all.id, (rows) => rows.every((r) => r.status === 'delivered')), 'recorded as delivered')
  for (const row of await deliveriesOf(db, all.id)) {
    t.match(row, { status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, next_attempt_at: null, delivered_at: Date })
    t.type(row.last_duration_ms, 'number')
  }
  t.ok(await waitFor(() => lines.filter((l) => l.msg === 'webhook delivered').length === 3, 30_000))
  t.match(lines.find((l) => l.msg === 'webhook delivered' && l.webhook_id === shortId(all.id) && l.event_type === 'project.renamed'), {
    level: 30,
    webhook_id: shortId(all.id),
    event_id: shortId(renameActivity!.id),
    delivery_id: String,
    attempt: 1,
    status_code: 200,
    error: null,
    duration_ms: Number,
    outcome: 'delivered'
  }, 'each attempt is logged with the endpoint, event, delivery, attempt, status and duration')
})

t.test('a description over 64 KiB is flagged, without its text; one of exactly 64 KiB is sent whole', async (t) => {
  const fixture = await deliveryFixture(t)
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  const hook = await insertWebhook(db, company.id, receiver.url, { events: ['project.description_changed'] })
  await startWorker(t, db, fixture.config)

  // A JSON string: its quotes are two of its bytes.
  const exactly = JSON.stringify('é'.repeat(32 * 1024 - 1))
  const over = JSON.stringify('x'.repeat(64 * 1024 - 1))
  t.equal(Buffer.byteLength(exactly), 64 * 1024)
  t.equal(Buffer.byteLength(over), 64 * 1024 + 1)
  t.equal((await api.updateDescription({ project_id: project.publicId, description: exactly })).statusCode, 200)
  t.ok(await receiver.waitForRequests(1))
  t.equal((await api.updateDescription({ project_id: project.publicId, description: over })).statusCode, 200)
  t.ok(await receiver.waitForRequests(2))

  const [whole, flagged] = receiver.requests.map((r) => verified(hook.secret, r) as { data: { change: unknown } })
  t.same(whole!.data.change, { description: exactly, description_omitted: false, description_bytes: 65536 })
  t.same(flagged!.data.change, { description: null, description_omitted: true, description_bytes: 65537 })
  t.ok(receiver.requests[1]!.body.length < 1024, 'the flagged event is small')
})

t.test('a receiver that fails, then answers, gets the same event again: same webhook-id, same body', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '0.2,0.2' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  receiver.answer((r) => r.index === 0 ? { status: 500, body: 'not now' } : { status: 204 })
  const hook = await insertWebhook(db, company.id, receiver.url)
  const { log, lines } = captureLog()
  await startWorker(t, db, fixture.config, log)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Retried' })).statusCode, 200)
  t.ok(await receiver.waitForRequests(2), 'the event came again')
  const [first, second] = receiver.requests as [Received, Received]
  t.equal(second.headers['webhook-id'], first.headers['webhook-id'], 'the same webhook-id: a consumer dedupes by it')
  t.equal(second.body, first.body, 'the same bytes')
  t.same(verified(hook.secret, second), verified(hook.secret, first))
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'delivered'))
  t.match((await deliveriesOf(db, hook.id))[0], { status: 'delivered', attempts: 2, last_status_code: 204, last_error: null, next_attempt_at: null })
  t.ok(await waitFor(() => lines.some((l) => l.msg === 'webhook delivered'), 30_000))
  t.match(lines.filter((l) => typeof l.attempt === 'number'), [
    { level: 40, attempt: 1, status_code: 500, outcome: 'retry', next_attempt_at: String, msg: 'webhook delivery attempt failed; retry scheduled' },
    { level: 30, attempt: 2, status_code: 204, outcome: 'delivered', next_attempt_at: null }
  ], 'both attempts logged')
  t.equal(receiver.requests.length, 2, 'nothing more once delivered')
})

t.test('a receiver that hangs: the attempt ends at its bound and the next is scheduled by the schedule', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_ATTEMPT_TIMEOUT_MS: '1000', WEBHOOKS_RETRY_SCHEDULE: '3' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  receiver.answer((r) => r.index === 0 ? 'hang' : { status: 200 })
  const hook = await insertWebhook(db, company.id, receiver.url)
  await startWorker(t, db, fixture.config)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Hung' })).statusCode, 200)
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.attempts === 1), 'the first attempt is recorded')
  const [failed] = await deliveriesOf(db, hook.id)
  t.match(failed, { status: 'pending', attempts: 1, last_status_code: null, last_error: 'no answer within 1 s', delivered_at: null })
  t.ok(failed!.last_duration_ms! >= 1000, 'it waited for its bound')
  const wait = failed!.next_attempt_at!.getTime() - failed!.last_attempt_at!.getTime() - failed!.last_duration_ms!
  t.ok(wait >= 2400 - 5 && wait <= 3600 + 5, `the next attempt is the schedule's 3 s, jittered (${wait} ms after the attempt ended)`)
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'delivered'), 'then delivered')
  t.equal(receiver.requests[1]!.headers['webhook-id'], receiver.requests[0]!.headers['webhook-id'])
})

t.test('a receiver that is down: connection refused, retried; when the schedule runs out the delivery fails and the endpoint is disabled', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '0.2,0.2' } })
  const { db, api, company, project } = fixture
  const hook = await insertWebhook(db, company.id, `http://127.0.0.1:${await freePort()}/down`)
  const { log, lines } = captureLog()
  await startWorker(t, db, fixture.config, log)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Nobody home' })).statusCode, 200)
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'failed'))
  t.match((await deliveriesOf(db, hook.id))[0], {
    status: 'failed', attempts: 3, last_status_code: null, last_error: 'connection refused', next_attempt_at: null, delivered_at: null
  }, 'three attempts: the first and the two retries of the schedule')
  const endpoint = await db.selectFrom('webhooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow()
  t.match(endpoint, { enabled: false, disabled_reason: 'all 3 attempts of a delivery failed, the last with connection refused', disabled_at: Date })
  t.ok(await waitFor(() => lines.some((l) => l.msg === 'webhook disabled'), 30_000), 'the disabling is logged')
  t.same((await deliveryJobs(db)).filter((j) => j.state === 'created' || j.state === 'retry'), [], 'no job left waiting')

  // A disabled endpoint gets no new deliveries.
  t.equal((await api.updateName({ project_id: project.publicId, name: 'Still nobody' })).statusCode, 200)
  t.equal((await deliveriesOf(db, hook.id)).length, 1)
})

t.test('an endpoint that got a delivery through meanwhile is not disabled when an older delivery runs out of attempts', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '0.2' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  let release: () => void = () => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  const first = JSON.stringify('first')
  const isFirst = (r: Received) => r.body.includes('first')
  // The first event always fails; its last attempt waits until the second event is through.
  receiver.answer(async (r) => {
    if (!isFirst(r)) return { status: 200 }
    if (receiver.requests.filter(isFirst).length === 2) await released
    return { status: 500 }
  })
  const hook = await insertWebhook(db, company.id, receiver.url, { events: ['project.description_changed'] })
  await startWorker(t, db, fixture.config)

  t.equal((await api.updateDescription({ project_id: project.publicId, description: first })).statusCode, 200)
  t.ok(await receiver.waitForRequests(2), 'the first event failed and is being retried')
  t.equal((await api.updateDescription({ project_id: project.publicId, description: JSON.stringify('second') })).statusCode, 200)
  t.ok(await waitForDeliveries(db, hook.id, (rows) => rows[1]?.status === 'delivered'), 'the second got through')
  release()
  t.ok(await waitForDeliveries(db, hook.id, (rows) => rows[0]?.status === 'failed'), 'the first ran out of attempts')
  const endpoint = await db.selectFrom('webhooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow()
  t.match(endpoint, { enabled: true, disabled_reason: null }, 'still enabled: it does not keep failing')
})

t.test('410 Gone disables the endpoint at once and cancels its deliveries waiting for a retry', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '60' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  receiver.answer((r) => r.index === 0 ? { status: 503 } : { status: 410 })
  const hook = await insertWebhook(db, company.id, receiver.url)
  await startWorker(t, db, fixture.config)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'One' })).statusCode, 200)
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.attempts === 1), 'the first is waiting for its retry, a minute away')
  t.equal((await api.updateName({ project_id: project.publicId, name: 'Two' })).statusCode, 200)
  t.ok(await waitForDeliveries(db, hook.id, (rows) => rows[1]?.status === 'failed'))
  const [waiting, gone] = await deliveriesOf(db, hook.id)
  t.match(gone, { status: 'failed', attempts: 1, last_status_code: 410, next_attempt_at: null })
  t.match(waiting, { status: 'canceled', attempts: 1, last_status_code: 503, next_attempt_at: null })
  t.match(await db.selectFrom('webhooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow(),
    { enabled: false, disabled_reason: 'the endpoint answered 410 Gone', disabled_at: Date })
  t.equal(receiver.requests.length, 2, 'one request each, no retry after a 410')
})

t.test('Retry-After is honoured: the next attempt waits for it rather than the shorter schedule', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '0.2' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  receiver.answer((r) => r.index === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 200 })
  const hook = await insertWebhook(db, company.id, receiver.url)
  await startWorker(t, db, fixture.config)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Later' })).statusCode, 200)
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.attempts === 1))
  const [first] = await deliveriesOf(db, hook.id)
  const wait = first!.next_attempt_at!.getTime() - first!.last_attempt_at!.getTime() - first!.last_duration_ms!
  t.ok(wait >= 2000 - 5, `the next attempt at least 2 s after the answer (${wait} ms)`)
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'delivered'))
  const [a, b] = receiver.requests as [Received, Received]
  t.ok(b.at - a.at >= 2000 - 50, `the second request came ${b.at - a.at} ms after the first`)
})

t.test('a redirect is not followed: a failed attempt, and its target gets nothing', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '0.2' } })
  const { db, api, company, project } = fixture
  const elsewhere = await startReceiver(t)
  const receiver = await startReceiver(t)
  receiver.answer(() => ({ status: 307, headers: { location: elsewhere.url } }))
  const hook = await insertWebhook(db, company.id, receiver.url)
  await startWorker(t, db, fixture.config)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Moved' })).statusCode, 200)
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'failed'))
  t.match((await deliveriesOf(db, hook.id))[0], { attempts: 2, last_status_code: 307, last_error: 'redirects are not followed' })
  t.equal(receiver.requests.length, 2)
  t.equal(elsewhere.connections(), 0, 'the redirect target was never contacted')
})

t.test('a rotated secret: two signatures while the old one is in its grace period, each verifying with its own secret', async (t) => {
  const fixture = await deliveryFixture(t)
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  const old = newSecret()
  const rotated = await insertWebhook(db, company.id, receiver.url, { previousSecret: { secret: old, expiresInSeconds: 86_400 } })
  const expiredOld = newSecret()
  const lapsed = await startReceiver(t)
  const expired = await insertWebhook(db, company.id, lapsed.url, { previousSecret: { secret: expiredOld, expiresInSeconds: -1 } })
  await startWorker(t, db, fixture.config)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Rotated' })).statusCode, 200)
  t.ok(await receiver.waitForRequests(1))
  t.ok(await lapsed.waitForRequests(1))
  const [request] = receiver.requests as [Received]
  const signatures = request.headers['webhook-signature']!.split(' ')
  t.equal(signatures.length, 2, 'two signatures, space-separated')
  for (const signature of signatures) t.match(signature, /^v1,/)
  t.same(verified(rotated.secret, request), verified(old, request), 'the new secret verifies, and so does the old one')
  for (const [secret, signature] of [[rotated.secret, signatures[0]!], [old, signatures[1]!]] as const) {
    t.doesNotThrow(() => new Webhook(secret).verify(request.body, { ...request.headers, 'webhook-signature': signature }), 'each signature is its own secret\'s')
  }
  t.throws(() => new Webhook(old).verify(request.body, { ...request.headers, 'webhook-signature': signatures[0]! }))

  const [late] = lapsed.requests as [Received]
  t.equal(late.headers['webhook-signature']!.split(' ').length, 1, 'a previous secret past its expiry signs no more')
  t.doesNotThrow(() => verified(expired.secret, late))
  t.throws(() => verified(expiredOld, late))
})

t.test('a job with nothing to do sends nothing: its attempt already made, or its endpoint disabled', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '60' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  const hook = await insertWebhook(db, company.id, receiver.url)
  const off = await insertWebhook(db, company.id, receiver.url, { enabled: false })
  t.equal((await api.updateName({ project_id: project.publicId, name: 'By hand' })).statusCode, 200)
  t.equal((await deliveriesOf(db, off.id)).length, 0, 'a disabled endpoint gets no delivery')
  const [delivery] = await deliveriesOf(db, hook.id)
  const deliverer = new Deliverer(db, deliverySettings(fixture.config), captureLog().log)
  t.teardown(() => deliverer.close())

  t.equal(await deliverer.attempt({ delivery_id: delivery!.id, attempt: 2 }), null, 'an attempt out of turn does nothing')
  t.equal(receiver.requests.length, 0)
  t.match(await deliverer.attempt({ delivery_id: delivery!.id, attempt: 1 }), { outcome: 'delivered', statusCode: 200, recorded: true })
  t.equal(await deliverer.attempt({ delivery_id: delivery!.id, attempt: 1 }), null, 'the same job again (a duplicate) does nothing')
  t.equal(receiver.requests.length, 1, 'one request')

  t.equal((await api.updateName({ project_id: project.publicId, name: 'By hand again' })).statusCode, 200)
  const second = (await deliveriesOf(db, hook.id))[1]!
  await db.updateTable('webhooks').set({ enabled: false, disabled_reason: 'turned off' }).where('id', '=', hook.id).execute()
  t.equal(await deliverer.attempt({ delivery_id: second.id, attempt: 1 }), null, 'nothing for a disabled endpoint')
  t.equal(receiver.requests.length, 1)
  t.match((await deliveriesOf(db, hook.id))[1], { status: 'pending', attempts: 0 })
})

t.test('a change that rolled back, changed nothing or was refused queues nothing', async (t) => {
  const fixture = await deliveryFixture(t)
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  const hook = await insertWebhook(db, company.id, receiver.url)

  t.equal((await api.updateName({ project_id: project.publicId, name: project.name })).statusCode, 200, 'the same name: nothing changes')
  const reader = await createPerson(db, company.id)
  const readerApi = client(fixture.app, (await tokenFor(db, reader.email)).token)
  t.equal((await readerApi.updateName({ project_id: project.publicId, name: 'Not theirs' })).statusCode, 404, 'someone who may not see it')
  const readOnly = client(fixture.app, (await tokenFor(db, fixture.person.email, { readOnly: true })).token)
  t.equal((await readOnly.updateName({ project_id: project.publicId, name: 'Read only' })).statusCode, 403)

  // A change whose statement fails after writing (a trigger refuses the row): all of it rolls back.
  await sql`CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.name = 'Doomed' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`.execute(db)
  await sql`CREATE TRIGGER refuse_doomed AFTER UPDATE ON projects FOR EACH ROW EXECUTE FUNCTION refuse_doomed()`.execute(db)
  t.ok((await api.updateName({ project_id: project.publicId, name: 'Doomed' })).statusCode >= 500, 'the statement failed')
  t.equal((await db.selectFrom('projects').select('name').where('id', '=', project.id).executeTakeFirstOrThrow()).name, project.name)

  t.same(await deliveriesOf(db, hook.id), [], 'no delivery')
  t.same(await deliveryJobs(db), [], 'no job')
  t.same(await projectActivities(db, project.id), [], 'no activity')
  await startWorker(t, db, fixture.config)
  t.equal((await api.updateName({ project_id: project.publicId, name: 'Finally' })).statusCode, 200, 'a change that commits')
  t.ok(await receiver.waitForRequests(1))
  t.equal(JSON.parse(receiver.requests[0]!.body).data.change.new_name, 'Finally', 'is the only event')
  t.equal(receiver.requests.length, 1)
})
