// When the fault is not the caller's: every database failure (no connection to
// be had, or a statement the database cannot serve now) is a 503 with
// Retry-After, logged at warn with its cause and no password; a bug is a 500 that
// says nothing of its cause.
import type { FastifyError } from 'fastify'
import t from '../tap.js'
import { DatabaseUnavailableError } from '../../src/db/dialect.js'
import { createDb } from '../../src/db/index.js'
import { databaseOptions } from '../database.js'
import { toApiError } from '../../src/http/errors.js'
import { build } from '../helper.js'

const BASE = '/api/external/v1/projects'

t.test('an unreachable database is 503 unavailable with Retry-After, for every operation', async (t) => {
  // Port 1 on loopback: nothing listens there, so connections are refused at once.
  const db = await createDb(databaseOptions({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', DB_CONNECTION_TIMEOUT_MS: '2000' }))
  t.teardown(() => db.destroy())
  const { app: server } = await build(t, { db })
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
  const lines: string[] = []
  const { app: logged } = await build(t, { env: { LOG_LEVEL: 'error' }, logStream: { write: (line: string) => { lines.push(line) } } })
  logged.get('/boom', async () => {
    throw new Error('relation "secret_table" does not exist: SELECT * FROM secret_table')
  })

  const res = await logged.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'req-42' } })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { statusCode: 500, error: 'Internal Server Error', code: 'internal', message: 'internal error' })
  t.notMatch(res.body, /secret_table|SELECT|at .*\.ts/)
  const entry = lines.map((l) => JSON.parse(l)).find((l) => l.level === 50)
  t.ok(entry, 'the error is logged')
  t.equal(entry.reqId, 'req-42')
  t.match(entry.err.message, /secret_table/)
})

/** An error shaped as pg raises it: a DatabaseError with its SQLSTATE, or a socket error with its errno. */
function pgError (code: string, message = `fake ${code}`): FastifyError {
  return Object.assign(new Error(message), { code }) as unknown as FastifyError
}

const UNAVAILABLE = { statusCode: 503, code: 'unavailable', headers: { 'retry-after': '1' } }

t.test('one mapping: every way of not getting a connection, and every statement the database cannot serve now, is 503 with Retry-After', async (t) => {
  // Whatever stopped the connection: each reaches the app as a DatabaseUnavailableError (db/dialect.ts).
  const onConnect = [
    '55000', // database does not allow connections (ALLOW_CONNECTIONS false)
    '57P03', // the database system is starting up / shutting down / in recovery mode
    '57P01', '57P02', // terminated by the administrator, crash shutdown
    '53300', '53000', // too many connections (for the server, the role or the database)
    '28P01', '28000', // password authentication failed, no such role or no pg_hba entry
    '3D000', // database does not exist
    '08001', '08006', // cannot connect, connection failure
    'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET'
  ]
  for (const code of onConnect) {
    const error = new DatabaseUnavailableError(pgError(code))
    t.equal(error.code, code, `${code}: the cause's code is kept for the log`)
    t.match(toApiError(error as unknown as FastifyError), UNAVAILABLE, `${code} on connecting: 503`)
  }
  for (const cause of [new Error('timeout exceeded when trying to connect'), new TypeError('anything at all'), 'a string', undefined]) {
    t.match(toApiError(new DatabaseUnavailableError(cause) as unknown as FastifyError), UNAVAILABLE, `${String(cause)} on connecting: 503`)
  }

  // A statement that fails on a connection already had.
  const onStatement = [
    '08003', '08006', '57P01', '57P02', '57P03', '57P04', '57P05', '57014', // connection lost, shutdown, statement timeout
    '53100', '53200', '53300', '58030', 'XX000', // disk full, out of memory, I/O error, internal error
    '40001', '40P01', '55P03', // serialization failure, deadlock, lock not available
    '25006', // read-only transaction: a standby, or default_transaction_read_only
    '42501', // privilege taken away
    'ECONNRESET', 'EPIPE', 'ETIMEDOUT'
  ]
  for (const code of onStatement) t.match(toApiError(pgError(code)), UNAVAILABLE, `${code} on a statement: 503`)
  for (const message of ['Connection terminated unexpectedly', 'Client has encountered a connection error and is not queryable']) {
    t.match(toApiError(pgError('', message)), UNAVAILABLE, `"${message}": 503`)
  }

  // Not the database's failure: the caller's (400) or a bug (500).
  t.match(toApiError(pgError('22P02')), { statusCode: 400, code: 'invalid_input' })
  t.match(toApiError(pgError('23514')), { statusCode: 400, code: 'invalid_input' })
  for (const code of ['23505', '42P01', '42703', '']) t.match(toApiError(pgError(code)), { statusCode: 500, code: 'internal' }, `${code || 'no code'}: 500`)
})

t.test('an unknown database host is 503 for every operation, logged once per request at warn with the cause and no password', async (t) => {
  const lines: Array<{ level: number, msg?: string, reqId?: string, err?: { type?: string, code?: string, message?: string } }> = []
  // .invalid never resolves (RFC 2606).
  const db = await createDb(databaseOptions({ DATABASE_URL: 'postgres://api:sekret-pw@db.example.invalid:5432/none', DB_CONNECTION_TIMEOUT_MS: '3000' }))
  t.teardown(() => db.destroy())
  const { app: server } = await build(t, { db, env: { LOG_LEVEL: 'info' }, logStream: { write: (line: string) => { lines.push(JSON.parse(line)) } } })
  const headers = { authorization: 'Bearer pat_any' }
  const responses = [
    await server.inject({ method: 'POST', url: `${BASE}/update_name`, headers, payload: { project_id: 'x', name: 'y' } }),
    await server.inject({ method: 'GET', url: `${BASE}/get?id=x`, headers })
  ]
  for (const res of responses) {
    t.equal(res.statusCode, 503)
    t.equal(res.headers['retry-after'], '1')
    t.same(res.json(), { statusCode: 503, error: 'Service Unavailable', code: 'unavailable', message: 'the database is unavailable; try again shortly' })
    t.notMatch(res.body, /invalid|ENOTFOUND|EAI_AGAIN/)
  }
  const outages = lines.filter((l) => l.msg === 'database unavailable')
  t.equal(outages.length, 2, 'one line per request')
  for (const line of outages) {
    t.equal(line.level, 40, 'at warn: the database is out, nothing here is broken')
    t.equal(line.err?.type, 'DatabaseUnavailableError')
    t.match(line.err?.code, /^(ENOTFOUND|EAI_AGAIN)$/, 'with the cause\'s code')
    t.match(line.err?.message, /db\.example\.invalid/, 'and its message')
    t.ok(line.reqId, 'and the request id')
  }
  t.notOk(lines.some((l) => l.level >= 50), 'nothing at error level')
  t.notMatch(JSON.stringify(lines), /sekret-pw/, 'the password is in no log line')
})
