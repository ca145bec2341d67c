// Graceful shutdown of the real server process: SIGTERM under a steady load of
// renames loses no acknowledged write and half-writes nothing, a request still
// running when the signal arrives completes, and past SHUTDOWN_TIMEOUT_MS the
// process exits 1 instead of hanging.
import { mkdtemp, rm } from 'node:fs/promises'
import { Agent } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import pg from 'pg'
import t from '../tap.js'
import { createDb, type Db } from '../../src/db/index.js'
import { createMigratedDb, createTestDatabase, databaseOptions, type TestDatabase } from '../database.js'
import { send as sendOnce, sendRaw, type Answer } from '../http.js'
import { projectActivities, projectRow, seedWriters, waitFor } from '../helper.js'
import { launchServer, type ServerProcess } from '../launch.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const UPDATE_NAME = '/api/external/v1/projects/update_name'
/** A request that has not settled by then is cut off and counted as hanging. */
const LIVENESS_MS = 15_000
/**
 * SHUTDOWN_TIMEOUT_MS where a test is not about it: a deadline only a hang
 * reaches, so that exit 0 says the shutdown finished, however busy the machine.
 */
const GENEROUS_SHUTDOWN_MS = 60_000
const send: typeof sendOnce = (port, method, path, options = {}) => sendOnce(port, method, path, { livenessMs: LIVENESS_MS, ...options })
const needsPostgres = process.env.DATABASE_URL
  ? false
  : 'needs a real PostgreSQL server (set DATABASE_URL): a row lock held from a second connection, which the embedded database (one process) cannot give'

/** The API's 503: the error envelope with code `unavailable` and Retry-After. */
function isUnavailable (answer: Answer): boolean {
  try {
    const body = JSON.parse(answer.body) as Record<string, unknown>
    return answer.status === 503 && answer.headers['retry-after'] === '1' && body.statusCode === 503 &&
      body.error === 'Service Unavailable' && body.code === 'unavailable' && typeof body.message === 'string'
  } catch {
    return false
  }
}

function describe (answer: Answer): string {
  return answer.status === 0 ? String(answer.error) : `${answer.status} ${answer.body} retry-after: ${String(answer.headers['retry-after'])}`
}

function unique (values: string[]): string[] {
  return [...new Set(values)]
}

