// When delivery workers look for jobs. A process's workers are told of the jobs its
// own changes queue and of the retries its own attempts schedule, and fetch those
// then; for any others they look at a pace: the API process once a second, which
// keeps an idle embedded database idle, `npm run worker` ten times a second.
import { setTimeout as sleep } from 'node:timers/promises'
import type { LogEvent } from 'kysely'
import pino from 'pino'
import t from '../tap.js'
import { deliveryWorkerOptions, POLLING_TURN_MS, TOLD_TURN_MS } from '../../src/webhooks/worker.js'
import { waitFor } from '../helper.js'
import { deliveriesOf, deliveryFixture, insertWebhook, startReceiver, startWorker, waitForDeliveries, type Received } from './support.js'

/** Workers that look for jobs nobody told them of once a minute: only being told finds a job within seconds. */
const MINUTE = 60_000

t.test('a change\'s delivery is fetched as the change queues it, not at the next look', async (t) => {
  const fixture = await deliveryFixture(t)
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  const hook = await insertWebhook(db, company.id, receiver.url)
  await startWorker(t, db, fixture.config, undefined, { turnMs: MINUTE })
  // Past the look every worker makes as it starts.
  await sleep(500)

  const changed = Date.now()
  t.equal((await api.updateName({ project_id: project.publicId, name: 'Told at once' })).statusCode, 200)
  t.ok(await receiver.waitForRequests(1, 30_000), 'the receiver got the event within seconds')
  t.ok(receiver.requests[0]!.at - changed < 5000, `${receiver.requests[0]!.at - changed} ms after the change`)
  t.equal(JSON.parse(receiver.requests[0]!.body).data.change.new_name, 'Told at once')
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'delivered', 30_000), 'recorded as delivered')

  // Three endpoints: one change queues three jobs, and three idle workers are told.
  const more = [await insertWebhook(db, company.id, receiver.url), await insertWebhook(db, company.id, receiver.url)]
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Told' }] }] })
  t.equal((await api.updateDescription({ project_id: project.publicId, description })).statusCode, 200)
  t.ok(await receiver.waitForRequests(4, 30_000), 'each endpoint got the description change within seconds')
  for (const { id } of [hook, ...more]) {
    t.ok(await waitForDeliveries(db, id, (rows) => rows.some((r) => r.event_type === 'project.description_changed' && r.status === 'delivered'), 30_000))
  }
})

t.test('a retry is attempted at its time, not at the next look', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '1' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  receiver.answer((r) => r.index === 0 ? { status: 503, body: 'not now' } : { status: 204 })
  const hook = await insertWebhook(db, company.id, receiver.url)
  await startWorker(t, db, fixture.config, undefined, { turnMs: MINUTE })
  await sleep(500)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Retried on time' })).statusCode, 200)
  t.ok(await receiver.waitForRequests(2, 30_000), 'the second attempt came within seconds')
  const [first, second] = receiver.requests as [Received, Received]
  const gap = second.at - first.at
  // The schedule's 1 s, jittered by up to ±20 %: not sooner, and not a look later.
  t.ok(gap >= 700 && gap < 4000, `the retry came ${gap} ms after the first attempt`)
  t.equal(second.headers['webhook-id'], first.headers['webhook-id'])
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'delivered', 30_000))
  t.match((await deliveriesOf(db, hook.id))[0], { status: 'delivered', attempts: 2, last_status_code: 204 })
})

t.test('the API process looks for jobs it was not told of once a second, npm run worker ten times a second', async (t) => {
  for (const told of [true, false]) {
    // Every statement the job engine sends goes through the app's database: the looks are counted there.
    const looks: number[] = []
    const fixture = await deliveryFixture(t, {
      log: (event: LogEvent) => { if (/FOR UPDATE SKIP LOCKED/.test(event.query.sql) && /pgboss/.test(event.query.sql)) looks.push(Date.now()) }
    })
    const options = deliveryWorkerOptions(fixture.config, pino({ level: 'silent' }), { told })
    t.equal(options.turnMs, told ? TOLD_TURN_MS : POLLING_TURN_MS)
    const worker = await startWorker(t, fixture.db, fixture.config, undefined, { turnMs: options.turnMs })
    // The worker runs with that turn, and keeps looking on an empty queue, turn after turn.
    const from = looks.length
    t.ok(await waitFor(() => looks.length >= from + 3, 60_000), `${told ? "the API process's" : "npm run worker's"} workers keep looking on an empty queue`)
    await worker.stop(Date.now() + 5000)
  }
})
