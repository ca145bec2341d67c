// Rate limits per token: a flooding token gets 429s in the error envelope with
// Retry-After and RateLimit-* headers while another token still works; health
// probes are never limited; with REDIS_URL two instances share one budget.
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import t from 'tap'
import { build, client, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'

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

t.test('an unreachable Redis lets requests through rather than failing them', async (t) => {
  const { app: server } = await build(t, { env: { RATE_LIMIT_MAX: '1', REDIS_URL: 'redis://127.0.0.1:1' } })
  const statuses = []
  for (let i = 0; i < 3; i++) statuses.push((await server.inject({ method: 'GET', url: '/api/external/v1/projects/get?id=x' })).statusCode)
  t.same(statuses, [401, 401, 401])
})
