// When the fault is not the caller's: an unreachable database is a 503 with
// Retry-After, and a bug is a 500 that says nothing of its cause.
import Fastify from 'fastify'
import t from 'tap'
import app, { appOptions } from '../../src/app.js'
import { createDb } from '../../src/db/index.js'
import { build, buildOn, testConfig } from '../helper.js'

const BASE = '/api/external/v1/projects'

t.test('an unreachable database is 503 unavailable with Retry-After, for every operation', async (t) => {
  // Port 1 on loopback: nothing listens there, so connections are refused at once.
  const server = await buildOn(t, await createDb({ url: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMs: 2000 }))
  const headers = { authorization: 'Bearer pat_any' }
  const responses = await Promise.all([
    server.inject({ method: 'POST', url: `${BASE}/update_name`, headers, payload: { project_id: 'x', name: 'y' } }),
    server.inject({ method: 'POST', url: `${BASE}/update_description`, headers, payload: { project_id: 'x', description: '{}' } }),
    server.inject({ method: 'GET', url: `${BASE}/get?id=x`, headers })
  ])
  for (const res of responses) {
    t.equal(res.statusCode, 503)
    t.equal(res.headers['retry-after'], '1')
    t.same(res.json(), {
      statusCode: 503, error: 'Service Unavailable', code: 'unavailable', message: 'the database is unavailable; try again shortly'
    })
    t.notMatch(res.body, /ECONNREFUSED|127\.0\.0\.1/, 'the cause stays in the logs')
  }
  // Routing and authentication that need no database still answer as usual.
  const missing = await server.inject({ method: 'GET', url: `${BASE}/get?id=x` })
  t.equal(missing.statusCode, 401)
  const unknown = await server.inject({ method: 'GET', url: '/nowhere' })
  t.equal(unknown.statusCode, 404)
})

t.test('a bug is a 500 internal with a generic message, logged with the request id', async (t) => {
  const { db } = await build(t)
  const lines: string[] = []
  const config = testConfig({ LOG_LEVEL: 'error' })
  const logged = Fastify(appOptions(config, { logStream: { write: (line: string) => { lines.push(line) } } }))
  await logged.register(app, { db, config })
  logged.get('/boom', async () => {
    throw new Error('relation "secret_table" does not exist: SELECT * FROM secret_table')
  })
  t.teardown(() => logged.close())

  const res = await logged.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'req-42' } })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { statusCode: 500, error: 'Internal Server Error', code: 'internal', message: 'internal error' })
  t.notMatch(res.body, /secret_table|SELECT|at .*\.ts/)
  const entry = lines.map((l) => JSON.parse(l)).find((l) => l.level === 50)
  t.ok(entry, 'the error is logged')
  t.equal(entry.reqId, 'req-42')
  t.match(entry.err.message, /secret_table/)
})
