// GET /api/external/v1/people/get_me: the token's person, for write and read-only
// tokens alike, every field from the person's row with the id in public form;
// include_manager accepted (Operately's only flag here), anything else refused;
// every unusable token a 401; the answer never cached.
import { sql } from 'kysely'
import t from '../../tap.js'
import { revokeToken } from '../../../src/auth/tokens.js'
import { decodeId, shortId } from '../../../src/ids.js'
import { build, client, createCompany, createPerson, expectInvalidInput, tokenFor } from '../../helper.js'

const { app, db } = await build(t)

const acme = await createCompany(db, 'Get Me Acme')
const globex = await createCompany(db, 'Get Me Globex')
const ada = await createPerson(db, acme.id, { fullName: 'Ada Lovelace', email: 'Ada.Lovelace@Acme.test', title: 'Analyst' })
// A guest with an avatar, so that every column holds something other than its default.
await db.updateTable('people').set({ avatar_url: 'https://cdn.acme.test/ada.png', type: 'guest' }).where('id', '=', ada.id).execute()
const bare = await createPerson(db, acme.id, { fullName: 'Bare Person', title: null })
const admin = await createPerson(db, acme.id, { fullName: 'Acme Admin', isAdmin: true })
const outsider = await createPerson(db, globex.id, { fullName: 'Otto Globex', title: 'Launch Manager' })
const suspended = await createPerson(db, acme.id, { fullName: 'Sam Suspended' })

const tokens = {
  adaWrite: await tokenFor(db, ada.email),
  adaRead: await tokenFor(db, ada.email, { readOnly: true }),
  bare: await tokenFor(db, bare.email),
  admin: await tokenFor(db, admin.email, { readOnly: true }),
  outsider: await tokenFor(db, outsider.email)
}

const PERSON_KEYS = ['avatar_url', 'email', 'full_name', 'id', 'title', 'type']

/** The Person the contract says the row stands for, from the database. */
async function personFromRow (id: string) {
  const row = await db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  return { id: shortId(row.id), full_name: row.full_name, email: row.email, title: row.title, avatar_url: row.avatar_url, type: row.type }
}

t.test("a write token and a read-only token: the token's person, every field from its row", async (t) => {
  const expected = await personFromRow(ada.id)
  t.strictSame(expected, {
    id: shortId(ada.id),
    full_name: 'Ada Lovelace',
    email: 'Ada.Lovelace@Acme.test',
    title: 'Analyst',
    avatar_url: 'https://cdn.acme.test/ada.png',
    type: 'guest'
  }, 'the row holds what the test set')
  for (const token of [tokens.adaWrite, tokens.adaRead]) {
    const res = await client(app, token.token).getMe()
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    t.equal(res.headers['cache-control'], 'no-store')
    const body = res.json()
    t.strictSame(Object.keys(body), ['me'], 'only `me`')
    t.strictSame(Object.keys(body.me).sort(), PERSON_KEYS, 'exactly the Person fields')
    t.strictSame(body.me, expected)
    t.match(body.me.id, /^[0-9A-Za-z]{22}$/, 'the short public id, not a UUID')
    t.equal(decodeId(body.me.id), ada.id, 'which decodes to the row')
  }
})

t.test('nulls stay null; each token answers its own person, in any company', async (t) => {
  const cases = [[tokens.bare, bare.id], [tokens.admin, admin.id], [tokens.outsider, outsider.id]] as const
  for (const [token, id] of cases) {
    const res = await client(app, token.token).getMe()
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), { me: await personFromRow(id) })
  }
  const me = (await client(app, tokens.bare.token).getMe()).json().me
  t.equal(me.title, null)
  t.equal(me.avatar_url, null)
  t.equal(me.type, 'human')
})

t.test('include_manager=true and =false are accepted and change nothing', async (t) => {
  const api = client(app, tokens.adaWrite.token)
  const plain = await api.getMe()
  const queries: Array<Record<string, string>> = [
    { include_manager: 'true' }, { include_manager: 'false' }
  ]
  for (const query of queries) {
    const res = await api.getMe(query)
    t.equal(res.statusCode, 200, JSON.stringify(query))
    t.equal(res.body, plain.body, 'the same bytes')
  }
})

t.test('an unknown query parameter or a flag that is not true/false is 400 naming it', async (t) => {
  const api = client(app, tokens.adaWrite.token)
  expectInvalidInput(t, await api.getMe({ id: shortId(bare.id) }), '/id')
  expectInvalidInput(t, await api.getMe({ manager: 'true' }), '/manager')
  expectInvalidInput(t, await api.getMe({ include_manager: 'yes' }), '/include_manager')
  expectInvalidInput(t, await api.getMe({ include_manager: '1' }), '/include_manager')
  expectInvalidInput(t, await api.getMe({ include_manager: 'TRUE' }), '/include_manager')
  expectInvalidInput(t, await api.getMe({ include_manager: '' }), '/include_manager')
  // Operately's get_me has include_manager alone: any other include_* flag is unknown.
  expectInvalidInput(t, await api.getMe({ include_permissions: 'true' }), '/include_permissions')
  expectInvalidInput(t, await api.getMe({ include_evil: 'true' }), '/include_evil')
  const res = await api.getMe({ email: 'x@y.test' })
  t.strictSame(res.json(), {
    statusCode: 400, error: 'Bad Request', code: 'invalid_input', message: 'email is not allowed',
    details: [{ path: '/email', message: 'is not allowed' }]
  })
  t.equal(res.headers['cache-control'], 'no-store')
})

t.test('an unknown, revoked, expired or suspended owner\'s token, or none, is 401', async (t) => {
  const revoked = await tokenFor(db, ada.email)
  t.ok(await revokeToken(db, revoked.id))
  const expired = await tokenFor(db, ada.email, { expiresInDays: 1 })
  await db.updateTable('api_tokens').set({ expires_at: sql`now() - interval '1 second'` }).where('id', '=', expired.id).execute()
  const ofSuspended = await tokenFor(db, suspended.email)
  t.equal((await client(app, ofSuspended.token).getMe()).statusCode, 200, 'usable before its owner is suspended')
  await db.updateTable('people').set({ suspended_at: sql`now()` }).where('id', '=', suspended.id).execute()

  const cases: Array<[string, string | undefined, string, boolean]> = [
    ['unknown', `${tokens.adaWrite.token.slice(0, -4)}AAAA`, 'invalid token', true],
    ['made up', 'not-a-token', 'invalid token', true],
    ['revoked', revoked.token, 'token has been revoked', true],
    ['expired', expired.token, 'token has expired', true],
    ['suspended owner', ofSuspended.token, "token's owner is suspended", true],
    ['missing', undefined, 'missing bearer token in the Authorization header', false]
  ]
  for (const [what, token, message, invalid] of cases) {
    const res = await client(app, token).getMe()
    t.equal(res.statusCode, 401, what)
    t.strictSame(res.json(), { statusCode: 401, error: 'Unauthorized', code: 'unauthenticated', message }, what)
    t.equal(res.headers['www-authenticate'], invalid ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"', what)
    t.equal(res.headers['cache-control'], 'no-store', what)
  }
})

t.test('get_me is a query: POST is 405', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/api/external/v1/people/get_me', headers: { authorization: `Bearer ${tokens.adaWrite.token}` }, payload: {} })
  t.equal(res.statusCode, 405)
  t.equal(res.json().code, 'method_not_allowed')
})
