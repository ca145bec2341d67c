// A statement's plan, for test/db/plans.test.ts: the statement the app sent,
// prepared on a connection of db/index.ts, run under EXPLAIN with the parameters
// it was sent with, in a transaction rolled back.
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

/** What EXPLAIN (ANALYZE, FORMAT JSON) returns: one of these in a one-element array. */
export interface ExplainedPlan {
  Plan: PlanNode
  'Execution Time': number
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
