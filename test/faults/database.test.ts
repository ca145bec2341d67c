// Database faults seen from outside, over real HTTP: the database vanishes and
// comes back on the same port, its backends are terminated, a statement outlives
// DB_STATEMENT_TIMEOUT_MS, a connection outlives DB_CONNECTION_TIMEOUT_MS, the
// database refuses connections, the role's connection limit is reached, the
// database turns read-only (as after a failover to a standby), a privilege is
// revoked. Each time the API answers 503 unavailable with Retry-After (never a
// 500, never a request left hanging; reads go on where the database still reads),
// /health/ready is 503, the API recovers by itself, and every acknowledged write
// is in the database.
import { Agent } from 'node:http'
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import pg from 'pg'
import t from '../tap.js'
import { createDb, dbOptions, type Db } from '../../src/db/index.js'
import { createTestDatabase, type TestDatabase } from '../database.js'
import { send, type Answer } from '../http.js'
import { build, grantServicePrivileges, projectActivities, projectRow, seedWriters, testConfig, waitFor, type Seeded, type Writer } from '../helper.js'
import { listen } from '../launch.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const skip = process.env.DATABASE_URL
  ? false
  : 'needs a real PostgreSQL server (set DATABASE_URL): the faults are a TCP proxy in front of it, backends killed with pg_terminate_backend and a row lock held from a second connection'

const database = skip ? undefined : await createTestDatabase()
if (database) t.teardown(() => database.close())

const UPDATE_NAME = '/api/external/v1/projects/update_name'
const UNAVAILABLE = { statusCode: 503, error: 'Service Unavailable', code: 'unavailable' }
/** Clients wait this long after a refusal, as a client honouring Retry-After would (scaled down). */
const BACKOFF_MS = 50

/**
 * A TCP proxy in front of PostgreSQL that the test can take away (stop listening,
 * drop every connection) and bring back on the same port. In `silent` mode it
 * accepts connections and never answers, like a host that has stopped responding.
 */
class TcpProxy {
  port = 0
  accepted = 0
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()

  constructor (private readonly target: { host: string, port: number } | 'silent') {}

