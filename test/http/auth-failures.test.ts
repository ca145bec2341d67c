// Failed authentications are limited per client address, apart from the per-token
// budget: a flood of made-up tokens (each of which would have a fresh per-token
// budget) is cut off after AUTH_FAILURE_LIMIT_MAX failures with 429 and Retry-After,
// and stops costing database statements; tokens that authenticated before keep working
// under their own budget; other addresses keep theirs.
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Test } from 'tap'
import t from '../tap.js'
import type { LogEvent } from 'kysely'
import { build, createCompany, createPerson, createProject, createSpace, tokenFor, waitFor } from '../helper.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const GET = '/api/external/v1/projects/get'
const RENAME = '/api/external/v1/projects/update_name'

const bogus = () => `pat_${randomBytes(32).toString('base64url')}`

/** An app whose token lookups are counted, with a project and a writer. */
async function setup (t: Test, env: Record<string, string>) {
  const statements: string[] = []
  const log = (event: LogEvent) => { statements.push(event.query.sql) }
  const { app, db } = await build(t, { env, log })
  const company = await createCompany(db)
  const person = await createPerson(db, company.id)
  const space = await createSpace(db, company.id)
  const project = await createProject(db, space, { access: { company: 70 } })
  const writer = (await tokenFor(db, person.email)).token
  // Every authenticated statement looks its token up: the operation's own, and for a
  // refused token the second one that says why (auth/authenticate.ts).
  const lookups = () => statements.filter((sql) => /from "api_tokens"/i.test(sql)).length
  return { app, db, project, writer, person, lookups }
}

t.test('a flood of made-up tokens from one address: 401 up to the budget, then 429 with no token lookup', async (t) => {
  const { app, db, project, writer, person, lookups } = await setup(t, {
    AUTH_FAILURE_LIMIT_MAX: '20', AUTH_FAILURE_LIMIT_WINDOW_MS: '60000', RATE_LIMIT_MAX: '600'
  })
  // Used once before the flood: this address knows it.
  const before = await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${writer}` } })
  t.equal(before.statusCode, 200)
  const lookupsBefore = lookups()

  const statuses = new Map<number, number>()
  let first429: { statusCode: number, headers: Record<string, unknown>, body: string } | undefined
  for (let i = 0; i < 2000; i++) {
    const res = await app.inject({
      method: i % 2 === 0 ? 'GET' : 'POST',
      url: i % 2 === 0 ? `${GET}?id=${project.publicId}` : RENAME,
      headers: { authorization: `Bearer ${bogus()}`, 'content-type': 'application/json' },
      ...(i % 2 === 0 ? {} : { payload: JSON.stringify({ project_id: project.publicId, name: 'Flooded' }) })
    })
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    if (res.statusCode === 429 && first429 === undefined) first429 = res
  }
  t.same(Object.fromEntries(statuses), { 401: 20, 429: 1980 }, 'the first 20 failures are 401, every later request 429')
  t.equal(lookups() - lookupsBefore, 20, 'only the 20 requests within the budget reached the database (one lookup each)')

  t.ok(first429)
  t.same(JSON.parse(first429!.body), {
    statusCode: 429,
    error: 'Too Many Requests',
    code: 'rate_limited',
    message: `too many failed authentications from this address; retry in ${first429!.headers['retry-after']} s`
  })
  const retryAfter = Number(first429!.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After within the window (${retryAfter})`)
  t.equal(first429!.headers['cache-control'], 'no-store')
  t.match(first429!.headers['x-request-id'], /^[0-9a-f-]{36}$/)

  const row = await db.selectFrom('projects').select('name').where('id', '=', project.id).executeTakeFirstOrThrow()
  t.equal(row.name, project.name, 'nothing was written')

  // The token that authenticated before keeps its own budget.
  const known = await app.inject({ method: 'POST', url: RENAME, headers: { authorization: `Bearer ${writer}` }, payload: { project_id: project.publicId, name: 'Still served' } })
  t.equal(known.statusCode, 200, 'a token known to be valid is still served from the flooding address')
  t.equal(known.json().project.name, 'Still served')
  t.equal(known.headers['ratelimit-remaining'], '598', 'under its own per-token budget')

  // A valid token this process has not seen yet waits out the window like any other.
  const fresh = (await tokenFor(db, person.email)).token
  const unseen = await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${fresh}` } })
  t.equal(unseen.statusCode, 429)

  // Another address has its own budget: its failure is a 401, looked up.
  const elsewhere = await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${bogus()}` }, remoteAddress: '127.0.0.2' })
  t.equal(elsewhere.statusCode, 401)
  const elsewhereValid = await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${fresh}` }, remoteAddress: '127.0.0.2' })
  t.equal(elsewhereValid.statusCode, 200)

  // Health probes are never limited.
  t.equal((await app.inject({ method: 'GET', url: '/health/live' })).statusCode, 200)
})

t.test('successful requests spend nothing of the failure budget; a 401 of a once-valid token does', async (t) => {
  const { app, db, project, writer } = await setup(t, { AUTH_FAILURE_LIMIT_MAX: '3', AUTH_FAILURE_LIMIT_WINDOW_MS: '60000' })
  for (let i = 0; i < 50; i++) {
    const res = await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${writer}` } })
    t.equal(res.statusCode, 200)
  }
  // Missing, empty and unknown credentials all count as failures.
  const attempts = [
    {},
    { authorization: 'Bearer ' },
    { authorization: `Bearer ${bogus()}` },
    { authorization: `Bearer ${bogus()}` }
  ]
  const statuses = []
  for (const headers of attempts) statuses.push((await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers })).statusCode)
  t.same(statuses, [401, 401, 401, 429])

  // A known token that is revoked fails, is forgotten, and from then on waits like the rest.
  await db.updateTable('api_tokens').set({ revoked_at: new Date() }).execute()
  const revoked = await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${writer}` } })
  t.equal(revoked.statusCode, 401, 'looked up (it was known) and refused')
  const again = await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${writer}` } })
  t.equal(again.statusCode, 429, 'no longer known')
})

