// Explaining the app's statements for test/db/plans.test.ts (test/explain.ts):
// parameters written as literals the database reads as the values pg binds; and a
// prepared statement explained with them runs, and what it wrote is rolled back.
import t from './tap.js'
import { sql } from 'kysely'
import { explainPrepared, sqlLiteral, withPrepared } from './explain.js'
import { createTestDatabase } from './database.js'

t.test('parameters as literals: the database reads each as the value pg binds', async (t) => {
  const { db, close } = await createTestDatabase()
  t.teardown(close)
  const values: Array<[unknown, string]> = [
    [Buffer.from([0, 1, 0xfe, 0x27]), 'bytea'],
    ["it's a name", 'text'],
    [['3f0d2a4e-7c1b-4e55-9a43-0b6f3f3f1a10', '00000000-0000-0000-0000-000000000001'], 'uuid[]'],
    [[], 'uuid[]'],
    [JSON.stringify({ type: 'doc', text: "O'Brien \\ \"quoted\"" }), 'jsonb'],
    [42, 'int'],
    [true, 'boolean'],
    [null, 'text'],
    [undefined, 'text']
  ]
  for (const [value, type] of values) {
    const { rows: [row] } = await sql<{ same: boolean }>`SELECT ${sql.raw(`${sqlLiteral(value)}::${type}`)} IS NOT DISTINCT FROM ${value ?? null}::${sql.raw(type)} AS same`.execute(db)
    t.equal(row!.same, true, `${type} ${JSON.stringify(value)}`)
  }
  t.equal(sqlLiteral(null), 'NULL')
  t.equal(sqlLiteral("a'b"), "'a''b'")
})

t.test('a prepared statement explained with parameters runs with them, and what it wrote is rolled back', async (t) => {
  const { db, close } = await createTestDatabase()
  t.teardown(close)
  const name = "Explained 'once'"
  const { plans, left } = await db.connection().execute(async (connection) => {
    const plans = await withPrepared(connection, 'INSERT INTO companies (name) VALUES ($1) RETURNING id',
      async () => [await explainPrepared(connection, [name], { timing: false }), await explainPrepared(connection, [name], { timing: true })])
    // Prepared statements are the session's: asked on the same connection.
    const { rows } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE name = 'explained'`.execute(connection)
    return { plans, left: rows }
  })
  for (const plan of plans) {
    t.same([plan.Plan['Node Type'], plan.Plan.Operation, plan.Plan['Relation Name']], ['ModifyTable', 'Insert', 'companies'])
    t.equal((plan.Plan as { 'Actual Rows'?: number })['Actual Rows'], 1, 'it ran, inserting one row')
    t.type(plan['Execution Time'], 'number')
  }
  t.equal((plans[1]!.Plan['Actual Total Time'] ?? 0) > 0, true, 'timed: each node has its time')
  t.equal(plans[0]!.Plan['Actual Total Time'], undefined, 'untimed: no node has')
  t.same(await db.selectFrom('companies').select('id').where('name', '=', name).execute(), [], 'nothing of it is left')
  t.same(left, [], 'and the statement is deallocated')
})