  async start (): Promise<void> {
    const server = createServer((client) => {
      this.accepted++
      this.track(client)
      if (this.target === 'silent') return
      const upstream = connect(this.target.port, this.target.host)
      this.track(upstream)
      const drop = () => { client.destroy(); upstream.destroy() }
      for (const socket of [client, upstream]) socket.on('error', drop).on('close', drop)
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as AddressInfo).port
    this.server = server
  }

  async stop (): Promise<void> {
    const server = this.server
    this.server = undefined
    const closed = new Promise<void>((resolve) => server ? server.close(() => resolve()) : resolve())
    for (const socket of this.sockets) socket.destroy()
    await closed
  }

  private track (socket: Socket): void {
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
  }
}

function upstreamOf (url: string): { host: string, port: number } {
  const parsed = new URL(url)
  return { host: parsed.hostname, port: Number(parsed.port || 5432) }
}

/** The test database's URL, reached through `port` when given, tagged so the app's backends can be found. */
function appUrl (url: string, applicationName: string, port?: number): string {
  const parsed = new URL(url)
  if (port !== undefined) {
    parsed.hostname = '127.0.0.1'
    parsed.port = String(port)
  }
  parsed.searchParams.set('application_name', applicationName)
  return parsed.toString()
}

interface Fixture { projects: Seeded[], writers: Writer[] }

interface Outcome extends Answer {
  project: string
  writer: number
  name: string
  started: number
  settled: number
}

/**
 * Concurrent clients renaming projects with unique names over keep-alive, until
 * stopped. Two clients (with different people's tokens) share each project, so
 * writes also meet each other's row locks.
 */
function startLoad (port: number, fixture: Fixture, clients: number, tag: string, livenessMs: number) {
  const outcomes: Outcome[] = []
  const agent = new Agent({ keepAlive: true, maxSockets: clients })
  let running = true
  const loop = async (i: number) => {
    const project = fixture.projects[i % fixture.projects.length]!
    const writer = Math.floor(i / fixture.projects.length) % fixture.writers.length
    for (let n = 1; running; n++) {
      const name = `${tag} ${i}-${n}`
      const started = Date.now()
      const answer = await send(port, 'POST', UPDATE_NAME, {
        token: fixture.writers[writer]!.token, body: { project_id: project.publicId, name }, agent, livenessMs
      })
      outcomes.push({ ...answer, project: project.id, writer, name, started, settled: Date.now() })
      if (answer.status !== 200) await sleep(BACKOFF_MS)
    }
  }
  const loops = Array.from({ length: clients }, (_, i) => loop(i))
  return {
    outcomes,
    count: (predicate: (o: Outcome) => boolean) => outcomes.filter(predicate).length,
    stop: async () => {
      running = false
      await Promise.all(loops)
      agent.destroy()
    }
  }
}

/** The app as the server builds it, on its own pool, listening on a free port; warnings and errors kept. */
async function startApp (t: Tap, url: string, env: Record<string, string>) {
  const logs: Array<{ level: number, msg?: string, err?: { type?: string, code?: string, message?: string } }> = []
  // The pool the server would open with these settings, on `url`.
  const db = await createDb(dbOptions({ ...testConfig(env), DATABASE_URL: url }))
  t.teardown(() => db.destroy())
  const { app } = await build(t, { db, env: { LOG_LEVEL: 'warn', ...env }, logStream: { write: (line: string) => { logs.push(JSON.parse(line)) } } })
  const { port } = await listen(app)
  return { port, logs }
}

/** Anything but a 200 or a 503 `unavailable` envelope with Retry-After: 1. */
function anomalies (outcomes: Outcome[]): Outcome[] {
  return outcomes.filter((o) => {
    if (o.status === 200) return false
    if (o.status !== 503 || o.retryAfter !== '1') return true
    try {
      const body = JSON.parse(o.body) as Record<string, unknown>
      return body.statusCode !== 503 || body.code !== 'unavailable' || body.error !== 'Service Unavailable' || typeof body.message !== 'string'
    } catch {
      return true
    }
  })
}

function summary (outcomes: Outcome[]): string {
  const by = new Map<string, number>()
  for (const o of outcomes) {
    const key = o.status === 0 ? String(o.error) : String(o.status)
    by.set(key, (by.get(key) ?? 0) + 1)
  }
  const slowest = Math.max(0, ...outcomes.map((o) => o.settled - o.started))
  return `${outcomes.length} requests: ${[...by].map(([k, v]) => `${v}×${k}`).join(', ')}; slowest ${slowest} ms`
}

/**
 * Reads the real database (never through the proxy): every acknowledged rename has
 * its activity, by the right person and token; the activities of each project form
 * one unbroken chain from its first name to the name in the row, so no rename was
 * lost or half-written. Returns the refused requests whose rename committed anyway.
 */
async function checkWrites (t: Tap, db: Db, fixture: Fixture, outcomes: Outcome[]): Promise<Outcome[]> {
  const committedAnyway: Outcome[] = []
  for (const project of fixture.projects) {
    const mine = outcomes.filter((o) => o.project === project.id)
    const activities = await projectActivities(db, project.id)
    const newName = (a: typeof activities[number]) => String(a.content.new_name)
    const byNew = new Map(activities.map((a) => [newName(a), a]))
    const sent = new Set(mine.map((o) => o.name))
    t.same(activities.filter((a) => a.action !== 'project_renamed' || !sent.has(newName(a))).map(newName), [],
      `${project.name}: every activity is a rename this test sent`)

    const acknowledged = mine.filter((o) => o.status === 200)
    t.same(acknowledged.filter((o) => !byNew.has(o.name)).map((o) => o.name), [],
      `${project.name}: all ${acknowledged.length} acknowledged renames have their activity`)
    t.same(acknowledged.filter((o) => {
      const activity = byNew.get(o.name)
      const writer = fixture.writers[o.writer]!
      return activity && (activity.author_id !== writer.personId || activity.token_id !== writer.tokenId)
    }).map((o) => o.name), [], `${project.name}: each activity names the person and token that asked`)

    const byOld = new Map(activities.map((a) => [String(a.content.old_name), a]))
    let current = project.name
    let steps = 0
    while (byOld.has(current) && steps <= activities.length) {
      current = newName(byOld.get(current)!)
      steps++
    }
    t.equal(steps, activities.length, `${project.name}: the ${activities.length} activities form one chain of renames`)
    t.equal((await projectRow(db, project.id)).name, current, `${project.name}: the row holds the chain's last name`)
    committedAnyway.push(...mine.filter((o) => o.status !== 200 && byNew.has(o.name)))
  }
  return committedAnyway
}

/**
 * Uncaught exceptions from here on, kept instead of ending the test process: in
 * the server each one ends the process, so a test that meets one fails on it, and
 * still reports everything else it checks.
 */
function watchCrashes (t: Tap): Error[] {
  const crashes: Error[] = []
  process.setUncaughtExceptionCaptureCallback((error) => { crashes.push(error as Error) })
  t.teardown(() => process.setUncaughtExceptionCaptureCallback(null))
  return crashes
}

function noCrash (t: Tap, crashes: Error[]): void {
  t.same(crashes.map((e) => `${(e as NodeJS.ErrnoException).code ?? e.name}: ${e.message}`), [],
    'no uncaught exception (the server process would have died)')
}

function explainCommittedAnyway (t: Tap, committed: Outcome[]): void {
  // A rename commits in its own statement and the project is then read back on a
  // pool connection: when the connection drops between the commit and the answer
  // (the commit's reply lost, or the read-back failing), the client is told 503
  // although the rename is in. It is whole (the chain check covers it); a client
  // that retries sets the same name again and is answered 200 with nothing new written.
  for (const o of committed) t.comment(`refused with ${o.status || o.error} but committed: "${o.name}" (connection lost after the commit)`)
}

t.test('the database vanishes and comes back on the same port: 503 while away, service resumes by itself', { skip }, async (t) => {
  const crashes = watchCrashes(t)
  const db = database!.db
  const fixture = await seedWriters(db, 4)
  const proxy = new TcpProxy(upstreamOf(database!.url!))
  await proxy.start()
  t.teardown(() => proxy.stop())
  const connectionTimeoutMs = 1000
  const livenessMs = 10 * connectionTimeoutMs
  const api = await startApp(t, appUrl(database!.url!, 'faults-vanish', proxy.port), {
    DB_CONNECTION_TIMEOUT_MS: String(connectionTimeoutMs), DB_POOL_SIZE: '4'
  })
  const load = startLoad(api.port, fixture, 8, 'vanish', livenessMs)
  t.teardown(() => load.stop())

  t.ok(await waitFor(() => load.count((o) => o.status === 200) >= 40, 20_000), 'renames succeed before the outage')

  const outageAt = Date.now()
  const port = proxy.port
  await proxy.stop()
  // Away for at least a second: long enough for every client to meet it, and for
  // connection attempts (refused at once) to pile up.
  t.ok(await waitFor(() => Date.now() - outageAt >= 1000 && load.count((o) => o.started >= outageAt && o.status === 503) >= 20, 20_000),
    'requests during the outage are answered 503')
  const ready = await send(api.port, 'GET', '/health/ready', { livenessMs })
  t.equal(ready.status, 503, '/health/ready is 503 while the database is away')
  t.equal(ready.retryAfter, '1')
  t.match(JSON.parse(ready.body), UNAVAILABLE)
  t.equal((await send(api.port, 'GET', '/health/live', { livenessMs })).status, 200, 'the process is up')

  const backAt = Date.now()
  await proxy.start()
  t.equal(proxy.port, port, 'the database is back on the same port')
  t.ok(await waitFor(() => load.count((o) => o.started >= backAt && o.status === 200) > 0, 20_000), 'renames succeed again, with no restart')
  const firstSuccess = Math.min(...load.outcomes.filter((o) => o.started >= backAt && o.status === 200).map((o) => o.settled))
  t.ok(await waitFor(async () => (await send(api.port, 'GET', '/health/ready', { livenessMs })).status === 200, 10_000),
    '/health/ready is 200 again')
  t.ok(await waitFor(() => load.count((o) => o.started >= backAt && o.status === 200) >= 40, 20_000), 'traffic flows after the outage')
  await load.stop()

  const outcomes = load.outcomes
  t.same(anomalies(outcomes).map((o) => `${o.name}: ${o.status || o.error} ${o.body}`), [],
    'every request got a 200 or a 503 unavailable with Retry-After: none hung, none failed otherwise')
  t.same(outcomes.filter((o) => o.started >= outageAt + 100 && o.settled < backAt && o.status === 200).map((o) => o.name), [],
    'nothing succeeds while the database is away')
  noCrash(t, crashes)
  t.comment(`${summary(outcomes)}; outage ${backAt - outageAt} ms with ${load.count((o) => o.started >= outageAt && o.started < backAt && o.status === 503)} refusals; first success ${firstSuccess - backAt} ms after the database came back`)
  explainCommittedAnyway(t, await checkWrites(t, db, fixture, outcomes))
})

t.test("pg_terminate_backend on the app's connections while traffic runs: no 500, no hang, service resumes", { skip }, async (t) => {
  const crashes = watchCrashes(t)
  const db = database!.db
  const fixture = await seedWriters(db, 4)
  const applicationName = 'faults-terminate'
  const livenessMs = 10_000
  const api = await startApp(t, appUrl(database!.url!, applicationName), { DB_CONNECTION_TIMEOUT_MS: '1000', DB_POOL_SIZE: '4' })
  const admin = new pg.Client({ connectionString: database!.url })
  await admin.connect()
  t.teardown(() => admin.end())
  const load = startLoad(api.port, fixture, 8, 'terminate', livenessMs)
  t.teardown(() => load.stop())

  t.ok(await waitFor(() => load.count((o) => o.status === 200) >= 40, 20_000), 'renames succeed before the backends are killed')
  let terminated = 0
  let lastKill = 0
  for (let round = 0; round < 5; round++) {
    const settled = load.outcomes.length
    const result = await admin.query<{ killed: number }>(
      'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS killed FROM pg_stat_activity WHERE application_name = $1',
      [applicationName])
    terminated += result.rows[0]!.killed
    lastKill = Date.now()
    await waitFor(() => load.outcomes.length >= settled + 20, 10_000)
  }
  t.ok(terminated > 0, `the app's backends were terminated (${terminated})`)
  t.ok(await waitFor(() => load.count((o) => o.started >= lastKill && o.status === 200) >= 20, 20_000), 'renames succeed after the last kill')
  await load.stop()

  const outcomes = load.outcomes
  t.same(anomalies(outcomes).map((o) => `${o.name}: ${o.status || o.error} ${o.body}`), [],
    'every request got a 200 or a 503 unavailable with Retry-After: none hung, no 500')
  t.equal((await send(api.port, 'GET', '/health/ready', { livenessMs })).status, 200, '/health/ready is 200')
  noCrash(t, crashes)
  t.comment(`${summary(outcomes)}; ${terminated} backends terminated in 5 rounds`)
  explainCommittedAnyway(t, await checkWrites(t, db, fixture, outcomes))
})

t.test('a statement that outlives DB_STATEMENT_TIMEOUT_MS is cancelled: 503, nothing written, then the same request succeeds', { skip }, async (t) => {
  const db = database!.db
  const fixture = await seedWriters(db, 1)
  const project = fixture.projects[0]!
  const writer = fixture.writers[0]!
  const api = await startApp(t, appUrl(database!.url!, 'faults-statement'), { DB_STATEMENT_TIMEOUT_MS: '300' })
  const rename = () => send(api.port, 'POST', UPDATE_NAME, {
    token: writer.token, body: { project_id: project.publicId, name: 'Renamed After The Lock' }, livenessMs: 10_000
  })

  const locker = new pg.Client({ connectionString: database!.url })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('BEGIN')
  await locker.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [project.id])
  const before = await projectRow(db, project.id)

  const held = await rename()
  t.equal(held.status, 503, 'the rename waiting on the lock is cancelled')
  t.equal(held.retryAfter, '1')
  t.match(JSON.parse(held.body), UNAVAILABLE)
  t.ok(api.logs.some((l) => l.msg === 'database unavailable' && l.level === 40 && l.err?.code === '57014'), 'by the statement timeout (57014), as the log says at warn')
  await locker.query('ROLLBACK')
  t.same(await projectRow(db, project.id), before, 'the row is untouched')
  t.same(await projectActivities(db, project.id), [], 'no activity')

  const free = await rename()
  t.equal(free.status, 200, 'once the lock is gone the same request succeeds')
  t.equal(JSON.parse(free.body).project.name, 'Renamed After The Lock')
  const activities = await projectActivities(db, project.id)
  t.same(activities.map((a) => a.content), [{ old_name: project.name, new_name: 'Renamed After The Lock' }])
})