t.test('the window passes and the address may try again', async (t) => {
  const { app, project } = await setup(t, { AUTH_FAILURE_LIMIT_MAX: '2', AUTH_FAILURE_LIMIT_WINDOW_MS: '1000' })
  const attempt = async () => (await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${bogus()}` } })).statusCode
  t.same([await attempt(), await attempt(), await attempt()], [401, 401, 429])
  // The window (1 s, the least allowed) ends: the address is answered 401 again, not 429.
  t.ok(await waitFor(async () => (await attempt()) === 401, 30_000), 'once the window has passed, the address may try again')
})

t.test('AUTH_FAILURE_LIMIT_MAX=0 turns the limit off', async (t) => {
  const { app, project, lookups } = await setup(t, { AUTH_FAILURE_LIMIT_MAX: '0', RATE_LIMIT_MAX: '600' })
  const statuses = new Set<number>()
  for (let i = 0; i < 100; i++) {
    statuses.add((await app.inject({ method: 'GET', url: GET, query: { id: project.publicId }, headers: { authorization: `Bearer ${bogus()}` } })).statusCode)
  }
  t.same([...statuses], [401])
  t.equal(lookups(), 100, 'one lookup per refused token')
})

const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, enableOfflineQueue: false })
probe.on('error', () => {})
const redisUp = await probe.connect().then(() => true, () => false)
probe.disconnect()

t.test('with REDIS_URL two instances share one failure budget per address', { skip: redisUp ? false : `no Redis at ${REDIS_URL}` }, async (t) => {
  const address = `127.${randomBytes(1)[0]}.${randomBytes(1)[0]}.7` // a key of this run alone
  const env = { REDIS_URL, AUTH_FAILURE_LIMIT_MAX: '4', AUTH_FAILURE_LIMIT_WINDOW_MS: '60000' }
  const one = await setup(t, env)
  const two = await setup(t, env)
  const attempt = async (app: typeof one.app) => (await app.inject({
    method: 'GET', url: GET, query: { id: one.project.publicId }, headers: { authorization: `Bearer ${bogus()}` }, remoteAddress: address
  })).statusCode
  t.same([await attempt(one.app), await attempt(two.app), await attempt(one.app), await attempt(two.app), await attempt(one.app), await attempt(two.app)],
    [401, 401, 401, 401, 429, 429])
})
