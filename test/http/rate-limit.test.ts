// Rate limits per token: a flooding token gets 429s in the error envelope with
// Retry-After and RateLimit-* headers while another token still works; health
// probes are never limited; with REDIS_URL two instances share one budget, and
// while Redis is unreachable requests are let through, said once per outage in
// the log and for as long as it lasts in readiness.
import { randomBytes } from 'node:crypto'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import t from '../tap.js'
import { build, client, createCompany, createPerson, createProject, createSpace, tokenFor, waitFor } from '../helper.js'
import { freePort } from '../launch.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

t.test('a flooding token is limited; another token is not', async (t) => {
  const { app: server, db } = await build(t, { env: { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000' } })
  const company = await createCompany(db)
  const alice = await createPerson(db, company.id)
  const bob = await createPerson(db, company.id)
  const space = await createSpace(db, company.id)
  const project = await createProject(db, space, { access: { company: 70 } })
  const flooder = client(server, (await tokenFor(db, alice.email)).token)
  const other = client(server, (await tokenFor(db, bob.email)).token)

  const answers = []
  for (let i = 0; i < 8; i++) answers.push(await flooder.get(project.publicId))
  t.same(answers.map((r) => r.statusCode), [200, 200, 200, 200, 200, 429, 429, 429])
  t.same(answers.slice(0, 5).map((r) => r.headers['ratelimit-remaining']), ['4', '3', '2', '1', '0'])
  t.equal(answers[0]!.headers['ratelimit-limit'], '5')

  const limited = answers[5]!
  t.same(limited.json(), {
    statusCode: 429,
    error: 'Too Many Requests',
    code: 'rate_limited',
    message: limited.json().message
  })
  t.match(limited.json().message, /^too many requests; retry in \d+ s$/)
  t.match(limited.headers['retry-after'], /^\d+$/)
  t.ok(Number(limited.headers['retry-after']) > 0 && Number(limited.headers['retry-after']) <= 60)
  t.equal(limited.headers['ratelimit-limit'], '5')
  t.equal(limited.headers['ratelimit-remaining'], '0')
  t.match(limited.headers['ratelimit-reset'], /^\d+$/)
  t.equal(limited.headers['content-type'], 'application/json; charset=utf-8')

  // A limited mutation writes nothing.
  const rename = await flooder.updateName({ project_id: project.publicId, name: 'Flooded' })
  t.equal(rename.statusCode, 429)
  const row = await db.selectFrom('projects').select('name').where('id', '=', project.id).executeTakeFirstOrThrow()
  t.equal(row.name, project.name)

  const fine = await other.updateName({ project_id: project.publicId, name: 'Still works' })
  t.equal(fine.statusCode, 200, 'another token keeps its own budget')
  t.equal(fine.json().project.name, 'Still works')

  for (let i = 0; i < 10; i++) {
    const live = await server.inject({ method: 'GET', url: '/health/live' })
    t.equal(live.statusCode, 200, 'health probes are not limited')
  }
})

t.test('requests without a token are limited per address', async (t) => {
  const { app: server } = await build(t, { env: { RATE_LIMIT_MAX: '2' } })
  const statuses = []
  for (let i = 0; i < 3; i++) {
    statuses.push((await server.inject({ method: 'GET', url: '/api/external/v1/projects/get?id=x', remoteAddress: '10.0.0.1' })).statusCode)
  }
  t.same(statuses, [401, 401, 429])
  const elsewhere = await server.inject({ method: 'GET', url: '/api/external/v1/projects/get?id=x', remoteAddress: '10.0.0.2' })
  t.equal(elsewhere.statusCode, 401, 'another address has its own budget')
})

t.test('RATE_LIMIT_MAX=0 turns the limit off', async (t) => {
  const { app: server } = await build(t, { env: { RATE_LIMIT_MAX: '0' } })
  const res = await server.inject({ method: 'GET', url: '/api/external/v1/projects/get?id=x' })
  t.equal(res.statusCode, 401)
  t.equal(res.headers['ratelimit-limit'], undefined)
})

const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0 })
const redisUp = await probe.connect().then(() => true, () => false)
t.teardown(() => probe.disconnect())

t.test('with REDIS_URL two instances share one budget', { skip: redisUp ? false : `no Redis at ${REDIS_URL}` }, async (t) => {

  const { app: first, db } = await build(t, { env: { RATE_LIMIT_MAX: '4', REDIS_URL } })
  const { app: second } = await build(t, { env: { RATE_LIMIT_MAX: '4', REDIS_URL }, db })

  // A token nobody has used: its budget starts full, whatever ran before.
  const token = `pat_${randomBytes(32).toString('base64url')}`
  const headers = { authorization: `Bearer ${token}` }
  const url = '/api/external/v1/projects/get?id=x'
  const statuses = []
  for (let i = 0; i < 6; i++) {
    const instance = i % 2 === 0 ? first : second
    statuses.push((await instance.inject({ method: 'GET', url, headers })).statusCode)
  }
  t.same(statuses, [401, 401, 401, 401, 429, 429], 'the fifth request is over the shared budget, whichever instance takes it')
  const keys = await probe.keys('projects-api:rl:*')
  t.ok(keys.length > 0, 'the budget lives in Redis')
  t.notOk(keys.some((key) => key.includes(token) || key.includes(token.slice(4))), 'Redis holds a digest, not the token')
})

/** The app's log lines, as objects, and what the rate limit's store said in them. */
function capture () {
  const lines: Array<Record<string, unknown>> = []
  const logStream = { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } }
  const store = () => lines.filter((l) => /rate-limit store/.test(String(l.msg))).map((l) => ({ level: l.level, msg: l.msg }))
  return { lines, logStream, store }
}

