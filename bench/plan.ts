// A statement's plan as the server's statement gets it, and what it tells, for
// bench/explain.ts and test/db/plans.test.ts: the statement prepared (on a
// connection of db/index.ts, which plans it generically, as the server's named
// statements are), run under EXPLAIN with given parameters in a transaction rolled
// back; and what its execution spent in foreign-key checks, in other triggers, and
// in each kind of plan node.
import { createRequire } from 'node:module'
import { CompiledQuery } from 'kysely'
import type { Db } from '../src/db/index.js'

const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => string | Buffer | null }

/** One node of a JSON plan (the fields read here). */
export interface PlanNode {
  'Node Type': string
  /** A ModifyTable's: Insert, Update, Delete, Merge. */
  Operation?: string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Total Time'?: number
  'Actual Loops'?: number
  Plans?: PlanNode[]
}

/** A trigger's line of a JSON plan. */
export interface PlanTrigger {
  'Trigger Name': string
  'Constraint Name'?: string
  Relation?: string
  Time?: number
  Calls: number
}

/** What EXPLAIN (ANALYZE, FORMAT JSON) returns: one of these in a one-element array. */
export interface ExplainedPlan {
  Plan: PlanNode
  Triggers?: PlanTrigger[]
  'Execution Time': number
}

export interface PlanSummary {
  /** The statement's execution, triggers included (EXPLAIN's Execution Time). */
  executionMs: number
  /** Foreign-key checks: the triggers of constraints, by constraint, with their calls. */
  foreignKeys: Array<{ constraint: string, ms: number, calls: number }>
  /** Every other trigger, by name. */
  otherTriggers: Array<{ trigger: string, ms: number, calls: number }>
  /**
   * The plan's own time by kind of node (its type, relation and index), without the
   * time of the nodes under it, greatest first. A CTE Scan counts nothing of its own:
   * the first one to read a CTE runs the CTE's plan inside it, and that plan is
   * counted where it is in the tree, as the statement's other parts are.
   */
  nodes: Array<{ node: string, ms: number }>
}

/** `node`'s time over all its loops, in ms. */
function inclusive (node: PlanNode): number {
  return (node['Actual Total Time'] ?? 0) * (node['Actual Loops'] ?? 1)
}

/** A node's kind as a reader knows it: `Insert on notifications`, `Index Scan on people using people_pkey`. */
export function nodeLabel (node: PlanNode): string {
  return (node['Node Type'] === 'ModifyTable' && node.Operation !== undefined ? node.Operation : node['Node Type']) +
    (node['Relation Name'] === undefined ? '' : ` on ${node['Relation Name']}`) +
    (node['Index Name'] === undefined ? '' : ` using ${node['Index Name']}`)
}

/** What the plan's execution spent where (PlanSummary). */
export function summarizePlan (explained: ExplainedPlan): PlanSummary {
  const own = new Map<string, number>()
  const walk = (node: PlanNode): void => {
    const children = node.Plans ?? []
    if (node['Node Type'] !== 'CTE Scan') {
      const ms = Math.max(0, inclusive(node) - children.reduce((sum, child) => sum + inclusive(child), 0))
      own.set(nodeLabel(node), (own.get(nodeLabel(node)) ?? 0) + ms)
    }
    for (const child of children) walk(child)
  }
  walk(explained.Plan)
  const foreignKeys = new Map<string, { ms: number, calls: number }>()
  const otherTriggers = new Map<string, { ms: number, calls: number }>()
  for (const trigger of explained.Triggers ?? []) {
    const [map, key] = trigger['Constraint Name'] === undefined
      ? [otherTriggers, trigger['Trigger Name']]
      : [foreignKeys, trigger['Constraint Name']]
    const sum = map.get(key) ?? { ms: 0, calls: 0 }
    sum.ms += trigger.Time ?? 0
    sum.calls += trigger.Calls
    map.set(key, sum)
  }
  const byTime = <T extends { ms: number }>(list: T[]) => list.sort((a, b) => b.ms - a.ms)
  return {
    executionMs: explained['Execution Time'],
    foreignKeys: byTime([...foreignKeys].map(([constraint, sum]) => ({ constraint, ...sum }))),
    otherTriggers: byTime([...otherTriggers].map(([trigger, sum]) => ({ trigger, ...sum }))),
    nodes: byTime([...own].map(([node, ms]) => ({ node, ms })))
  }
}

/**
 * A statement parameter as an SQL literal of unknown type, written as `pg` writes
 * the value it binds (pg/lib/utils.js prepareValue: an array as an array literal,
 * a date, an object as JSON; a Buffer, which pg binds as binary, in bytea's hex
 * form): PostgreSQL reads it as the type of the parameter it is given for.
 */
export function sqlLiteral (value: unknown): string {
  const text = prepareValue(value)
  if (text === null) return 'NULL'
  const written = Buffer.isBuffer(text) ? `\\x${text.toString('hex')}` : String(text)
  return `'${written.replaceAll("'", "''")}'`
}

/** One connection of db/index.ts (`db.connection().execute`'s). */
type Connection = Pick<Db, 'executeQuery'>

/** `use`, with `text` prepared as `explained` on the connection meanwhile (PREPARE, then DEALLOCATE). */
export async function withPrepared<T> (connection: Connection, text: string, use: () => Promise<T>): Promise<T> {
  await connection.executeQuery(CompiledQuery.raw(`PREPARE explained AS ${text}`))
  try {
    return await use()
  } finally {
    await connection.executeQuery(CompiledQuery.raw('DEALLOCATE explained'))
  }
}

/**
 * The statement prepared by withPrepared, run with these parameters under EXPLAIN
 * (ANALYZE, with the clock read around every node unless `timing` is false) in a
 * transaction rolled back: what it writes is gone afterwards.
 */
export async function explainPrepared (connection: Connection, parameters: readonly unknown[], { timing }: { timing: boolean }): Promise<ExplainedPlan> {
  await connection.executeQuery(CompiledQuery.raw('BEGIN'))
  try {
    const options = timing ? 'ANALYZE, FORMAT JSON' : 'ANALYZE, TIMING FALSE, FORMAT JSON'
    const { rows } = await connection.executeQuery<{ 'QUERY PLAN': ExplainedPlan[] | string }>(
      CompiledQuery.raw(`EXPLAIN (${options}) EXECUTE explained(${parameters.map(sqlLiteral).join(', ')})`))
    // pg parses the JSON; PGlite hands it over as text.
    const plan = rows[0]!['QUERY PLAN']
    return (typeof plan === 'string' ? JSON.parse(plan) as ExplainedPlan[] : plan)[0]!
  } finally {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'))
  }
}
