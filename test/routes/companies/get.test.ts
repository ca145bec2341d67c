// GET /api/external/v1/companies/get: the token's person's company. Its public id and
// name, how many people it has not counting suspended ones, and each of Operately's
// include_* flags ("true"/"false", the way its CLI sends them) filling one field, null
// otherwise: its administrators and owners (each a Person with their level), its
// people (with their levels when asked), the caller's permissions, its general
// space. Anything else refused.
import { sql } from 'kysely'
import t from '../../tap.js'
import { decodeId, shortId } from '../../../src/ids.js'
import { build, client, createCompany, createPerson, createSpace, expectInvalidInput, tokenFor } from '../../helper.js'

const { app, db } = await build(t)

const acme = await createCompany(db, 'Acme Companies Test')
const globex = await createCompany(db, 'Globex Companies Test')
const empty = await createCompany(db, 'Nobody Works Here')

// Names that sort the same way under any collation.
const alice = await createPerson(db, acme.id, { fullName: 'Alice Member', title: 'Engineer' })
const zoe = await createPerson(db, acme.id, { fullName: 'Zoe Admin', isAdmin: true, title: 'COO' })
const bea = await createPerson(db, acme.id, { fullName: 'Bea Admin', isAdmin: true })
await db.updateTable('people').set({ avatar_url: 'https://cdn.acme.test/bea.png', type: 'guest' }).where('id', '=', bea.id).execute()
const sid = await createPerson(db, acme.id, { fullName: 'Sid Suspended Admin', isAdmin: true, suspended: true })
const mo = await createPerson(db, acme.id, { fullName: 'Mo Suspended', suspended: true })
const otto = await createPerson(db, globex.id, { fullName: 'Otto Globex', isAdmin: true })

const api = {
  alice: client(app, (await tokenFor(db, alice.email)).token),
  aliceReadOnly: client(app, (await tokenFor(db, alice.email, { readOnly: true })).token),
  zoe: client(app, (await tokenFor(db, zoe.email)).token),
  otto: client(app, (await tokenFor(db, otto.email)).token)
}

const COMPANY_KEYS = ['admins', 'general_space', 'id', 'member_count', 'name', 'owners', 'people', 'permissions']
const NOTHING_INCLUDED = { admins: null, owners: null, people: null, permissions: null, general_space: null }

/** A Person as the contract shows the row. */
async function person (id: string) {
  const row = await db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  return { id: shortId(row.id), full_name: row.full_name, email: row.email, title: row.title, avatar_url: row.avatar_url, type: row.type }
}

/** A Person with their level on the company: admins 100, anyone else 10. */
async function member (id: string) {
  const row = await db.selectFrom('people').select('is_admin').where('id', '=', id).executeTakeFirstOrThrow()
  return { ...await person(id), access_level: row.is_admin ? 100 : 10 }
}

/** People of the company who are not suspended, counted by the database. */
async function activeCount (companyId: string): Promise<number> {
  const row = await db.selectFrom('people').select(sql<number>`count(*)::int`.as('n'))
    .where('company_id', '=', companyId).where('suspended_at', 'is', null).executeTakeFirstOrThrow()
  return row.n
}

t.test("the caller's company: its public id, name and member count without suspended people; no lists unless asked", async (t) => {
  const res = await api.alice.getCompany()
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.strictSame(Object.keys(body), ['company'])
  t.strictSame(Object.keys(body.company).sort(), COMPANY_KEYS)
  t.strictSame(body.company, { id: shortId(acme.id), name: 'Acme Companies Test', member_count: 3, ...NOTHING_INCLUDED },
    'Alice, Zoe and Bea; Sid and Mo are suspended')
  t.equal(await activeCount(acme.id), 3, 'the database agrees')
  t.equal(decodeId(body.company.id), acme.id)

  t.equal((await api.aliceReadOnly.getCompany()).body, res.body, 'a read-only token gets the same answer')
  t.strictSame((await api.otto.getCompany()).json(),
    { company: { id: shortId(globex.id), name: 'Globex Companies Test', member_count: 1, ...NOTHING_INCLUDED } },
    "another company's person gets their own")
})

