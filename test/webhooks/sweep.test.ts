// Stranded deliveries (src/webhooks/sweep.ts): a pending delivery whose job will
// never run again (failed in pg-boss after its retries, gone, or active past its
// expiry with no retry left, as a worker that crashed mid-attempt each time leaves
// it) is counted in webhooks/list_deliveries, swept when the delivery workers
// start and then periodically: its lost attempt recorded, the next one queued
// and delivered to the receiver, or the delivery failed when its retry schedule
// is spent. A delivery whose job is live is none of this, and two sweeps at once
// take each stranded delivery once.
import { sql } from 'kysely'
import type { Test } from 'tap'
import t from '../tap.js'
import { pino } from 'pino'
import type { Db } from '../../src/db/index.js'
import { shortId } from '../../src/ids.js'
import { LOST_ATTEMPT, sweepStrandedDeliveries } from '../../src/webhooks/sweep.js'
import { captureLog, deliveriesOf, deliveryFixture, deliveryJobs, insertWebhook, startReceiver, startWorker, waitForDeliveries } from './support.js'

// Three attempts at most; retries 0.1 s apart.
const SCHEDULE = '0.1,0.1'

/** The job of a delivery's next attempt, made what a crash loop leaves: failed, gone, or active long past its expiry with no retry left. */
async function strand (db: Db, deliveryId: string, how: 'failed' | 'gone' | 'expired'): Promise<void> {
  const job = sql`name = 'webhook-delivery' AND data->>'delivery_id' = ${deliveryId}`
  if (how === 'gone') {
    await sql`DELETE FROM pgboss.job WHERE ${job}`.execute(db)
    return
  }
  await sql`UPDATE pgboss.job SET retry_count = retry_limit, started_on = now() - 2 * expire_in,
    state = ${how === 'failed' ? 'failed' : 'active'}::pgboss.job_state,
    completed_on = ${how === 'failed' ? sql`now()` : null}
    WHERE ${job}`.execute(db)
}

/** Four renames, so four deliveries to the endpoint, oldest first. */
async function fourDeliveries (t: Test, fixture: Awaited<ReturnType<typeof deliveryFixture>>, hookId: string) {
  for (const name of ['One', 'Two', 'Three', 'Four']) {
    t.equal((await fixture.api.updateName({ project_id: fixture.project.publicId, name })).statusCode, 200)
  }
  const rows = await deliveriesOf(fixture.db, hookId)
  t.equal(rows.length, 4)
  return rows
}

t.test('stranded deliveries are counted, swept when the workers start, and delivered; one with no retry left fails', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: SCHEDULE } })
  const { db, api, company } = fixture
  const receiver = await startReceiver(t)
  const hook = await insertWebhook(db, company.id, receiver.url)
  const [failed, gone, expired, live] = await fourDeliveries(t, fixture, hook.id)
  await strand(db, failed!.id, 'failed')
  await strand(db, gone!.id, 'gone')
  await strand(db, expired!.id, 'expired')
  // Its first attempt made and the second lost too: the schedule's last.
  await sql`UPDATE webhook_deliveries SET attempts = 2 WHERE id = ${live!.id}`.execute(db)
  const spent = await db.insertInto('pgboss.job').values({
    name: 'webhook-delivery', data: JSON.stringify({ delivery_id: live!.id, attempt: 3 }), state: 'failed', policy: 'standard'
  }).returning('id').executeTakeFirstOrThrow()
  await sql`DELETE FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'delivery_id' = ${live!.id} AND id <> ${spent.id}`.execute(db)

  const before = await api.listDeliveries({ webhook_id: shortId(hook.id), limit: '1' })
  t.equal(before.statusCode, 200, before.body)
  t.equal(before.json().deliveries.length, 1, 'a page of one')
  t.equal(before.json().stranded, 4, 'all four stranded, counted over every delivery of the endpoint, not the page')

  const { log, lines } = captureLog()
  await startWorker(t, db, fixture.config, log)
  t.ok(await waitForDeliveries(db, hook.id, (rows) => rows.filter((r) => r.status === 'delivered').length === 3 && rows.some((r) => r.status === 'failed')),
    'three delivered, one failed')
  const after = new Map((await deliveriesOf(db, hook.id)).map((r) => [r.id, r]))
  for (const row of [failed!, gone!, expired!]) {
    t.match(after.get(row.id), { status: 'delivered', attempts: 2, last_status_code: 200, last_error: null }, 'the lost attempt counted, the next delivered')
  }
  t.match(after.get(live!.id), { status: 'failed', attempts: 3, last_status_code: null, last_error: LOST_ATTEMPT, next_attempt_at: null },
    'no retry left: failed, saying why')
  t.equal(receiver.requests.length, 3, 'one request per delivered event')
  t.same(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 3, 'three distinct events')
  t.match(lines.find((l) => /stranded/.test(String(l.msg))), { level: 40, requeued: 3, failed: 1 }, 'the sweep is logged, once')
  t.equal(lines.filter((l) => /stranded/.test(String(l.msg))).length, 1)

  const listed = await api.listDeliveries({ webhook_id: shortId(hook.id) })
  t.equal(listed.json().stranded, 0, 'none stranded after the sweep')
  // The expired job stays active until pg-boss's maintenance fails it: it no longer counts.
  t.same((await deliveryJobs(db)).filter((j) => ['created', 'retry', 'active'].includes(j.state)).map((j) => ({ state: j.state, data: j.data })),
    [{ state: 'active', data: { delivery_id: expired!.id, attempt: 1 } }], 'no job left waiting')
})