/** `npm start` with no rate limit, logging warnings and errors, once /health/ready answers 200. */
async function start (t: Tap, env: Record<string, string>): Promise<ServerProcess> {
  return await launchServer({ t, env: { RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn', ...env } })
}

/**
 * Backends of this database (waiting on a lock, for the first). Asked on a pool
 * connection of its own: inside a transaction PostgreSQL answers from a snapshot
 * of the activity taken at its first look.
 */
async function waitingOnLocks (db: Db): Promise<number[]> {
  const result = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db)
  return result.rows.map((r) => r.pid)
}

async function backends (db: Db): Promise<number[]> {
  const result = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(db)
  return result.rows.map((r) => r.pid)
}

let shared: Promise<TestDatabase> | undefined

/** One PostgreSQL database for the file: each test seeds its own rows. */
async function sharedDatabase (): Promise<TestDatabase> {
  if (!shared) {
    shared = createTestDatabase()
    const database = await shared
    t.teardown(() => database.close())
  }
  return await shared
}

/**
 * The database the server runs on: this file's PostgreSQL database when DATABASE_URL
 * is set, else the embedded one in a temporary DATA_DIR, seeded through a Db that
 * is closed again before the server starts (the server locks the directory).
 * `open` gives a Db to read it afterwards.
 */
async function prepare (t: Tap, seedWith: (db: Db) => Promise<void>): Promise<{ env: Record<string, string>, open: () => Promise<Db> }> {
  if (process.env.DATABASE_URL) {
    const database = await sharedDatabase()
    await seedWith(database.db)
    return { env: { DATABASE_URL: database.url! }, open: async () => database.db }
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'shutdown-test-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const db = await createMigratedDb(dataDir)
  try {
    await seedWith(db)
  } finally {
    await db.destroy()
  }
  return {
    env: { DATABASE_URL: '', DATA_DIR: dataDir },
    open: async () => {
      const reopened = await createDb(databaseOptions({ DATA_DIR: dataDir }))
      t.teardown(() => reopened.destroy())
      return reopened
    }
  }
}

interface Outcome extends Answer {
  client: number
  name: string
  started: number
  settled: number
}

t.test('SIGTERM under load: exit 0, every acknowledged write in, nothing else written', async (t) => {
  const clients = 20
  const shutdownTimeoutMs = GENEROUS_SHUTDOWN_MS
  let fixture!: Awaited<ReturnType<typeof seedWriters>>
  const target = await prepare(t, async (db) => { fixture = await seedWriters(db, clients) })
  const server = await start(t, { ...target.env, SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) })

  // One client per project, so each project's renames are sequential and its last
  // acknowledged name is known. Even clients reuse keep-alive connections, odd ones
  // open a new connection for every request.
  const outcomes: Outcome[] = []
  const inFlight = new Set<string>()
  const agent = new Agent({ keepAlive: true, maxSockets: clients })
  let running = true
  const loop = async (client: number) => {
    const project = fixture.projects[client]!
    const writer = fixture.writers[client % fixture.writers.length]!
    for (let n = 1; running; n++) {
      const name = `shutdown ${client}-${n}`
      const started = Date.now()
      inFlight.add(name)
      const answer = await send(server.port, 'POST', UPDATE_NAME, {
        token: writer.token, body: { project_id: project.publicId, name }, agent: client % 2 === 0 ? agent : false
      })
      inFlight.delete(name)
      outcomes.push({ ...answer, client, name, started, settled: Date.now() })
      // A client that meets a closed door slows down rather than spinning.
      if (answer.status !== 200) await sleep(20)
    }
  }
  const loops = Array.from({ length: clients }, (_, i) => loop(i))
  t.teardown(async () => {
    running = false
    await Promise.all(loops)
    agent.destroy()
  })

  t.ok(await waitFor(() => outcomes.filter((o) => o.status === 200).length >= 100, 30_000), 'the load is flowing')
  t.ok(await waitFor(() => inFlight.size >= clients / 2, 30_000), 'requests are in flight')
  const atSignal = new Set(inFlight)
  const signalAt = Date.now()
  server.child.kill('SIGTERM')
  const code = await server.exitWithin(shutdownTimeoutMs + 10_000)
  const exitAt = Date.now()
  // Clients keep knocking after the exit, each at least once more.
  t.ok(await waitFor(() => new Set(outcomes.filter((o) => o.started > exitAt).map((o) => o.client)).size === clients, 10_000),
    'every client sent another request after the exit')
  running = false
  await Promise.all(loops)
  agent.destroy()

  t.equal(code, 0, 'the server exits 0, within SHUTDOWN_TIMEOUT_MS')
  t.ok(atSignal.size > 0, `${atSignal.size} requests were in flight when SIGTERM was sent`)
  const odd = outcomes.filter((o) => o.status === 0
    ? !['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(o.error ?? '')
    : o.status !== 200 && o.status !== 503)
  t.same(odd.map((o) => `${o.name}: ${o.status || o.error} ${o.body}`), [],
    'every request got a 200, a 503 or a refused/reset connection: no 500, none hanging')
  t.same(outcomes.filter((o) => o.started > exitAt && o.status !== 0).map((o) => o.name), [], 'after the exit nothing answers')
  t.same(unique(outcomes.filter((o) => o.status === 503 && !isUnavailable(o)).map(describe)), [],
    'a 503 while closing is the error envelope (code unavailable) with Retry-After, like every other 503')

  // What the database says, read after the exit.
  const db = await target.open()
  const missing: string[] = []
  const unacknowledged: string[] = []
  const wrongAuthor: string[] = []
  const wrongRow: string[] = []
  for (const [client, project] of fixture.projects.entries()) {
    const mine = outcomes.filter((o) => o.client === client)
    const activities = await projectActivities(db, project.id)
    const byNew = new Map(activities.map((a) => [String(a.content.new_name), a]))
    const acknowledged = mine.filter((o) => o.status === 200)
    const writer = fixture.writers[client % fixture.writers.length]!
    for (const o of acknowledged) {
      const activity = byNew.get(o.name)
      if (!activity) missing.push(o.name)
      else if (activity.author_id !== writer.personId || activity.token_id !== writer.tokenId) wrongAuthor.push(o.name)
    }
    const acknowledgedNames = new Set(acknowledged.map((o) => o.name))
    unacknowledged.push(...activities.map((a) => String(a.content.new_name)).filter((name) => !acknowledgedNames.has(name)))
    const last = acknowledged.at(-1)?.name ?? project.name
    const row = await projectRow(db, project.id)
    if (row.name !== last) wrongRow.push(`${project.name}: ${String(row.name)}, not ${last}`)
  }
  t.same(missing, [], 'every acknowledged rename has its activity')
  t.same(wrongAuthor, [], 'each activity names the person and token that asked')
  t.same(unacknowledged, [], 'no request that did not get a 200 wrote anything')
  t.same(wrongRow, [], "each project's row holds its last acknowledged name")

  const count = (predicate: (o: Outcome) => boolean) => outcomes.filter(predicate).length
  const byError = new Map<string, number>()
  for (const o of outcomes) if (o.status === 0) byError.set(o.error!, (byError.get(o.error!) ?? 0) + 1)
  const closing = outcomes.filter((o) => o.status === 503)
  const survivors = outcomes.filter((o) => atSignal.has(o.name))
  t.comment(`${outcomes.length} requests: ${count((o) => o.status === 200)}×200 (${count((o) => o.status === 200 && o.settled >= signalAt)} settled after SIGTERM), ` +
    `${closing.length}×503, ${[...byError].map(([k, v]) => `${v}×${k}`).join(', ') || 'no connection errors'}; exit ${code} ${exitAt - signalAt} ms after SIGTERM`)
  t.comment(`in flight at SIGTERM: ${survivors.length}, of which ${survivors.filter((o) => o.status === 200).length}×200, ` +
    `${survivors.filter((o) => o.status === 503).length}×503, ${survivors.filter((o) => o.status === 0).length}× connection error`)
})

t.test('requests still running when SIGTERM arrives complete with 200, then the process exits 0', { skip: needsPostgres }, async (t) => {
  let fixture!: Awaited<ReturnType<typeof seedWriters>>
  const target = await prepare(t, async (db) => { fixture = await seedWriters(db, 2) })
  const shutdownTimeoutMs = GENEROUS_SHUTDOWN_MS
  const server = await start(t, { ...target.env, SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) })
  const db = await target.open()
  const token = fixture.writers[0]!.token

  // Row locks from another connection keep two renames waiting inside the server.
  // Both clients use keep-alive, as most do: one goes quiet after its answer, the
  // other sends one more request on the same connection.
  const locker = new pg.Client({ connectionString: target.env.DATABASE_URL })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('BEGIN')
  await locker.query('SELECT id FROM projects WHERE id = ANY($1) FOR UPDATE', [fixture.projects.map((p) => p.id)])
  const [quiet, chatty] = [new Agent({ keepAlive: true, maxSockets: 1 }), new Agent({ keepAlive: true, maxSockets: 1 })]
  t.teardown(() => { quiet.destroy(); chatty.destroy() })
  const names = ['Finished During Shutdown', 'Also Finished During Shutdown']
  const slow = [quiet, chatty].map((agent, i) => send(server.port, 'POST', UPDATE_NAME, {
    agent, token, body: { project_id: fixture.projects[i]!.publicId, name: names[i] }
  }))
  t.ok(await waitFor(async () => (await waitingOnLocks(db)).length === 2, 10_000), 'both renames wait on the locks')

  server.child.kill('SIGTERM')
  t.ok(await waitFor(async () => (await send(server.port, 'GET', '/health/live')).error === 'ECONNREFUSED', 10_000),
    'the server stops accepting connections')
  t.equal(server.child.exitCode, null, 'and waits for the requests in flight')
  await locker.query('ROLLBACK')

  const answers = await Promise.all(slow)
  for (const [i, res] of answers.entries()) {
    t.equal(res.status, 200, `request ${i + 1} in flight completes`)
    t.equal(JSON.parse(res.body || '{}').project?.name, names[i])
  }
  const next = await send(server.port, 'GET', `/api/external/v1/projects/get?id=${fixture.projects[1]!.publicId}`, { agent: chatty, token })
  t.ok(next.status === 200 || next.error === 'ECONNREFUSED' || isUnavailable(next),
    `a request after it, on the same connection, is served, refused, or a 503 in the envelope with Retry-After: ${describe(next)}`)

  t.equal(await server.exitWithin(shutdownTimeoutMs + 10_000), 0,
    'then the process exits 0, though a keep-alive client stays connected and quiet')
  for (const [i, project] of fixture.projects.entries()) {
    t.equal((await projectRow(db, project.id)).name, names[i])
    t.same((await projectActivities(db, project.id)).map((a) => a.content), [{ old_name: project.name, new_name: names[i] }])
  }
})

t.test('SIGTERM with stalled clients: the shutdown cuts them off, the request in flight gets its 200, exit 0', async (t) => {
  let fixture!: Awaited<ReturnType<typeof seedWriters>>
  const target = await prepare(t, async (db) => { fixture = await seedWriters(db, 2) })
  // The timeouts that would otherwise cut the stalled clients off (HEADERS_ and
  // REQUEST_TIMEOUT_MS) far beyond the clients' own liveness, and Node.js stops
  // enforcing them once the server closes: only the shutdown can close them. Exit 0
  // is an exit before SHUTDOWN_TIMEOUT_MS (past it, 1: the last test).
  const shutdownTimeoutMs = GENEROUS_SHUTDOWN_MS
  const clientTimeoutMs = String(10 * LIVENESS_MS)
  // At info, the log shows when the stalled rename's headers have arrived.
  const server = await start(t, {
    ...target.env, SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs), HEADERS_TIMEOUT_MS: clientTimeoutMs, REQUEST_TIMEOUT_MS: clientTimeoutMs, LOG_LEVEL: 'info'
  })
  const token = fixture.writers[0]!.token
  const [held, stalled] = fixture.projects as [typeof fixture.projects[0], typeof fixture.projects[0]]

  // A rename fully received and in flight, held by a row lock (PostgreSQL), and a
  // stalled one: headers and the start of its body, then nothing.
  let locker: pg.Client | undefined
  let inFlight: Promise<Answer> | undefined
  if (process.env.DATABASE_URL) {
    const db = await target.open()
    locker = new pg.Client({ connectionString: target.env.DATABASE_URL })
    await locker.connect()
    t.teardown(() => locker!.end())
    await locker.query('BEGIN')
    await locker.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [held.id])
    inFlight = send(server.port, 'POST', UPDATE_NAME, { token, body: { project_id: held.publicId, name: 'Finished Despite The Stall' } })
    t.ok(await waitFor(async () => (await waitingOnLocks(db)).length === 1, 10_000), 'the rename in flight waits on the lock')
  }
  const body = JSON.stringify({ project_id: stalled.publicId, name: 'Never Sent Whole' })
  let sent = 0
  const onSent = () => { sent++ }
  const stalledBody = sendRaw(server.port, [
    `POST ${UPDATE_NAME} HTTP/1.1\r\nhost: localhost\r\nx-request-id: stalled-body\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 20)}`
  ], { livenessMs: LIVENESS_MS, onSent })
  const stalledHeaders = sendRaw(server.port, [`GET /health/live HTTP/1.1\r\nhost: localhost\r\n`], { livenessMs: LIVENESS_MS, onSent })
  const silent = sendRaw(server.port, [], { livenessMs: LIVENESS_MS, onSent })
  t.ok(await waitFor(() => sent === 3 && /"reqId":"stalled-body"[^\n]*"msg":"incoming request"/.test(server.output()), 10_000),
    'the stalled requests have arrived as far as they will: the stalled rename is in the server')

  const signalAt = Date.now()
  server.child.kill('SIGTERM')
  const cut = await stalledBody
  t.ok(cut.closed, `the stalled body's connection is closed (${Date.now() - signalAt} ms after SIGTERM)`)
  t.equal(cut.status, 503, `and answered: ${cut.status || cut.error} ${cut.body}`)
  t.match(JSON.parse(cut.body || '{}'), { statusCode: 503, error: 'Service Unavailable', code: 'unavailable', message: String })
  t.equal(cut.headers['retry-after'], '1')
  t.equal(cut.headers['cache-control'], 'no-store')
  for (const [what, pending] of [['stalled headers', stalledHeaders], ['a silent connection', silent]] as const) {
    const res = await pending
    t.ok(res.closed, `${what}: closed (${Date.now() - signalAt} ms after SIGTERM)`)
  }

  if (locker && inFlight) {
    t.equal(server.child.exitCode, null, 'the process waits for the request in flight')
    await locker.query('ROLLBACK')
    const res = await inFlight
    t.equal(res.status, 200, `the request in flight completes: ${res.body}`)
    t.equal(JSON.parse(res.body || '{}').project?.name, 'Finished Despite The Stall')
  }
  const code = await server.exitWithin(shutdownTimeoutMs + 10_000)
  t.equal(code, 0, `exit 0, before SHUTDOWN_TIMEOUT_MS (${Date.now() - signalAt} ms after SIGTERM)`)

  const reread = await target.open()
  t.equal((await projectRow(reread, stalled.id)).name, stalled.name, 'the stalled rename wrote nothing')
  t.same(await projectActivities(reread, stalled.id), [])
  if (locker) {
    t.equal((await projectRow(reread, held.id)).name, 'Finished Despite The Stall')
    t.same((await projectActivities(reread, held.id)).map((a) => a.content), [{ old_name: held.name, new_name: 'Finished Despite The Stall' }])
  }
})

