// Statements compiled once, at start. Building and compiling a large Kysely query
// (the project aggregate) costs a good share of a request's CPU time, though only
// its parameters ever change; a request fills in its values and runs the result
// with db.executeQuery, so it still goes through Kysely and its log hook.
import { createHash } from 'node:crypto'
import {
  createQueryId, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler,
  type Compilable, type CompiledQuery
} from 'kysely'
import type { Database } from './types.js'

// Compiles without a database: it never connects.
const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler()
  }
})

// The text of each statement compiled here, and the name it is prepared under on a
// PostgreSQL connection (see statementName).
const NAMES = new Map<string, string>()

/**
 * The server-side name for a statement compiled by prepare(), or undefined for any
 * other. Named statements are parsed and planned once per connection instead of on
 * every call, and these are the statements every request runs.
 */
export function statementName (text: string): string | undefined {
  return NAMES.get(text)
}

/**
 * Compiles a statement once, with a placeholder for each named value, and returns
 * what fills in the values of one call (run it with `db.executeQuery`). The values
 * must reach the statement as parameters, never inlined: checked here, at start.
 */
export function prepare<K extends string, R> (
  names: readonly K[],
  build: (db: Kysely<Database>, values: Record<K, string>) => Compilable<R>
): (values: Record<K, unknown>) => CompiledQuery<R> {
  const placeholders = Object.fromEntries(names.map((name) => [name, `\u0000${name}\u0000`])) as Record<K, string>
  const compiled = build(compiler, placeholders).compile()
  const slots = compiled.parameters.map((value) => names.find((name) => placeholders[name] === value))
  for (const name of names) {
    if (!slots.includes(name) || compiled.sql.includes(placeholders[name])) {
      throw new Error(`${name} must be a parameter of the statement`)
    }
  }
  NAMES.set(compiled.sql, `api_${createHash('sha256').update(compiled.sql).digest('hex').slice(0, 24)}`)
  return (values) => ({
    ...compiled,
    queryId: createQueryId(),
    parameters: slots.map((name, i) => name === undefined ? compiled.parameters[i] : values[name])
  })
}