t.test('a delivery whose job is live is not stranded; a disabled endpoint\'s are not taken up', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: SCHEDULE } })
  const { db, api, company, project } = fixture
  const hook = await insertWebhook(db, company.id, 'http://127.0.0.1:9/hooks')
  const off = await insertWebhook(db, company.id, 'http://127.0.0.1:9/off')
  t.equal((await api.updateName({ project_id: project.publicId, name: 'Waiting' })).statusCode, 200)
  // A job waiting, one taken by a worker (active, within its expiry), and one
  // active past its expiry but with retries left: pg-boss runs each again.
  const [waiting] = await deliveriesOf(db, hook.id)
  t.equal((await api.listDeliveries({ webhook_id: shortId(hook.id) })).json().stranded, 0, 'created: live')
  await sql`UPDATE pgboss.job SET state = 'active', started_on = now() WHERE data->>'delivery_id' = ${waiting!.id}`.execute(db)
  t.equal((await api.listDeliveries({ webhook_id: shortId(hook.id) })).json().stranded, 0, 'active: live')
  await sql`UPDATE pgboss.job SET started_on = now() - 2 * expire_in, retry_count = retry_limit - 1 WHERE data->>'delivery_id' = ${waiting!.id}`.execute(db)
  t.equal((await api.listDeliveries({ webhook_id: shortId(hook.id) })).json().stranded, 0, 'expired with a retry left: live')
  await sql`UPDATE pgboss.job SET retry_count = retry_limit WHERE data->>'delivery_id' = ${waiting!.id}`.execute(db)
  t.equal((await api.listDeliveries({ webhook_id: shortId(hook.id) })).json().stranded, 1, 'expired with no retry left: stranded')

  // The disabled endpoint's delivery, its job gone: nothing will send to it, by design.
  const [offDelivery] = await deliveriesOf(db, off.id)
  await sql`UPDATE webhooks SET enabled = false, disabled_reason = 'by the test' WHERE id = ${off.id}`.execute(db)
  await strand(db, offDelivery!.id, 'gone')
  t.equal((await api.listDeliveries({ webhook_id: shortId(off.id) })).json().stranded, 0, 'a disabled endpoint has none stranded')
  const { swept } = await sweepStrandedDeliveries(db, fixture.config.WEBHOOKS_RETRY_SCHEDULE, pino({ level: 'silent' }))
  t.same(swept.map((d) => d.id), [waiting!.id], 'only the enabled endpoint\'s stranded delivery is swept')
  t.match(await deliveriesOf(db, off.id), [{ status: 'pending', attempts: 0 }], 'the disabled endpoint\'s is left as it was')
})

t.test('two sweeps at once take each stranded delivery once', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: '60' } })
  const { db, company } = fixture
  const hook = await insertWebhook(db, company.id, 'http://127.0.0.1:9/hooks')
  const rows = await fourDeliveries(t, fixture, hook.id)
  for (const row of rows) await strand(db, row.id, 'failed')
  const silent = pino({ level: 'silent' })
  const results = await Promise.all([
    sweepStrandedDeliveries(db, fixture.config.WEBHOOKS_RETRY_SCHEDULE, silent),
    sweepStrandedDeliveries(db, fixture.config.WEBHOOKS_RETRY_SCHEDULE, silent)
  ])
  t.same(results.flatMap((r) => r.swept.map((d) => d.id)).sort(), rows.map((r) => r.id).sort(), 'each once')
  t.match(await deliveriesOf(db, hook.id), rows.map(() => ({ status: 'pending', attempts: 1, last_error: LOST_ATTEMPT, next_attempt_at: Date })))
  const jobs = (await deliveryJobs(db)).filter((j) => j.state === 'created')
  t.same(jobs.map((j) => j.data).sort((a, b) => String(a.delivery_id).localeCompare(String(b.delivery_id))),
    rows.map((r) => ({ delivery_id: r.id, attempt: 2 })).sort((a, b) => a.delivery_id.localeCompare(b.delivery_id)), 'one job each, for the next attempt')
  t.equal((await fixture.api.listDeliveries({ webhook_id: shortId(hook.id) })).json().stranded, 0)
})

t.test('a running worker sweeps again periodically', async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_RETRY_SCHEDULE: SCHEDULE } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  const hook = await insertWebhook(db, company.id, receiver.url)
  // A delivery whose job is live when the workers start (due in an hour: the
  // sweep at start leaves it), and stranded while they run.
  t.equal((await api.updateName({ project_id: project.publicId, name: 'Later' })).statusCode, 200)
  const [row] = await deliveriesOf(db, hook.id)
  await sql`UPDATE pgboss.job SET start_after = now() + interval '1 hour' WHERE data->>'delivery_id' = ${row!.id}`.execute(db)
  const { log, lines } = captureLog()
  await startWorker(t, db, fixture.config, log, { sweepIntervalMs: 200 })
  t.ok(lines.some((l) => l.msg === 'webhook delivery worker started'))
  t.notOk(lines.some((l) => /stranded/.test(String(l.msg))), 'nothing stranded at start')
  await strand(db, row!.id, 'failed')
  t.ok(await waitForDeliveries(db, hook.id, ([r]) => r?.status === 'delivered'), 'swept by a later sweep, and delivered')
  t.match(await deliveriesOf(db, hook.id), [{ attempts: 2, last_status_code: 200 }])
  t.equal(receiver.requests.length, 1)
})
