// Several workers share the deliveries without doubling any: two sets of delivery
// workers, each on a connection pool of its own (on PostgreSQL; two on the one
// embedded database otherwise), take the jobs of many changes at once, and every
// event reaches every endpoint exactly once. And a job engine statement that fails
// does not take the process down.
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import t from '../tap.js'
import { waitFor } from '../helper.js'
import { createDb, dbOptions, type Db } from '../../src/db/index.js'
import { loadConfig } from '../../src/config.js'
import { captureLog, deliveriesOf, deliveryFixture, deliveryJobs, insertWebhook, startReceiver, startWorker, waitForDeliveries } from './support.js'

const EVENTS = 30

t.test(`two workers deliver ${EVENTS} events to two endpoints, each exactly once`, async (t) => {
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_WORKER_CONCURRENCY: '3' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  // A receiver that takes a moment, so that the work overlaps.
  receiver.answer(async () => { await sleep(20); return { status: 200 } })
  const hooks = [await insertWebhook(db, company.id, receiver.url), await insertWebhook(db, company.id, receiver.url)]

  // The second worker's own pool on the same database, as another process would have.
  let other: Db = db
  if (fixture.url !== undefined) {
    other = await createDb(dbOptions(loadConfig({ DATABASE_URL: fixture.url })))
    t.teardown(() => other.destroy())
  }
  const logs = [captureLog(), captureLog()]
  await startWorker(t, db, fixture.config, logs[0]!.log)
  await startWorker(t, other, fixture.config, logs[1]!.log)

  for (let i = 0; i < EVENTS; i++) {
    t.equal((await api.updateName({ project_id: project.publicId, name: `Name ${i}` })).statusCode, 200)
  }
  for (const hook of hooks) {
    t.ok(await waitForDeliveries(db, hook.id, (rows) => rows.length === EVENTS && rows.every((r) => r.status === 'delivered'), 60_000),
      'every delivery of the endpoint is delivered')
    t.ok((await deliveriesOf(db, hook.id)).every((r) => r.attempts === 1), 'each at its first attempt')
  }
  // A duplicate would be a job still to run: wait until every delivery job has run.
  t.ok(await waitFor(async () => (await deliveryJobs(db)).every((job) => !['created', 'retry', 'active'].includes(job.state)), 60_000), 'no job left to run')
  t.equal(receiver.requests.length, EVENTS * hooks.length, 'one request per event and endpoint')
  const ids = receiver.requests.map((r) => r.headers['webhook-id'])
  t.equal(new Set(ids).size, EVENTS, `${EVENTS} distinct events`)
  for (const id of new Set(ids)) t.equal(ids.filter((x) => x === id).length, hooks.length, `event ${id}: once per endpoint`)
  const names = receiver.requests.map((r) => JSON.parse(r.body).data.change.new_name as string)
  t.same([...new Set(names)].sort(), Array.from({ length: EVENTS }, (_, i) => `Name ${i}`).sort(), 'every change arrived')

  const shares = logs.map(({ lines }) => lines.filter((l) => l.msg === 'webhook delivered').length)
  t.equal(shares[0]! + shares[1]!, EVENTS * hooks.length, 'each delivery logged by the one worker that made it')
  t.ok(shares.every((n) => n > 0), `both workers took part (${shares.join(' + ')})`)
  t.same((await deliveryJobs(db)).filter((j) => j.state !== 'completed'), [], 'every job completed')
})

t.test('a failure as the job engine marks a job done does not take the process down; the job runs again and sends nothing more', async (t) => {
  // Crash recovery within seconds: jobs expire after 5 s.
  const fixture = await deliveryFixture(t, { env: { WEBHOOKS_JOB_EXPIRY_SECONDS: '5', WEBHOOKS_ATTEMPT_TIMEOUT_MS: '3000', DB_STATEMENT_TIMEOUT_MS: '1000' } })
  const { db, api, company, project } = fixture
  const receiver = await startReceiver(t)
  const hook = await insertWebhook(db, company.id, receiver.url)
  // The database refuses to mark a job completed, as if it went away at that moment.
  await sql`CREATE FUNCTION refuse_completion() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.state = 'completed' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`.execute(db)
  await sql`CREATE TRIGGER refuse_completion BEFORE UPDATE ON pgboss.job FOR EACH ROW EXECUTE FUNCTION refuse_completion()`.execute(db)
  const { log, lines } = captureLog()
  await startWorker(t, db, fixture.config, log)

  t.equal((await api.updateName({ project_id: project.publicId, name: 'Completed twice' })).statusCode, 200)
  t.ok(await waitForDeliveries(db, hook.id, ([row]) => row?.status === 'delivered'), 'delivered and recorded')
  t.ok(await waitFor(() => lines.some((l) => l.msg === 'webhook job engine error'), 10_000), 'the failure to complete the job is logged')
  t.match(await deliveryJobs(db), [{ state: 'active' }], 'the job is still active')
  // The workers keep locking the job table's partitions meanwhile, and the DROP locks
  // the table then each partition: PostgreSQL may find the two deadlocked and abort
  // the DROP (40P01), which is then tried again.
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`DROP TRIGGER refuse_completion ON pgboss.job`.execute(db)
      break
    } catch (error) {
      if ((error as { code?: unknown }).code !== '40P01' || attempt === 5) throw error
    }
  }

  t.ok(await waitFor(async () => (await deliveryJobs(db))[0]?.state === 'completed', 30_000), 'expired, run again, and completed')
  t.ok(lines.some((l) => l.msg === 'webhook delivery: nothing to do for this job' && l.attempt === 1), 'the second run found its attempt made')
  t.equal(receiver.requests.length, 1, 'one request')
  t.match(await deliveriesOf(db, hook.id), [{ status: 'delivered', attempts: 1 }])
})
