// Delivery across real processes (test/launch.ts): the server killed with SIGKILL
// while its receiver holds the request, and the event delivered again later by
// another process with the same webhook-id (crash recovery: the job expires and
// runs again; WEBHOOKS_JOB_EXPIRY_SECONDS=5 here instead of a minute); SIGTERM
// letting a delivery in flight finish, or handing it back past the deadline;
// `npm run worker` on PostgreSQL, and refusing the embedded database; the loud
// line when private targets are allowed.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Webhook } from 'standardwebhooks'
import t from '../tap.js'
import { createDb, type Db } from '../../src/db/index.js'
import { shortId } from '../../src/ids.js'
import { PRIVATE_TARGETS_WARNING } from '../../src/webhooks/deliver.js'
import { EMBEDDED_REFUSAL } from '../../src/webhooks/worker.js'
import { createMigratedDb, createTestDatabase, databaseOptions } from '../database.js'
import { createCompany, createPerson, createProject, createSpace, projectActivities, tokenFor, waitFor } from '../helper.js'
import { send } from '../http.js'
import { launchServer, type ServerProcess } from '../launch.js'
import { deliveriesOf, deliveryJobs, insertWebhook, startReceiver, type Receiver } from './support.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const WORKER = ['--import=tsx', 'src/worker.ts']
const needsPostgres = process.env.DATABASE_URL ? false : 'needs PostgreSQL (set DATABASE_URL): a second process on the same database'

/** Settings every process here runs with: short crash recovery, loopback receivers. */
const ENV = {
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOKS_JOB_EXPIRY_SECONDS: '5',
  WEBHOOKS_ATTEMPT_TIMEOUT_MS: '3000',
  DB_STATEMENT_TIMEOUT_MS: '1000',
  RATE_LIMIT_MAX: '0',
  LOG_LEVEL: 'info'
}

interface Scene { projectId: string, publicId: string, token: string, hook: { id: string, secret: string } }

/** A company whose admin may rename a project, and an endpoint at the receiver. */
async function scene (db: Db, receiver: Receiver): Promise<Scene> {
  const company = await createCompany(db)
  const person = await createPerson(db, company.id, { isAdmin: true })
  const space = await createSpace(db, company.id, [person.id])
  const project = await createProject(db, space, { access: { space: 70 } })
  const { token } = await tokenFor(db, person.email)
  const hook = await insertWebhook(db, company.id, receiver.url)
  return { projectId: project.id, publicId: project.publicId, token, hook }
}

async function rename (server: ServerProcess, s: Scene, name: string): Promise<void> {
  const answer = await send(server.port, 'POST', '/api/external/v1/projects/update_name', { token: s.token, body: { project_id: s.publicId, name } })
  if (answer.status !== 200) throw new Error(`rename: ${answer.status} ${answer.body}`)
}

function logLines (server: ServerProcess): Array<Record<string, unknown>> {
  return server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
}

/** The receiver's two requests are one event, sent twice, each verifying with the secret. */
function sameEvent (t: Tap, receiver: Receiver, s: Scene, eventId: string): void {
  const [first, second] = receiver.requests
  t.equal(first?.headers['webhook-id'], shortId(eventId))
  t.equal(second?.headers['webhook-id'], first?.headers['webhook-id'], 'delivered again with the same webhook-id')
  t.equal(second?.body, first?.body, 'and the same body')
  t.doesNotThrow(() => new Webhook(s.hook.secret).verify(second!.body, second!.headers), 'signed')
}