t.test('a connection that outlives DB_CONNECTION_TIMEOUT_MS: 503 at the setting, while an app with a longer one still waits', { skip }, async (t) => {
  // Three requests that each need a connection; cut off only if they hang.
  const requests = (port: number, agent?: Agent) => [
    send(port, 'POST', UPDATE_NAME, { token: 'pat_any', body: { project_id: 'x', name: 'y' }, agent, livenessMs: 60_000 }),
    send(port, 'GET', '/api/external/v1/projects/get?id=x', { token: 'pat_any', agent, livenessMs: 60_000 }),
    send(port, 'GET', '/health/ready', { agent, livenessMs: 60_000 })
  ]

  // Beside it, the same app with a setting no test outlives, on a server that
  // never answers either: still waiting when the first has answered, so the
  // answers came from the setting, not from the default (5 s) or any other bound.
  // Its port is closed while it starts (the cursor key it reads when ready is
  // refused at once), then accepts and never answers.
  const patientServer = new TcpProxy('silent')
  await patientServer.start()
  await patientServer.stop()
  t.teardown(() => patientServer.stop())
  const patient = await startApp(t, appUrl(database!.url!, 'faults-connect-patient', patientServer.port), { DB_CONNECTION_TIMEOUT_MS: '600000' })
  await patientServer.start()
  const patientAgent = new Agent()
  let patientAnswered = 0
  // The API's two requests: /health/ready gives up after its own 2 s, whatever the setting.
  const patientAnswers = requests(patient.port, patientAgent).slice(0, 2).map(async (answer) => { await answer; patientAnswered++ })
  // Cut off at the end (its connection attempts too), so that its pool can close.
  t.teardown(async () => {
    patientAgent.destroy()
    await patientServer.stop()
    await Promise.all(patientAnswers)
  })
  t.ok(await waitFor(() => patientServer.accepted >= 2, 60_000), 'the patient app waits for connections from the server that never answers')

  const silent = new TcpProxy('silent')
  await silent.start()
  t.teardown(() => silent.stop())
  const api = await startApp(t, appUrl(database!.url!, 'faults-connect', silent.port), { DB_CONNECTION_TIMEOUT_MS: '300' })
  const answers = await Promise.all(requests(api.port))
  for (const answer of answers) {
    t.equal(answer.status, 503, `503, not ${answer.error ?? answer.status}`)
    t.equal(answer.retryAfter, '1')
    t.match(JSON.parse(answer.body || '{}'), UNAVAILABLE)
  }
  t.equal(patientAnswered, 0, 'meanwhile the app with a longer setting answered none of the same requests')
  t.ok(silent.accepted > 0, 'the app did reach the server that never answers')
  t.ok(api.logs.some((l) => /connection timeout|timeout exceeded when trying to connect/.test(l.err?.message ?? '')), 'the pool gave up waiting for the connection')
})