t.test('the member count follows people joining, being suspended and coming back', async (t) => {
  const count = async () => (await api.zoe.getCompany()).json().company.member_count
  t.equal(await count(), 3)
  const added = []
  for (let i = 0; i < 4; i++) added.push(await createPerson(db, acme.id, { fullName: `Joiner ${i}` }))
  await createPerson(db, acme.id, { fullName: 'Joined Suspended', suspended: true })
  await createPerson(db, empty.id, { fullName: 'Elsewhere' })
  t.equal(await count(), 7, 'four joined; a suspended joiner and another company\'s person do not count')
  await db.updateTable('people').set({ suspended_at: sql`now()` }).where('id', 'in', [added[0]!.id, added[1]!.id]).execute()
  t.equal(await count(), 5, 'two suspended')
  await db.updateTable('people').set({ suspended_at: null }).where('id', '=', added[0]!.id).execute()
  t.equal(await count(), 6, 'one back')
  t.equal(await count(), await activeCount(acme.id))
  await db.deleteFrom('people').where('id', 'in', added.map((p) => p.id)).execute()
  t.equal(await count(), 3)
})

t.test('include_admins=true: the administrators who are not suspended, by name, each a full Person with their level', async (t) => {
  const res = await api.alice.getCompany({ include_admins: 'true' })
  t.equal(res.statusCode, 200)
  const company = res.json().company
  t.strictSame(company.admins, [await member(bea.id), await member(zoe.id)], 'Bea then Zoe; suspended Sid left out; Alice is no admin')
  t.strictSame(company.admins[0], {
    id: shortId(bea.id), full_name: 'Bea Admin', email: bea.email, title: null, avatar_url: 'https://cdn.acme.test/bea.png', type: 'guest', access_level: 100
  })
  t.equal(company.owners, null, 'owners only when asked for')
  t.equal(company.people, null, 'people only when asked for')
  t.equal(company.member_count, 3)
  t.notOk(company.admins.some((a: { id: string }) => a.id === shortId(sid.id)))

  t.equal((await api.alice.getCompany({ include_admins: 'false' })).json().company.admins, null, 'false: null')
  t.strictSame((await api.otto.getCompany({ include_admins: 'true' })).json().company.admins, [await member(otto.id)])
})

t.test('include_people=true: the people who are not suspended, by name', async (t) => {
  const company = (await api.alice.getCompany({ include_people: 'true', include_admins: 'true' })).json().company
  t.strictSame(company.people, [await person(alice.id), await person(bea.id), await person(zoe.id)])
  t.notOk(company.people.some((p: { id: string }) => p.id === shortId(mo.id)), 'suspended Mo left out')
  t.equal(company.people.length, company.member_count, 'as many as the count')
  t.equal(company.admins.length, 2)
})

t.test('include_owners=true: the people with full access to the company, its admins here, each with their level', async (t) => {
  const company = (await api.alice.getCompany({ include_owners: 'true' })).json().company
  t.strictSame(company.owners, [await member(bea.id), await member(zoe.id)])
  t.ok(company.owners.every((o: { access_level: number }) => o.access_level === 100))
  t.equal(company.admins, null, 'admins only when asked for')
  t.strictSame((await api.alice.getCompany({ include_owners: 'true', include_admins: 'true' })).json().company.admins, company.owners)
})

t.test('include_members_access_levels=true: the people, each with their level on the company', async (t) => {
  const company = (await api.alice.getCompany({ include_members_access_levels: 'true' })).json().company
  t.strictSame(company.people, [await member(alice.id), await member(bea.id), await member(zoe.id)])
  t.strictSame(company.people.map((p: { access_level: number }) => p.access_level), [10, 100, 100], 'Alice views, the admins have full access')
  const both = (await api.alice.getCompany({ include_members_access_levels: 'true', include_people: 'true' })).json().company
  t.strictSame(both.people, company.people)
})

