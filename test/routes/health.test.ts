// /health/live and /health/ready: no token needed, no rate limit, and ready means
// the database answers and its schema is the one this build expects.
import { sql } from 'kysely'
import t from 'tap'
import { createDb } from '../../src/db/index.js'
import { expectedMigrations } from '../../src/db/migrate.js'
import { build, buildOn } from '../helper.js'

const latest = (await expectedMigrations()).at(-1)

t.test('live and ready on a migrated database', async (t) => {
  const { app: server } = await build(t, { env: { RATE_LIMIT_MAX: '1' } })
  for (let i = 0; i < 3; i++) {
    const live = await server.inject({ method: 'GET', url: '/health/live' })
    t.equal(live.statusCode, 200)
    t.same(live.json(), { status: 'live' })
    t.equal(live.headers['cache-control'], 'no-store')
    const ready = await server.inject({ method: 'GET', url: '/health/ready' })
    t.equal(ready.statusCode, 200)
    t.same(ready.json(), { status: 'ready', migration: latest })
  }
  const wrongMethod = await server.inject({ method: 'POST', url: '/health/ready' })
  t.equal(wrongMethod.statusCode, 405)
  t.equal(wrongMethod.headers.allow, 'GET, HEAD')
})

t.test('not ready when the schema is behind', async (t) => {
  const { app: server, db } = await build(t)
  await sql`DELETE FROM kysely_migration WHERE name = ${latest}`.execute(db)
  const ready = await server.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.equal(ready.headers['retry-after'], '1')
  t.same(ready.json(), {
    statusCode: 503,
    error: 'Service Unavailable',
    code: 'unavailable',
    message: `the database schema is at nothing, not ${latest}; run the migrations`
  })
  const live = await server.inject({ method: 'GET', url: '/health/live' })
  t.equal(live.statusCode, 200, 'the process is still live')
})

t.test('not ready when never migrated', async (t) => {
  const { app: server, db } = await build(t)
  await sql`DROP TABLE kysely_migration`.execute(db)
  const ready = await server.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.equal(ready.json().message, 'the database has not been migrated; run the migrations')
})

t.test('not ready when the database is unreachable, and says nothing of why', async (t) => {
  // Port 1 on loopback: nothing listens there.
  const server = await buildOn(t, await createDb({ url: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMs: 500 }))
  const ready = await server.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { statusCode: 503, error: 'Service Unavailable', code: 'unavailable', message: 'the database is unavailable' })
  t.notMatch(ready.body, /ECONNREFUSED|127\.0\.0\.1/)
  t.equal((await server.inject({ method: 'GET', url: '/health/live' })).statusCode, 200)
})