const UNREACHABLE = { level: 40, msg: 'rate-limit store (Redis) unreachable: requests are let through without a limit until it is back' }
const BACK = { level: 30, msg: 'rate-limit store (Redis) reachable again: the limits apply again' }

async function readiness (server: FastifyInstance): Promise<{ status: number, rateLimit: unknown }> {
  const res = await server.inject({ method: 'GET', url: '/health/ready' })
  return { status: res.statusCode, rateLimit: res.json().rate_limit }
}

t.test('an unreachable Redis lets requests through (fail open), said once in the log and in readiness', async (t) => {
  const { logStream, store } = capture()
  const { app: server } = await build(t, { env: { RATE_LIMIT_MAX: '1', AUTH_FAILURE_LIMIT_MAX: '1', LOG_LEVEL: 'info', REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, logStream })
  const statuses = []
  for (let i = 0; i < 8; i++) statuses.push((await server.inject({ method: 'GET', url: '/api/external/v1/projects/get?id=x' })).statusCode)
  t.same(statuses, Array(8).fill(401), 'neither budget refuses anything')
  t.same(await readiness(server), { status: 200, rateLimit: 'degraded' }, 'still ready: the API serves; the body says the limit is degraded')
  t.same(store(), [UNREACHABLE], 'one warning, not one per request')
})

t.test('an outage of Redis and its end: one warning, one line when it is back, limits shared again', { skip: redisUp ? false : `no Redis at ${REDIS_URL}` }, async (t) => {
  // Redis behind a switch: forwarded, or every connection reset (each reset is
  // one reconnection the client tried: counted, to see several go by).
  const upstream = new URL(REDIS_URL)
  let forwarding = true
  let refused = 0
  const open = new Set<Socket>()
  const gate = createServer((socket) => {
    if (!forwarding) {
      refused++
      socket.resetAndDestroy()
      return
    }
    const redis = connect(Number(upstream.port || 6379), upstream.hostname)
    for (const end of [socket, redis]) {
      open.add(end)
      end.on('close', () => open.delete(end))
      end.on('error', () => { socket.destroy(); redis.destroy() })
    }
    socket.pipe(redis).pipe(socket)
  })
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => { for (const s of open) s.destroy(); gate.close(resolve) }))
  const gatePort = (gate.address() as AddressInfo).port

  const { logStream, store } = capture()
  const { app: server } = await build(t, { env: { RATE_LIMIT_MAX: '2', LOG_LEVEL: 'info', REDIS_URL: `redis://127.0.0.1:${gatePort}` }, logStream })
  t.same(await readiness(server), { status: 200, rateLimit: 'shared' })
  const url = '/api/external/v1/projects/get?id=x'
  const fresh = () => ({ authorization: `Bearer pat_${randomBytes(32).toString('base64url')}` })

  forwarding = false
  for (const socket of open) socket.destroy()
  t.ok(await waitFor(async () => (await readiness(server)).rateLimit === 'degraded', 30_000), 'readiness says degraded')
  const headers = fresh()
  const during: number[] = []
  // Requests while the client tries again and again.
  t.ok(await waitFor(async () => {
    during.push((await server.inject({ method: 'GET', url, headers })).statusCode)
    return refused >= 3
  }, 30_000), 'the client tried to reconnect three times')
  t.ok(during.every((s) => s === 401), `all let through during the outage: ${during.length} requests, ${refused} reconnections refused`)
  t.equal((await readiness(server)).status, 200, 'ready throughout')
  t.same(store(), [UNREACHABLE], 'one warning for the whole outage')

  forwarding = true
  t.ok(await waitFor(async () => (await readiness(server)).rateLimit === 'shared', 30_000), 'readiness says shared again')
  t.same(store(), [UNREACHABLE, BACK], 'and one line when it is back')
  const again = fresh()
  const after: number[] = []
  for (let i = 0; i < 3; i++) after.push((await server.inject({ method: 'GET', url, headers: again })).statusCode)
  t.same(after, [401, 401, 429], 'the shared budget applies again')
})

t.test('readiness says where the limits are counted', async (t) => {
  const { app: off } = await build(t, { env: { RATE_LIMIT_MAX: '0', AUTH_FAILURE_LIMIT_MAX: '0' } })
  t.same(await readiness(off), { status: 200, rateLimit: 'off' })
  const { app: local, db } = await build(t, { env: { RATE_LIMIT_MAX: '5' } })
  t.same(await readiness(local), { status: 200, rateLimit: 'local' })
  if (!redisUp) return
  const { app: shared } = await build(t, { env: { RATE_LIMIT_MAX: '5', REDIS_URL }, db })
  t.same(await readiness(shared), { status: 200, rateLimit: 'shared' })
})