// ---------------------------------------------------------------------------
// The database refuses the service: closed to connections, a connection limit,
// read-only, a privilege revoked. Each on a database of its own.

/** The server's maintenance database, for ALTER DATABASE, roles and pg_terminate_backend. */
async function adminClient (t: Tap): Promise<pg.Client> {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await admin.connect()
  t.teardown(() => admin.end())
  return admin
}

async function ownDatabase (t: Tap): Promise<TestDatabase & { name: string, url: string }> {
  const own = await createTestDatabase()
  t.teardown(() => own.close())
  return { ...own, url: own.url!, name: new URL(own.url!).pathname.slice(1) }
}

/** Ends the app's sessions (tagged by appUrl): its new ones start with the database's new settings. */
async function terminateBackends (admin: pg.Client, applicationName: string): Promise<void> {
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [applicationName])
}

/** A login role (not a superuser: limits and privileges apply to it) with what the service needs on `own`. */
async function serviceRole (t: Tap, admin: pg.Client, own: TestDatabase & { name: string }, options = ''): Promise<string> {
  const role = `faults_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  await admin.query(`CREATE ROLE ${role} LOGIN ${options}`)
  await grantServicePrivileges(own.db, role)
  t.teardown(async () => {
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role])
    await own.close() // the role's privileges go with its database
    await admin.query(`DROP ROLE IF EXISTS ${role}`)
  })
  return role
}

function asRole (url: string, role: string): string {
  const parsed = new URL(url)
  parsed.username = role
  parsed.password = ''
  return parsed.toString()
}

/** Every operation once, and readiness; each rename has a new name made from `tag`. */
function everyOperation (port: number, fixture: Fixture, tag: string) {
  const project = fixture.projects[0]!
  const token = fixture.writers[0]!.token
  let n = 0
  return async (): Promise<Record<string, Answer>> => ({
    update_name: await send(port, 'POST', UPDATE_NAME, { token, body: { project_id: project.publicId, name: `${tag} ${++n}` } }),
    update_description: await send(port, 'POST', '/api/external/v1/projects/update_description', {
      token, body: { project_id: project.publicId, description: `"${tag} ${++n}"` }
    }),
    get: await send(port, 'GET', `/api/external/v1/projects/get?id=${project.publicId}`, { token }),
    ready: await send(port, 'GET', '/health/ready')
  })
}

function expectUnavailable (t: Tap, answers: Record<string, Answer>, only?: string[]): void {
  for (const [operation, answer] of Object.entries(answers)) {
    if (only && !only.includes(operation)) continue
    t.equal(answer.status, 503, `${operation}: 503, not ${answer.status || answer.error}`)
    t.equal(answer.retryAfter, '1', `${operation}: Retry-After`)
    t.match(JSON.parse(answer.body || '{}'), UNAVAILABLE, `${operation}: the envelope`)
  }
}

/** The project row and its activities, as a whole, to compare before and after. */
async function written (db: Db, fixture: Fixture) {
  const id = fixture.projects[0]!.id
  return { row: await projectRow(db, id), activities: (await projectActivities(db, id)).length }
}

t.test('a database that refuses connections (ALLOW_CONNECTIONS false, backends terminated): 503 for every operation, then service resumes', { skip }, async (t) => {
  const admin = await adminClient(t)
  const own = await ownDatabase(t)
  const fixture = await seedWriters(own.db, 1)
  const api = await startApp(t, appUrl(own.url, 'faults-closed'), { DB_CONNECTION_TIMEOUT_MS: '2000', DB_POOL_SIZE: '2' })
  const call = everyOperation(api.port, fixture, 'closed')
  t.same(Object.values(await call()).map((a) => a.status), [200, 200, 200, 200], 'everything works before')

  await admin.query(`ALTER DATABASE ${own.name} WITH ALLOW_CONNECTIONS false`)
  t.teardown(() => admin.query(`ALTER DATABASE ${own.name} WITH ALLOW_CONNECTIONS true`))
  await terminateBackends(admin, 'faults-closed')
  for (let round = 0; round < 2; round++) expectUnavailable(t, await call())
  t.ok(api.logs.some((l) => l.msg === 'database unavailable' && l.level === 40 && l.err?.code === '55000' &&
    /not currently accepting connections|does not allow connections/.test(l.err.message ?? '')), 'logged at warn with its SQLSTATE (55000) and cause')
  t.same(api.logs.filter((l) => l.level >= 50), [], 'nothing at error level')

  await admin.query(`ALTER DATABASE ${own.name} WITH ALLOW_CONNECTIONS true`)
  t.ok(await waitFor(async () => (await send(api.port, 'GET', '/health/ready')).status === 200, 10_000), 'ready again, with no restart')
  t.same(Object.values(await call()).map((a) => a.status), [200, 200, 200, 200], 'everything works again')
  const activities = await projectActivities(own.db, fixture.projects[0]!.id)
  t.same(activities.map((a) => a.content.new_name ?? a.content.new_description), ['closed 1', '"closed 2"', 'closed 7', '"closed 8"'],
    'the activities are those of the acknowledged writes: nothing written while refused')
})

t.test("the role's connection limit is reached: 503 for every operation, then service resumes when a slot frees", { skip }, async (t) => {
  const admin = await adminClient(t)
  const own = await ownDatabase(t)
  const fixture = await seedWriters(own.db, 1)
  const role = await serviceRole(t, admin, own, 'CONNECTION LIMIT 1')
  const held = new pg.Client({ connectionString: asRole(own.url, role) })
  await held.connect() // the role's only connection
  const before = await written(own.db, fixture)
  const api = await startApp(t, appUrl(asRole(own.url, role), 'faults-limit'), { DB_CONNECTION_TIMEOUT_MS: '2000' })
  const call = everyOperation(api.port, fixture, 'limit')
  expectUnavailable(t, await call())
  t.ok(api.logs.some((l) => l.msg === 'database unavailable' && l.level === 40 && l.err?.code === '53300'),
    'logged at warn with its SQLSTATE (53300, too many connections)')
  t.same(await written(own.db, fixture), before, 'nothing written')

  await held.end()
  t.ok(await waitFor(async () => (await send(api.port, 'GET', '/health/ready')).status === 200, 10_000), 'ready once a slot is free')
  t.same(Object.values(await call()).map((a) => a.status), [200, 200, 200, 200], 'everything works again')
})

t.test('a database turned read-only (default_transaction_read_only, as a standby is): reads answer, mutations are 503 and write nothing, not ready; then writable again', { skip }, async (t) => {
  const admin = await adminClient(t)
  const own = await ownDatabase(t)
  const fixture = await seedWriters(own.db, 1)
  const api = await startApp(t, appUrl(own.url, 'faults-read-only'), { DB_POOL_SIZE: '4' })
  const call = everyOperation(api.port, fixture, 'read-only')
  const normal = await call()
  t.same(Object.values(normal).map((a) => a.status), [200, 200, 200, 200], 'everything works before')
  const before = await written(own.db, fixture)
  const tokenId = fixture.writers[0]!.tokenId
  const lastUsed = async () => (await own.db.selectFrom('api_tokens').select('last_used_at').where('id', '=', tokenId).executeTakeFirstOrThrow()).last_used_at

  await admin.query(`ALTER DATABASE ${own.name} SET default_transaction_read_only = on`)
  t.teardown(() => admin.query(`ALTER DATABASE ${own.name} RESET default_transaction_read_only`))
  await terminateBackends(admin, 'faults-read-only')
  const used = await lastUsed()
  for (let round = 0; round < 3; round++) {
    const answers = await call()
    expectUnavailable(t, answers, ['update_name', 'update_description', 'ready'])
    t.equal(answers.get!.status, 200, `get answers (round ${round + 1})`)
    t.equal(answers.get!.body, normal.get!.body, 'the very same project')
  }
  t.same(await written(own.db, fixture), before, 'nothing written')
  t.same(await lastUsed(), used, "nor the token's last use")
  t.same(api.logs.filter((l) => l.level >= 50), [], 'nothing at error level')
  t.ok(api.logs.some((l) => l.msg === 'database unavailable' && l.err?.code === '25006'), 'the refused mutations are logged with 25006')

  await admin.query(`ALTER DATABASE ${own.name} RESET default_transaction_read_only`)
  await terminateBackends(admin, 'faults-read-only')
  t.ok(await waitFor(async () => (await send(api.port, 'GET', '/health/ready')).status === 200, 10_000), 'ready again')
  t.same(Object.values(await call()).map((a) => a.status), [200, 200, 200, 200], 'everything works again')
  // The lookup tries recording the token's use again a few seconds later.
  await own.db.updateTable('api_tokens').set({ last_used_at: null }).where('id', '=', tokenId).execute()
  const get = () => send(api.port, 'GET', `/api/external/v1/projects/get?id=${fixture.projects[0]!.publicId}`, { token: fixture.writers[0]!.token })
  t.ok(await waitFor(async () => (await get()).status === 200 && (await lastUsed()) !== null, 20_000), "the token's use is recorded again")
})

t.test('a privilege revoked from the service\'s role: not ready, the mutation that needs it is 503, reads go on', { skip }, async (t) => {
  const admin = await adminClient(t)
  const own = await ownDatabase(t)
  const fixture = await seedWriters(own.db, 1)
  const role = await serviceRole(t, admin, own)
  const api = await startApp(t, appUrl(asRole(own.url, role), 'faults-privilege'), {})
  const call = everyOperation(api.port, fixture, 'privilege')
  t.same(Object.values(await call()).map((a) => a.status), [200, 200, 200, 200], 'exactly the listed privileges serve everything')

  await sql`REVOKE UPDATE ON projects FROM ${sql.id(role)}`.execute(own.db)
  const before = await written(own.db, fixture)
  const answers = await call()
  expectUnavailable(t, answers, ['update_name', 'update_description', 'ready'])
  t.equal(answers.get!.status, 200, 'get answers')
  t.same(await written(own.db, fixture), before, 'nothing written')
  t.ok(api.logs.some((l) => l.level === 40 && l.msg === 'not ready: the database role lacks projects UPDATE'), 'the log says which privilege')

  await sql`GRANT UPDATE ON projects TO ${sql.id(role)}`.execute(own.db)
  t.same(Object.values(await call()).map((a) => a.status), [200, 200, 200, 200], 'everything works again')
})

t.test('an unknown database or role is 503 for every operation, logged with its SQLSTATE', { skip }, async (t) => {
  const own = await ownDatabase(t)
  const fixture = await seedWriters(own.db, 1)
  const missingDatabase = new URL(own.url)
  missingDatabase.pathname = `/${own.name}_missing`
  for (const [url, code] of [[missingDatabase.toString(), '3D000'], [asRole(own.url, `${own.name}_nobody`), '28000']] as const) {
    const api = await startApp(t, appUrl(url, 'faults-unknown'), {})
    expectUnavailable(t, await everyOperation(api.port, fixture, 'unknown')())
    t.ok(api.logs.some((l) => l.msg === 'database unavailable' && l.level === 40 && l.err?.code === code), `logged at warn with ${code}`)
  }
})
