// Authentication and authorization of API tokens (contract part 2), for each of
// the three operations: where the token may travel, which tokens are refused and
// with which WWW-Authenticate, the order of the checks, how use is recorded and
// how tokens are stored.
import { createHash } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import type { Test } from 'tap'
import t from '../tap.js'
import { revokeToken, tokenDigest, TOKEN_PREFIX } from '../../src/auth/tokens.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'

const BASE = '/api/external/v1/projects'
const REALM = 'Bearer realm="api"'
const INVALID_TOKEN = 'Bearer realm="api", error="invalid_token"'
const INSUFFICIENT_SCOPE = 'Bearer realm="api", error="insufficient_scope"'

const ctx = await build(t)
const { app, db } = ctx

const company = await createCompany(db)
const alice = await createPerson(db, company.id)
const reader = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [alice.id, reader.id])
const ORIGINAL_NAME = 'Auth Fixture'
const ORIGINAL_DESCRIPTION = '{"type":"doc","content":[]}'
const project = await createProject(db, space, {
  name: ORIGINAL_NAME, description: ORIGINAL_DESCRIPTION, access: { space: 70 }
})
await addContributor(db, project.id, alice.id, 'champion')

const write = await tokenFor(db, alice.email)
const readOnly = await tokenFor(db, reader.email, { readOnly: true })

type Operation = 'update_name' | 'update_description' | 'get'
const OPERATIONS: Operation[] = ['update_name', 'update_description', 'get']

function validBody (op: Operation): Record<string, string> {
  return op === 'update_name'
    ? { project_id: project.publicId, name: ORIGINAL_NAME }
    : { project_id: project.publicId, description: ORIGINAL_DESCRIPTION }
}

interface CallOptions {
  headers?: Record<string, string>
  query?: Record<string, string>
  /** A raw payload (sent as is) or an object (sent as JSON); the op's valid body by default. */
  payload?: string | Buffer | object
}

/** Calls one operation the way a client does, with only the headers given. */
function call (op: Operation, options: CallOptions = {}): Promise<LightMyRequestResponse> {
  const headers = { ...options.headers }
  if (op === 'get') {
    return app.inject({ method: 'GET', url: `${BASE}/get`, query: { id: project.publicId, ...options.query }, headers })
  }
  const payload = options.payload ?? validBody(op)
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
    headers['content-type'] ??= 'application/json'
  }
  return app.inject({ method: 'POST', url: `${BASE}/${op}`, query: options.query ?? {}, headers, payload })
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