t.test('PostgreSQL: the server killed mid-delivery, the event is delivered again by a worker process', { skip: needsPostgres }, async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  const { db, url } = database
  const receiver = await startReceiver(t)
  receiver.answer((r) => r.index === 0 ? 'hang' : { status: 200 })
  const s = await scene(db, receiver)
  const env = { ...ENV, DATABASE_URL: url! }

  const killed = await launchServer({ t, env })
  t.match(logLines(killed).find((l) => l.msg === PRIVATE_TARGETS_WARNING), { level: 40 }, 'the private-targets setting is said at start, as a warning')
  await rename(killed, s, 'Killed mid-delivery')
  t.ok(await receiver.waitForRequests(1), 'the receiver holds the first request')
  killed.child.kill('SIGKILL')
  t.equal(await killed.exited, null, 'killed')
  t.match(await deliveriesOf(db, s.hook.id), [{ status: 'pending', attempts: 0 }], 'nothing recorded')
  t.match(await deliveryJobs(db), [{ state: 'active' }], 'its job left active')

  const worker = await launchServer({ t, env, entry: WORKER, waitUntil: 'started' })
  t.ok(await receiver.waitForRequests(2, 60_000), 'delivered again, after the job expired')
  t.ok(await waitFor(async () => (await deliveriesOf(db, s.hook.id))[0]?.status === 'delivered', 10_000))
  t.match(await deliveriesOf(db, s.hook.id), [{ status: 'delivered', attempts: 1, last_status_code: 200 }])
  const [activity] = await projectActivities(db, s.projectId)
  sameEvent(t, receiver, s, activity!.id)
  t.equal(await worker.stop(), 0, 'the worker stops cleanly on SIGTERM')
  t.ok(logLines(worker).some((l) => l.msg === 'webhook delivered' && l.attempt === 1), 'the worker logged the delivery')
  t.equal(receiver.requests.length, 2)
})

t.test('embedded database: the server killed mid-delivery, the event is delivered again by the next server on the directory', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'webhooks-crash-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const receiver = await startReceiver(t)
  receiver.answer((r) => r.index === 0 ? 'hang' : { status: 200 })
  const open = async () => createDb({ ...databaseOptions(), dataDir })
  let db = await createMigratedDb(dataDir)
  const s = await scene(db, receiver)
  await db.destroy()
  const env = { ...ENV, DATA_DIR: dataDir }

  const killed = await launchServer({ t, env })
  await rename(killed, s, 'Killed mid-delivery')
  t.ok(await receiver.waitForRequests(1), 'the receiver holds the first request')
  killed.child.kill('SIGKILL')
  await killed.exited

  const next = await launchServer({ t, env })
  t.ok(await receiver.waitForRequests(2, 60_000), 'delivered again by the next server')
  t.ok(await waitFor(() => logLines(next).some((l) => l.msg === 'webhook delivered'), 10_000))
  t.equal(await next.stop(), 0)
  db = await open()
  t.teardown(() => db.destroy())
  t.match(await deliveriesOf(db, s.hook.id), [{ status: 'delivered', attempts: 1, last_status_code: 200 }])
  const [activity] = await projectActivities(db, s.projectId)
  sameEvent(t, receiver, s, activity!.id)
})

t.test('SIGTERM with a delivery in flight: it finishes and is recorded, then the process exits 0', async (t) => {
  const receiver = await startReceiver(t)
  let release: () => void = () => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  receiver.answer(async () => { await released; return { status: 200 } })
  // The suite's database: PostgreSQL when DATABASE_URL is set, else an embedded one
  // (opened here only while the server is not running).
  let env: Record<string, string>
  let db: Db
  let open: () => Promise<Db>
  if (process.env.DATABASE_URL) {
    const database = await createTestDatabase()
    t.teardown(() => database.close())
    env = { DATABASE_URL: database.url! }
    db = database.db
    open = async () => database.db
  } else {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'webhooks-sigterm-'))
    t.teardown(() => rm(dataDir, { recursive: true, force: true }))
    env = { DATA_DIR: dataDir }
    db = await createMigratedDb(dataDir)
    open = async () => await createDb({ ...databaseOptions(), dataDir })
  }
  const s = await scene(db, receiver)
  if (!process.env.DATABASE_URL) await db.destroy()

  const server = await launchServer({ t, env: { ...ENV, ...env } })
  await rename(server, s, 'Finishing')
  t.ok(await receiver.waitForRequests(1))
  server.child.kill('SIGTERM')
  t.ok(await waitFor(() => logLines(server).some((l) => l.msg === 'shutting down'), 10_000), 'shutting down')
  release()
  t.equal(await server.exitWithin(20_000), 0, 'exit 0')
  if (!process.env.DATABASE_URL) {
    db = await open()
    t.teardown(() => db.destroy())
  }
  t.match(await deliveriesOf(db, s.hook.id), [{ status: 'delivered', attempts: 1, last_status_code: 200 }], 'the delivery in flight finished and was recorded')
  t.match(logLines(server).find((l) => l.msg === 'webhook delivery worker stopped'), { handed_back: 0 })
  t.same((await deliveryJobs(db)).map((j) => j.state), ['completed'])
  t.equal(receiver.requests.length, 1)
})