t.test('past SHUTDOWN_TIMEOUT_MS the process exits 1 rather than hanging', { skip: needsPostgres }, async (t) => {
  let fixture!: Awaited<ReturnType<typeof seedWriters>>
  const target = await prepare(t, async (db) => { fixture = await seedWriters(db, 1) })
  const project = fixture.projects[0]!
  const shutdownTimeoutMs = 1000
  const server = await start(t, { ...target.env, SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) })
  const db = await target.open()

  const locker = new pg.Client({ connectionString: target.env.DATABASE_URL })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('BEGIN')
  await locker.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [project.id])
  const stuck = send(server.port, 'POST', UPDATE_NAME, {
    token: fixture.writers[0]!.token, body: { project_id: project.publicId, name: 'Cut Off At The Deadline' }
  })
  t.ok(await waitFor(async () => (await waitingOnLocks(db)).length === 1, 10_000), 'the rename waits on the lock')

  server.child.kill('SIGTERM')
  t.equal(await server.exitWithin(shutdownTimeoutMs + 10_000), 1, 'the process exits 1 at the deadline')
  t.match(server.output(), /killed by timeout \(1000ms\)/, 'saying why')
  const res = await stuck
  t.equal(res.status, 0, 'the request cut off gets no answer')
  t.ok(['ECONNRESET', 'EPIPE'].includes(res.error ?? ''), `its connection is reset (${res.error})`)

  // The exit leaves the statement behind in PostgreSQL, still waiting on the lock:
  // PostgreSQL notices that its client is gone only when it answers. Released, it
  // may commit a rename whose client saw a reset (an unknown outcome for it, as
  // with any connection lost mid-request); whatever it does is whole.
  const orphans = await waitingOnLocks(db)
  await locker.query('ROLLBACK')
  t.ok(await waitFor(async () => !(await backends(db)).some((pid) => orphans.includes(pid)), 10_000),
    'the statement left behind ends once the lock is released')
  const name = String((await projectRow(db, project.id)).name)
  const activities = (await projectActivities(db, project.id)).map((a) => a.content)
  if (name === project.name) t.same(activities, [], 'nothing was written')
  else t.same([name, activities], ['Cut Off At The Deadline', [{ old_name: project.name, new_name: 'Cut Off At The Deadline' }]], 'the rename committed whole')
  t.comment(`${orphans.length} statement(s) left waiting after the exit; once released: ${name === project.name ? 'nothing written' : 'the rename committed'}`)
})
