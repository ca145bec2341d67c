// The operator CLI fills a fresh install without the demo: a company (with its
// general space), its people, a space with members, a token; then the API shows
// that team to the token's person. The command lines run in this process on a
// database of this file's own (test/operator-cli.ts; cli.test.ts runs some as child
// processes too).
import Fastify from 'fastify'
import { sql } from 'kysely'
import t from './tap.js'
import app, { appOptions } from '../src/app.js'
import { decodeId } from '../src/ids.js'
import { client, testConfig } from './helper.js'
import { cliDatabase, runInProcess } from './operator-cli.js'

const database = await cliDatabase(t, 'cli-team-test')
const { cli, cliAll, withDb, env } = database
/** The variables of a command line that must not open the database: one that cannot be reached. */
const unreachable = { ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/never-opened', DATA_DIR: '' }

const NORTHWIND = 'Northwind Traders'
let token: string

t.test('bad usage exits 2 with one message, before touching the database', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['companies', 'create'], /companies create needs --name <name>/],
    [['companies', 'create', '--name', '  '], /--name must not be blank/],
    [['people', 'add', '--company', NORTHWIND, '--email', 'not-an-address', '--name', 'X'], /--email must be an e-mail address/],
    [['people', 'add', '--company', NORTHWIND, '--email', 'x@northwind.test', '--name', 'X', '--role', 'owner'], /--role takes member, admin, guest, not 'owner'/],
    [['people', 'add', '--email', 'x@northwind.test', '--name', 'X'], /people add needs --company/],
    [['people', 'add', '--company', NORTHWIND, '--email', 'x@northwind.test', '--name', 'A\tB'], /--name must not contain control characters/],
    [['spaces', 'add-members', '--company', NORTHWIND, '--space', 'General'], /needs --member <email>/],
    [['spaces', 'create', '--company', NORTHWIND, '--name', 'Ops', '--member', ' '], /--member must not be blank/],
    [['spaces', 'rename'], /unknown spaces subcommand 'rename'/]
  ]
  // Given a database that cannot be reached, they still exit 2: none of them opens it.
  const runs = await Promise.all(cases.map(([args]) => runInProcess(args, unreachable)))
  cases.forEach(([args, message], i) => {
    t.equal(runs[i]!.code, 2, args.join(' '))
    t.match(runs[i]!.stderr, message, args.join(' '))
    t.equal(runs[i]!.stdout, '', args.join(' '))
  })
  const help = await runInProcess(['help'], unreachable)
  t.match(help.stdout, /companies create[\s\S]*people add[\s\S]*spaces create[\s\S]*tokens create/)
})

t.test('a company, its people, a space with members and a token', async (t) => {
  t.equal((await cli('migrate')).code, 0, 'migrated')
  const created = await cli('companies', 'create', '--name', ` ${NORTHWIND} `, '--json')
  t.equal(created.code, 0, created.stderr)
  const company = JSON.parse(created.stdout)
  t.match(company, { id: /^[0-9A-Za-z]{22}$/, name: NORTHWIND, general_space: { id: /^[0-9A-Za-z]{22}$/, name: 'General' } })

  const [ada, bob, gus] = await cliAll([
    ['people', 'add', '--company', NORTHWIND, '--email', 'ada@northwind.test', '--name', 'Ada Lovelace', '--title', 'CTO', '--role', 'admin', '--json'],
    ['people', 'add', '--company', company.id, '--email', 'bob@northwind.test', '--name', 'Bob Byte'],
    ['people', 'add', '--company', NORTHWIND, '--email', 'gus@partner.test', '--name', 'Gus Guest', '--role', 'guest']
  ])
  t.equal(ada!.code, 0, ada!.stderr)
  t.strictSame(JSON.parse(ada!.stdout), {
    id: JSON.parse(ada!.stdout).id, company: NORTHWIND, email: 'ada@northwind.test', full_name: 'Ada Lovelace', title: 'CTO', role: 'admin'
  })
  t.equal(bob!.stdout, 'added Bob Byte <bob@northwind.test> to Northwind Traders as a member\n')
  t.equal(gus!.stdout, 'added Gus Guest <gus@partner.test> to Northwind Traders as a guest\n')

  const space = await cli('spaces', 'create', '--company', NORTHWIND, '--name', 'Engineering', '--member', 'ADA@northwind.test', '--member', 'gus@partner.test', '--json')
  t.equal(space.code, 0, space.stderr)
  t.match(JSON.parse(space.stdout), { name: 'Engineering', company: NORTHWIND, members: ['ada@northwind.test', 'gus@partner.test'] })

  const issued = await cli('tokens', 'create', '--email', 'ada@northwind.test', '--json')
  t.equal(issued.code, 0, issued.stderr)
  token = JSON.parse(issued.stdout).token

  await withDb(async (db) => {
    const people = await db.selectFrom('people as p').innerJoin('companies as c', 'c.id', 'p.company_id')
      .select(['p.email', 'p.full_name', 'p.title', 'p.type', 'p.is_admin', 'c.name']).orderBy('p.email').execute()
    t.strictSame(people, [
      { email: 'ada@northwind.test', full_name: 'Ada Lovelace', title: 'CTO', type: 'human', is_admin: true, name: NORTHWIND },
      { email: 'bob@northwind.test', full_name: 'Bob Byte', title: null, type: 'human', is_admin: false, name: NORTHWIND },
      { email: 'gus@partner.test', full_name: 'Gus Guest', title: null, type: 'guest', is_admin: false, name: NORTHWIND }
    ])
    const members = await db.selectFrom('space_members as m').innerJoin('spaces as s', 's.id', 'm.space_id')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select(['s.name', 'p.email']).orderBy('s.name').orderBy('p.email').execute()
    t.strictSame(members, [
      { name: 'Engineering', email: 'ada@northwind.test' },
      { name: 'Engineering', email: 'gus@partner.test' },
      { name: 'General', email: 'ada@northwind.test' },
      { name: 'General', email: 'bob@northwind.test' }
    ], 'members join the general space, the guest does not')
    const row = await db.selectFrom('companies').select(['id', 'general_space_id']).executeTakeFirstOrThrow()
    t.equal(row.id, decodeId(company.id))
    t.equal(row.general_space_id, decodeId(company.general_space.id))
  })
})

