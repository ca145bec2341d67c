// Reading EXPLAIN's plans for npm run bench:explain (bench/plan.ts): a plan's time
// by kind of node, without the time of the nodes under each, a CTE Scan counting
// nothing of its own; foreign-key checks apart from other triggers; parameters
// written as literals the database reads as the values pg binds; and a prepared
// statement explained with them runs, and what it wrote is rolled back.
import t from 'tap'
import { sql } from 'kysely'
import { explainPrepared, nodeLabel, sqlLiteral, summarizePlan, withPrepared, type ExplainedPlan } from '../../bench/plan.js'
import { createTestDatabase } from '../database.js'

const plan: ExplainedPlan = {
  'Execution Time': 12,
  Plan: {
    'Node Type': 'Nested Loop',
    'Actual Total Time': 10,
    'Actual Loops': 1,
    Plans: [
      {
        'Node Type': 'ModifyTable',
        Operation: 'Insert',
        'Relation Name': 'notifications',
        'Actual Total Time': 6,
        'Actual Loops': 1,
        Plans: [{ 'Node Type': 'Index Scan', 'Relation Name': 'people', 'Index Name': 'people_pkey', 'Actual Total Time': 0.02, 'Actual Loops': 100 }]
      },
      // Reads the CTE whose plan is the Insert above: its time is the Insert's.
      { 'Node Type': 'CTE Scan', 'Actual Total Time': 6.5, 'Actual Loops': 1 },
      { 'Node Type': 'Index Scan', 'Relation Name': 'people', 'Index Name': 'people_pkey', 'Actual Total Time': 0.5, 'Actual Loops': 2 }
    ]
  },
  Triggers: [
    { 'Trigger Name': 'RI_ConstraintTrigger_c_1', 'Constraint Name': 'notifications_person_id_fkey', Relation: 'notifications', Time: 1.5, Calls: 100 },
    { 'Trigger Name': 'RI_ConstraintTrigger_c_2', 'Constraint Name': 'notifications_project_id_fkey', Relation: 'notifications', Time: 1.25, Calls: 100 },
    { 'Trigger Name': 'subscriptions_children_insert', Relation: 'subscriptions', Time: 0.25, Calls: 1 }
  ]
}

t.test('a plan: each kind of node by its own time, foreign-key checks and other triggers apart', async (t) => {
  const summary = summarizePlan(plan)
  t.equal(summary.executionMs, 12)
  const nodes = Object.fromEntries(summary.nodes.map((n) => [n.node, Number(n.ms.toFixed(6))]))
  t.same(nodes, {
    'Insert on notifications': 4,
    // 100 loops of 0.02 ms under the insert, 2 of 0.5 ms under the loop.
    'Index Scan on people using people_pkey': 3,
    // 10 less the insert's 6, the CTE Scan's 6.5 and the index scan's 1, at least 0.
    'Nested Loop': 0
  }, 'the CTE Scan counts nothing of its own')
  t.same(summary.nodes.map((n) => n.node), ['Insert on notifications', 'Index Scan on people using people_pkey', 'Nested Loop'], 'greatest first')
  t.same(summary.foreignKeys, [
    { constraint: 'notifications_person_id_fkey', ms: 1.5, calls: 100 },
    { constraint: 'notifications_project_id_fkey', ms: 1.25, calls: 100 }
  ])
  t.same(summary.otherTriggers, [{ trigger: 'subscriptions_children_insert', ms: 0.25, calls: 1 }])
  t.equal(nodeLabel({ 'Node Type': 'ModifyTable', Operation: 'Update', 'Relation Name': 'projects' }), 'Update on projects')
  t.equal(nodeLabel({ 'Node Type': 'Hash Join' }), 'Hash Join')
})

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
    t.equal(nodeLabel(plan.Plan), 'Insert on companies')
    t.equal((plan.Plan as { 'Actual Rows'?: number })['Actual Rows'], 1, 'it ran, inserting one row')
    t.type(plan['Execution Time'], 'number')
  }
  t.equal((plans[1]!.Plan['Actual Total Time'] ?? 0) > 0, true, 'timed: each node has its time')
  t.equal(plans[0]!.Plan['Actual Total Time'], undefined, 'untimed: no node has')
  t.same(await db.selectFrom('companies').select('id').where('name', '=', name).execute(), [], 'nothing of it is left')
  t.same(left, [], 'and the statement is deallocated')
})