function assertError (t: Test, res: LightMyRequestResponse, status: number, code: string, wwwAuthenticate?: string) {
  t.equal(res.statusCode, status, `status ${status}: ${res.body.slice(0, 200)}`)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.strictSame(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'])
  t.equal(body.statusCode, status)
  t.equal(body.error, STATUS_CODES[status])
  t.equal(body.code, code)
  t.type(body.message, 'string')
  t.ok(body.message.length > 0)
  if (wwwAuthenticate !== undefined) t.equal(res.headers['www-authenticate'], wwwAuthenticate)
}

function assert401 (t: Test, res: LightMyRequestResponse, invalidToken: boolean) {
  assertError(t, res, 401, 'unauthenticated', invalidToken ? INVALID_TOKEN : REALM)
}

async function projectRow () {
  return db.selectFrom('projects').select(['name', 'description', 'updated_at']).where('id', '=', project.id).executeTakeFirstOrThrow()
}

async function activityCount (): Promise<number> {
  const row = await db.selectFrom('activities').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('project_id', '=', project.id).executeTakeFirstOrThrow()
  return Number(row.n)
}

for (const op of OPERATIONS) {
  t.test(`${op}: a missing, foreign-scheme or empty credential is 401 without error=`, async (t) => {
    assert401(t, await call(op), false)
    for (const authorization of ['Basic abc', 'Token abc', `Basic ${write.token}`, `Token ${write.token}`, write.token]) {
      assert401(t, await call(op, { headers: { authorization } }), false)
    }
    for (const authorization of ['Bearer', 'Bearer    ', 'bearer ', '  Bearer  ']) {
      assert401(t, await call(op, { headers: { authorization } }), false)
    }
  })

  t.test(`${op}: an unusable presented token is 401 with error="invalid_token"`, async (t) => {
    assert401(t, await call(op, { headers: bearer('pat_unknownunknownunknownunknownunknownunknown1') }), true)
    assert401(t, await call(op, { headers: bearer('x') }), true)

    const revoked = await tokenFor(db, alice.email)
    t.ok(await revokeToken(db, revoked.id))
    assert401(t, await call(op, { headers: bearer(revoked.token) }), true)

    const revokedInDb = await tokenFor(db, alice.email)
    await db.updateTable('api_tokens').set({ revoked_at: sql`now() - interval '1 day'` }).where('id', '=', revokedInDb.id).execute()
    assert401(t, await call(op, { headers: bearer(revokedInDb.token) }), true)

    const expired = await tokenFor(db, alice.email, { expiresInDays: 30 })
    t.equal((await call(op, { headers: bearer(expired.token) })).statusCode, 200, 'usable before it expires')
    await db.updateTable('api_tokens').set({ expires_at: sql`now() - interval '1 second'` }).where('id', '=', expired.id).execute()
    assert401(t, await call(op, { headers: bearer(expired.token) }), true)

    const owner = await createPerson(db, company.id)
    await db.insertInto('space_members').values({ space_id: space.id, person_id: owner.id }).execute()
    const suspended = await tokenFor(db, owner.email)
    t.equal((await call(op, { headers: bearer(suspended.token) })).statusCode, 200, 'usable before suspension')
    await db.updateTable('people').set({ suspended_at: sql`now()` }).where('id', '=', owner.id).execute()
    assert401(t, await call(op, { headers: bearer(suspended.token) }), true)

    const bornSuspended = await createPerson(db, company.id, { suspended: true })
    assert401(t, await call(op, { headers: bearer((await tokenFor(db, bornSuspended.email)).token) }), true)
  })

  t.test(`${op}: the scheme is case-insensitive and whitespace is tolerated`, async (t) => {
    for (const authorization of [
      `Bearer ${write.token}`,
      `bearer ${write.token}`,
      `BEARER ${write.token}`,
      `bEaReR ${write.token}`,
      `Bearer     ${write.token}`,
      `  Bearer ${write.token}  `,
      ` \tBearer   ${write.token}\t `
    ]) {
      const res = await call(op, { headers: { authorization } })
      t.equal(res.statusCode, 200, JSON.stringify(authorization))
      t.equal(res.json().project.id, project.publicId)
    }
  })

  t.test(`${op}: a token anywhere but the Authorization header is ignored`, async (t) => {
    for (const query of [{ access_token: write.token }, { token: write.token }] as Array<Record<string, string>>) {
      assert401(t, await call(op, { query }), false)
    }
    for (const headers of [
      { 'x-api-key': write.token },
      { 'x-access-token': write.token },
      { cookie: `token=${write.token}` },
      { 'x-api-key': write.token, authorization: 'Basic abc' }
    ] as Array<Record<string, string>>) {
      assert401(t, await call(op, { headers }), false)
    }
  })
}

t.test('a read-only token may not call a mutation: 403 read_only_token, nothing written', async (t) => {
  const before = await projectRow()
  const activities = await activityCount()
  const headers = bearer(readOnly.token)

  const rename = await call('update_name', { headers, payload: { project_id: project.publicId, name: 'Read-only rename' } })
  assertError(t, rename, 403, 'read_only_token', INSUFFICIENT_SCOPE)
  const describe = await call('update_description', { headers, payload: { project_id: project.publicId, description: '"read-only"' } })
  assertError(t, describe, 403, 'read_only_token', INSUFFICIENT_SCOPE)

  const after = await projectRow()
  t.equal(after.name, before.name)
  t.equal(after.description, before.description)
  t.equal(after.updated_at.getTime(), before.updated_at.getTime())
  t.equal(await activityCount(), activities, 'no activity recorded')
})

t.test('a read-only token may call the query', async (t) => {
  const res = await call('get', { headers: bearer(readOnly.token) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().project.id, project.publicId)
  t.equal(res.headers['www-authenticate'], undefined)
})

t.test('authentication comes before the body, validation and the project lookup', async (t) => {
  const tooLarge = JSON.stringify({ project_id: project.publicId, name: 'x'.repeat(1024 * 1024 + 1) })
  const cases: Array<[string, CallOptions]> = [
    ['invalid body', { payload: { project_id: 1, name: null, extra: true } }],
    ['malformed JSON', { payload: '{bad' }],
    ['unknown project', { payload: { project_id: 'no-such-project-0000000000000000000000', name: 'x' } }],
    ['wrong content type', { payload: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
    ['text/plain', { payload: 'hello', headers: { 'content-type': 'text/plain' } }],
    ['body over 1 MiB', { payload: tooLarge }]
  ]
  const activities = await activityCount()
  for (const op of ['update_name', 'update_description'] as const) {
    for (const [label, options] of cases) {
      assert401(t, await call(op, options), false)
      const withBadToken = await call(op, { ...options, headers: { ...options.headers, ...bearer('pat_nope') } })
      assert401(t, withBadToken, true)
      t.comment(`${op} ${label}`)
    }
  }
  t.equal((await projectRow()).name, ORIGINAL_NAME)
  t.equal(await activityCount(), activities, 'nothing written')

  // The query: an unknown project, a missing id, an unknown parameter.
  assert401(t, await app.inject({ method: 'GET', url: `${BASE}/get?id=no-such-project-0000000000000000000000` }), false)
  assert401(t, await app.inject({ method: 'GET', url: `${BASE}/get` }), false)
  assert401(t, await app.inject({ method: 'GET', url: `${BASE}/get?id=x&foo=1` }), false)
  assert401(t, await app.inject({ method: 'GET', url: `${BASE}/get?id=x&id=y`, headers: bearer('pat_nope') }), true)
})

t.test('a read-only token is refused before its body is looked at', async (t) => {
  const headers = bearer(readOnly.token)
  for (const op of ['update_name', 'update_description'] as const) {
    assertError(t, await call(op, { headers, payload: { project_id: 1, extra: true } }), 403, 'read_only_token', INSUFFICIENT_SCOPE)
    assertError(t, await call(op, { headers, payload: '{bad' }), 403, 'read_only_token', INSUFFICIENT_SCOPE)
    assertError(t, await call(op, { payload: 'x', headers: { ...headers, 'content-type': 'text/plain' } }), 403, 'read_only_token', INSUFFICIENT_SCOPE)
    assertError(t, await call(op, { payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 1) }), headers }), 403, 'read_only_token', INSUFFICIENT_SCOPE)
    assertError(t, await call(op, { headers, payload: { project_id: 'no-such-project', name: 'x' } }), 403, 'read_only_token', INSUFFICIENT_SCOPE)
  }
})

t.test('last_used_at is written on use, at most once a minute', async (t) => {
  const issued = await tokenFor(db, alice.email)
  const lastUsed = async () => (await db.selectFrom('api_tokens')
    .select(sql<string | null>`last_used_at::text`.as('at'))
    .where('id', '=', issued.id).executeTakeFirstOrThrow()).at
  const setLastUsed = (ago: string) => db.updateTable('api_tokens')
    .set({ last_used_at: sql`now() - ${ago}::interval` }).where('id', '=', issued.id).execute()

  t.equal(await lastUsed(), null, 'never used')

  t.equal((await call('get', { headers: bearer(issued.token) })).statusCode, 200)
  const first = await lastUsed()
  t.not(first, null, 'set by the first successful request')
  const firstRow = await db.selectFrom('api_tokens').select(sql<boolean>`last_used_at > now() - interval '1 minute'`.as('recent'))
    .where('id', '=', issued.id).executeTakeFirstOrThrow()
  t.equal(firstRow.recent, true)

  t.equal((await call('update_name', { headers: bearer(issued.token) })).statusCode, 200)
  t.equal((await call('get', { headers: bearer(issued.token) })).statusCode, 200)
  t.equal(await lastUsed(), first, 'not rewritten by requests within the minute')

  await setLastUsed('30 seconds')
  const halfMinute = await lastUsed()
  t.equal((await call('get', { headers: bearer(issued.token) })).statusCode, 200)
  t.equal(await lastUsed(), halfMinute, 'not rewritten 30 s after the last write')

  await setLastUsed('2 minutes')
  const stale = await lastUsed()
  t.equal((await call('get', { headers: bearer(issued.token) })).statusCode, 200)
  const refreshed = await lastUsed()
  t.not(refreshed, stale, 'refreshed after more than a minute')
  const check = await db.selectFrom('api_tokens')
    .select(sql<boolean>`last_used_at > ${stale}::timestamptz AND last_used_at > now() - interval '1 minute'`.as('fresh'))
    .where('id', '=', issued.id).executeTakeFirstOrThrow()
  t.equal(check.fresh, true)
})

t.test('api_tokens stores only the SHA-256 digest of a token', async (t) => {
  const issued = await tokenFor(db, alice.email)
  t.ok(issued.token.startsWith(TOKEN_PREFIX), 'recognisable prefix')
  t.ok(Buffer.from(issued.token.slice(TOKEN_PREFIX.length), 'base64url').length >= 32, 'at least 32 random bytes')

  const row = await db.selectFrom('api_tokens').select(sql<string>`encode(digest, 'hex')`.as('digest'))
    .where('id', '=', issued.id).executeTakeFirstOrThrow()
  t.equal(row.digest, createHash('sha256').update(issued.token).digest('hex'))
  t.equal(row.digest, tokenDigest(issued.token).toString('hex'))

  // No column, of any type, holds the token or its secret part.
  const secret = issued.token.slice(TOKEN_PREFIX.length)
  const leaks = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM api_tokens t
    WHERE position(${secret} IN row_to_json(t)::text) > 0 OR position(${issued.token} IN row_to_json(t)::text) > 0`.execute(db)
  t.equal(leaks.rows[0]!.n, 0)

  const columns = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'api_tokens' AND data_type IN ('text', 'character varying', 'character')`.execute(db)
  for (const { column_name } of columns.rows) {
    const hits = await sql<{ n: number }>`SELECT count(*)::int AS n FROM api_tokens WHERE ${sql.ref(column_name)} IN (${issued.token}, ${secret})`.execute(db)
    t.equal(hits.rows[0]!.n, 0, `${column_name} does not hold the token`)
  }

  const unique = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE tablename = 'api_tokens'`.execute(db)
  t.ok(unique.rows.some((r) => /UNIQUE/i.test(r.indexdef) && /\(digest\)/.test(r.indexdef)), 'unique index on digest')
})
