// Statements built once. Kysely builds and compiles a query each time it runs; for
// the Project (projects/query.ts, dozens of subqueries) that took longer than
// PostgreSQL took to answer it. A statement made here is built and compiled on
// its first run, with a marker in place of each argument, and later runs only put
// the arguments in the markers' places. It is also prepared under a name of its
// own, on each connection of PostgreSQL (dialect.ts asks `preparedName`) and once
// on the embedded database (embedded/named.ts), so that neither plans it anew each time.
//
// DB_STATEMENT_CACHE=false turns both off: each run then builds, compiles and
// plans its statement as Kysely does by itself; the answers are the same
// (test/db/statements.test.ts).
import { createHash } from 'node:crypto'
import { CompiledQuery, type Compilable, type Kysely } from 'kysely'
import type { Database } from './types.js'

/** What a statement's arguments may be: each takes the place of one parameter. */
type Argument = string | number | boolean | Buffer | readonly string[] | null

let enabled = true
const names = new Map<string, string>()

/** DB_STATEMENT_CACHE: on by default. */
export function cacheStatements (on: boolean): void {
  enabled = on
}

/** The name a statement made here is prepared under (PostgreSQL, the embedded database); undefined for any other SQL. */
export function preparedName (sql: string): string | undefined {
  return enabled ? names.get(sql) : undefined
}

const marker = (name: string) => `\u0000statement argument ${name}\u0000`

interface Template {
  sql: string
  /** Each parameter: an argument's name, or a value of the statement's own. */
  slots: Array<{ argument: string } | { value: unknown }>
}

function template<A extends Record<string, Argument>> (compile: (args: A) => CompiledQuery<unknown>, names: readonly string[]): Template {
  const markers = Object.fromEntries(names.map((name) => [name, marker(name)])) as unknown as A
  const compiled = compile(markers)
  const byMarker = new Map(names.map((name) => [marker(name), name]))
  const slots = compiled.parameters.map((value) => {
    const argument = typeof value === 'string' ? byMarker.get(value) : undefined
    return argument === undefined ? { value } : { argument }
  })
  for (const name of names) {
    if (compiled.sql.includes(marker(name))) throw new Error(`statement argument ${name} is written into the SQL, not passed as a parameter`)
    if (!slots.some((slot) => 'argument' in slot && slot.argument === name)) throw new Error(`statement argument ${name} is not used`)
  }
  return { sql: compiled.sql, slots }
}

/** Where a statement runs: the Kysely instance or a transaction. */
type Executor = Kysely<Database>

/**
 * A statement whose shape does not depend on its arguments: `build` makes the
 * query on `db` from them. Returns the rows.
 */
export function statement<A extends Record<string, Argument>, R> (argumentNames: ReadonlyArray<keyof A & string>,
  build: (db: Executor, args: A) => Compilable<R> & { execute: () => Promise<R[]> }) {
  let made: Template | null = null
  return async (db: Executor, args: A): Promise<R[]> => {
    if (!enabled) return await build(db, args).execute()
    if (made === null) {
      made = template((markers: A) => build(db, markers).compile(), argumentNames)
      names.set(made.sql, 's' + createHash('sha256').update(made.sql).digest('base64url').slice(0, 24))
    }
    const parameters = made.slots.map((slot) => 'argument' in slot ? args[slot.argument] : slot.value)
    return (await db.executeQuery(CompiledQuery.raw(made.sql, parameters) as CompiledQuery<R>)).rows
  }
}