t.test('SIGTERM past the deadline hands the delivery back; a worker process delivers it later', { skip: needsPostgres }, async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  const { db, url } = database
  const receiver = await startReceiver(t)
  receiver.answer((r) => r.index === 0 ? 'hang' : { status: 200 })
  const s = await scene(db, receiver)
  // The attempt's own bound (4 s) outlasts the shutdown's (2 s).
  const env = { ...ENV, DATABASE_URL: url!, SHUTDOWN_TIMEOUT_MS: '2000', WEBHOOKS_ATTEMPT_TIMEOUT_MS: '4000', DB_STATEMENT_TIMEOUT_MS: '500' }

  const server = await launchServer({ t, env })
  await rename(server, s, 'Handed back')
  t.ok(await receiver.waitForRequests(1))
  server.child.kill('SIGTERM')
  t.equal(await server.exitWithin(10_000), 0, 'exit 0 within the shutdown deadline')
  t.match(logLines(server).find((l) => l.msg === 'webhook delivery worker stopped'), { handed_back: 1 })
  t.match(await deliveriesOf(db, s.hook.id), [{ status: 'pending', attempts: 0, last_error: null }], 'no attempt recorded: its outcome is unknown')
  t.match(await deliveryJobs(db), [{ state: 'retry' }], 'its job is up for another run')

  const worker = await launchServer({ t, env, entry: WORKER, waitUntil: 'started' })
  t.ok(await receiver.waitForRequests(2, 30_000), 'delivered again')
  t.ok(await waitFor(async () => (await deliveriesOf(db, s.hook.id))[0]?.status === 'delivered', 10_000))
  const [activity] = await projectActivities(db, s.projectId)
  sameEvent(t, receiver, s, activity!.id)
  t.equal(await worker.stop(), 0)
})

t.test('npm run worker: a bad setting stops it with the line naming it, before any database is opened', async (t) => {
  const worker = await launchServer({ t, entry: WORKER, waitUntil: 'started', env: { WEBHOOKS_WORKER_CONCURRENCY: '0', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' } })
  t.equal(await worker.exitWithin(30_000), 2, 'exit 2: a configuration error')
  t.equal(worker.output().trim(), 'invalid configuration:\n  WEBHOOKS_WORKER_CONCURRENCY="0": must be at least 1')
})

t.test('npm run worker: refuses the embedded database with a message saying the API delivers there; quiet about private targets when they are not allowed', async (t) => {
  const refused = await launchServer({ t, entry: WORKER, waitUntil: 'started', env: { DATA_DIR: path.join(tmpdir(), 'never-made') } })
  t.equal(await refused.exitWithin(30_000), 2, 'exit 2: a configuration error')
  t.equal(refused.output().trim(), EMBEDDED_REFUSAL)
  t.match(EMBEDDED_REFUSAL, /DATABASE_URL/)
  t.match(EMBEDDED_REFUSAL, /API process delivers webhooks itself \(WEBHOOKS_WORKER=true/)

  if (needsPostgres) return
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  const worker = await launchServer({ t, entry: WORKER, waitUntil: 'started', env: { DATABASE_URL: database.url!, LOG_LEVEL: 'info' } })
  t.ok(await waitFor(() => logLines(worker).some((l) => l.msg === 'webhook delivery worker started'), 30_000), 'started')
  t.notOk(worker.output().includes('WEBHOOKS_ALLOW_PRIVATE_TARGETS'), 'no warning when private targets are not allowed')
  t.equal(await worker.stop(), 0)
})