t.test("include_permissions=true: what the token's person may do with the company, by Operately's rules", async (t) => {
  const KEYS = ['can_create_space', 'can_edit_details', 'can_edit_members', 'can_edit_members_access_levels', 'can_edit_trusted_email_domains',
    'can_invite_members', 'can_manage_admins', 'can_manage_billing', 'can_manage_owners', 'can_remove_members', 'can_restore_members', 'can_view', 'is_admin']
  const ofAlice = (await api.alice.getCompany({ include_permissions: 'true' })).json().company.permissions
  t.strictSame(Object.keys(ofAlice).sort(), KEYS)
  t.strictSame(Object.entries(ofAlice).filter(([, v]) => v).map(([k]) => k), ['can_view'], 'a member may only view it')
  const ofZoe = (await api.zoe.getCompany({ include_permissions: 'true' })).json().company.permissions
  t.ok(Object.values(ofZoe).every((v) => v === true), 'an admin has full access')
  t.strictSame((await api.aliceReadOnly.getCompany({ include_permissions: 'true' })).json().company.permissions, ofAlice,
    "a read-only token answers for its person's standing")
})

t.test('include_general_space=true: the company-wide space, and whether the caller is in it', async (t) => {
  t.equal((await api.alice.getCompany({ include_general_space: 'true' })).json().company.general_space, null, 'a company without one')
  const general = await createSpace(db, acme.id, [alice.id], 'General')
  await db.updateTable('companies').set({ general_space_id: general.id }).where('id', '=', acme.id).execute()
  t.teardown(() => db.deleteFrom('spaces').where('id', '=', general.id).execute())
  t.strictSame((await api.alice.getCompany({ include_general_space: 'true' })).json().company.general_space,
    { id: shortId(general.id), name: 'General', is_member: true, is_company_space: true })
  t.strictSame((await api.zoe.getCompany({ include_general_space: 'true' })).json().company.general_space,
    { id: shortId(general.id), name: 'General', is_member: false, is_company_space: true })
  t.equal((await api.otto.getCompany({ include_general_space: 'true' })).json().company.general_space, null, "another company's is not theirs")
  t.equal((await api.alice.getCompany()).json().company.general_space, null, 'only when asked for')

  // Deleting the space leaves the company, without one.
  await db.deleteFrom('spaces').where('id', '=', general.id).execute()
  const row = await db.selectFrom('companies').select('general_space_id').where('id', '=', acme.id).executeTakeFirstOrThrow()
  t.equal(row.general_space_id, null)
})

t.test('every flag at false is the same bytes as none; all of them fill every field', async (t) => {
  const plain = await api.alice.getCompany()
  const flags = ['include_admins', 'include_owners', 'include_people', 'include_members_access_levels', 'include_permissions', 'include_general_space']
  for (const flag of flags) t.equal((await api.alice.getCompany({ [flag]: 'false' })).body, plain.body, `${flag}=false`)
  const all = (await api.alice.getCompany(Object.fromEntries(flags.map((f) => [f, 'true'])))).json().company
  t.ok(all.admins && all.owners && all.people && all.permissions, 'filled')
  t.ok(all.people.every((p: { access_level?: number }) => typeof p.access_level === 'number'))
})

t.test('a flag that is not "true" or "false", or an unknown parameter, is 400 naming it', async (t) => {
  for (const value of ['1', '0', 'yes', 'True', 'FALSE', '', 'null']) {
    expectInvalidInput(t, await api.alice.getCompany({ include_admins: value }), '/include_admins')
    expectInvalidInput(t, await api.alice.getCompany({ include_people: value }), '/include_people')
    expectInvalidInput(t, await api.alice.getCompany({ include_owners: value }), '/include_owners')
  }
  expectInvalidInput(t, await api.alice.getCompany({ id: shortId(globex.id) }), '/id')
  const res = await api.alice.getCompany({ company_id: shortId(globex.id) })
  t.strictSame(res.json(), {
    statusCode: 400, error: 'Bad Request', code: 'invalid_input', message: 'company_id is not allowed',
    details: [{ path: '/company_id', message: 'is not allowed' }]
  })
  t.equal(res.headers['cache-control'], 'no-store')
})

t.test('without a usable token: 401', async (t) => {
  for (const token of [undefined, 'not-a-token']) {
    const res = await client(app, token).getCompany()
    t.equal(res.statusCode, 401)
    t.equal(res.json().code, 'unauthenticated')
  }
  const ofSuspended = await tokenFor(db, mo.email)
  const res = await client(app, ofSuspended.token).getCompany({ include_admins: 'true' })
  t.equal(res.statusCode, 401)
  t.equal(res.json().message, "token's owner is suspended")
})
