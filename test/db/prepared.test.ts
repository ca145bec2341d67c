// The per-request statements (projects/get and the two mutations, each with its token check) go to
// PostgreSQL as named prepared statements, parsed once per connection; everything
// else stays unnamed; DB_PREPARED_STATEMENTS=false turns naming off. A value a
// statement declares must reach it as a parameter, or it is refused at start.
import { sql } from 'kysely'
import t from 'tap'
import { createDb } from '../../src/db/index.js'
import { prepare, value } from '../../src/db/prepared.js'
import { createTestDatabase, databaseOptions } from '../database.js'
import { build, client, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const skip = process.env.DATABASE_URL ? false : 'prepared statements are a property of PostgreSQL connections (set DATABASE_URL)'

async function preparedOnOneConnection (t: Tap, preparedStatements: boolean) {
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  // One connection, so the session that ran the requests is the one asked afterwards.
  const db = await createDb(databaseOptions({
    DATABASE_URL: database.url, DB_POOL_SIZE: '1', DB_PREPARED_STATEMENTS: String(preparedStatements)
  }))
  t.teardown(() => db.destroy())
  const { app: server } = await build(t, { db })
  const company = await createCompany(db)
  const person = await createPerson(db, company.id)
  const space = await createSpace(db, company.id)
  const project = await createProject(db, space, { access: { company: 70 } })
  const api = client(server, (await tokenFor(db, person.email)).token)
  for (let i = 0; i < 3; i++) {
    t.equal((await api.get(project.publicId)).statusCode, 200)
    const renamed = await api.updateName({ project_id: project.publicId, name: `Name ${i}` })
    t.equal(renamed.statusCode, 200)
    t.equal(renamed.json().project.name, `Name ${i}`)
    t.equal((await api.updateDescription({ project_id: project.publicId, description: `{"v":${i}}` })).statusCode, 200)
  }
  const { rows } = await sql<{ name: string, statement: string, generic_plans: string, custom_plans: string }>`SELECT name, statement, generic_plans::text, custom_plans::text FROM pg_prepared_statements ORDER BY statement`.execute(db)
  return rows
}

t.test('the per-request statements are prepared once per connection', { skip }, async (t) => {
  const rows = await preparedOnOneConnection(t, true)
  t.equal(rows.length, 3, 'get, update_name, update_description: one each, however often they ran')
  for (const row of rows) t.match(row.name, /^api_[0-9a-f]{24}$/)
  t.ok(rows.every((r) => /"api_tokens"/.test(r.statement)), 'each checks the token itself')
  t.equal(rows.filter((r) => /update "projects"/.test(r.statement)).length, 2, 'the two mutations')
  // PostgreSQL's default would plan the mutations anew on every call (src/db/statement-names.ts).
  t.same(rows.map((r) => [r.generic_plans, r.custom_plans]), [['3', '0'], ['3', '0'], ['3', '0']], 'each run on its generic plan, none planned anew')
})

t.test('the connections plan statements generically, on PostgreSQL and on the embedded database', async (t) => {
  const { db } = await build(t)
  const { rows: [row] } = await sql<{ plan_cache_mode: string }>`SHOW plan_cache_mode`.execute(db)
  t.equal(row?.plan_cache_mode, 'force_generic_plan')
})

t.test('DB_PREPARED_STATEMENTS=false sends every statement unnamed', { skip }, async (t) => {
  const rows = await preparedOnOneConnection(t, false)
  t.same(rows, [])
})

t.test('a declared value must reach its statement as a parameter, or the statement is refused at start', async (t) => {
  t.throws(() => prepare({ id: value<string>() }, (db) => db.selectFrom('people').select('id')),
    { message: 'id must be a parameter of the statement' }, 'a value the statement leaves out')
  t.throws(() => prepare({ id: value<string>() }, (db, { id }) => db.selectFrom('people').select(sql<string>`${sql.lit(id)}`.as('id'))),
    'a value written into the text')
  const find = prepare({ id: value<string>() }, (db, { id }) => db.selectFrom('people').select('id').where('id', '=', id).where('is_admin', '=', true))
  t.same(find({ id: 'a' }).parameters, ['a', true], 'each call fills in its values, the constants stay')
  t.not(find({ id: 'a' }).queryId, find({ id: 'a' }).queryId)
})