t.test('refusals exit 1 with the reason and write nothing', async (t) => {
  const counts = () => withDb(async (db) => {
    const n = (table: 'companies' | 'people' | 'spaces' | 'space_members') =>
      db.selectFrom(table).select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow().then((r) => r.n)
    return { companies: await n('companies'), people: await n('people'), spaces: await n('spaces'), members: await n('space_members') }
  })
  const before = await counts()
  const cases: Array<[string[], RegExp]> = [
    [['companies', 'create', '--name', NORTHWIND], /a company named 'Northwind Traders' exists already/],
    [['people', 'add', '--company', NORTHWIND, '--email', 'Ada@Northwind.test', '--name', 'Ada Again'], /a person with e-mail Ada@Northwind.test exists already/],
    [['people', 'add', '--company', 'Southwind', '--email', 'sam@southwind.test', '--name', 'Sam'], /no company named 'Southwind'/],
    [['spaces', 'create', '--company', NORTHWIND, '--name', 'Sales', '--member', 'bob@northwind.test', '--member', 'nobody@northwind.test'], /no person with e-mail nobody@northwind.test in Northwind Traders/],
    [['spaces', 'create', '--company', NORTHWIND, '--name', 'Engineering'], /Northwind Traders has a space named 'Engineering' already/],
    [['spaces', 'add-members', '--company', NORTHWIND, '--space', 'Marketing', '--member', 'bob@northwind.test'], /no space named 'Marketing'/]
  ]
  const runs = await cliAll(cases.map(([args]) => args))
  cases.forEach(([args, message], i) => {
    t.equal(runs[i]!.code, 1, args.join(' '))
    t.match(runs[i]!.stderr, message, args.join(' '))
    t.notMatch(runs[i]!.stderr, /\n\s+at /, 'no stack')
    t.equal(runs[i]!.stdout, '')
  })
  t.strictSame(await counts(), before, 'nothing written, not even the space whose member was unknown')
})

t.test('members added later; the listings', async (t) => {
  // The listings run once the members are added (concurrent children would race it).
  const [added] = await cliAll([
    ['spaces', 'add-members', '--company', NORTHWIND, '--space', 'Engineering', '--member', 'bob@northwind.test', '--member', 'ada@northwind.test']
  ])
  const [companies, people, spaces] = await cliAll([
    ['companies', 'list'], ['people', 'list', '--company', NORTHWIND, '--json'], ['spaces', 'list', '--company', NORTHWIND]
  ])
  t.equal(added!.stdout, 'space Engineering of Northwind Traders; members: ada@northwind.test, bob@northwind.test, gus@partner.test\n',
    'ada, a member already, stays one')
  t.match(companies!.stdout, /^ID\s+NAME\s+PEOPLE\s+SPACES\n[0-9A-Za-z]{22}\s+Northwind Traders\s+3\s+2\n$/)
  t.strictSame(JSON.parse(people!.stdout).map((p: { email: string, role: string }) => [p.email, p.role]),
    [['ada@northwind.test', 'admin'], ['bob@northwind.test', 'member'], ['gus@partner.test', 'guest']])
  t.match(spaces!.stdout, /Engineering\s+ada@northwind.test,bob@northwind.test,gus@partner.test\n[0-9A-Za-z]{22}\s+General \(general\)\s+ada@northwind.test,bob@northwind.test/)
})

t.test("the API shows the token's person their team", async (t) => {
  const api = Fastify(appOptions(testConfig()))
  await api.register(app, { db: await database.open(), config: testConfig() })
  t.teardown(() => api.close())
  const ada = client(api, token)
  const me = await ada.getMe()
  t.equal(me.statusCode, 200)
  t.match(me.json().me, { full_name: 'Ada Lovelace', email: 'ada@northwind.test', title: 'CTO', type: 'human' })
  const res = await ada.getCompany({ include_people: 'true', include_admins: 'true', include_general_space: 'true' })
  t.equal(res.statusCode, 200)
  const company = res.json().company
  t.equal(company.name, NORTHWIND)
  t.equal(company.member_count, 3)
  t.strictSame(company.people.map((p: { email: string }) => p.email), ['ada@northwind.test', 'bob@northwind.test', 'gus@partner.test'])
  t.strictSame(company.admins.map((p: { email: string }) => p.email), ['ada@northwind.test'])
  t.match(company.general_space, { name: 'General', is_member: true })
})
