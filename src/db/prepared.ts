// Statements compiled once, at start. Building and compiling a large Kysely query
// (the project aggregate) costs a good share of a request's CPU time, though only
// its parameters ever change; a request fills in its values and runs the result
// with db.executeQuery, so it still goes through Kysely and its log hook.
import {
  createQueryId, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql,
  type Compilable, type CompiledQuery, type Expression, type RawBuilder
} from 'kysely'
import { nameStatement } from './statement-names.js'
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

/** An expression as SQL text, for a script that sends it as written (bench/pgbench.ts); it must take no parameter. */
export function sqlText (expression: RawBuilder<unknown>): string {
  const compiled = expression.compile(compiler)
  if (compiled.parameters.length > 0) throw new Error(`sqlText: the expression takes parameters: ${compiled.sql}`)
  return compiled.sql
}

/** The declaration of a value of type T that a statement takes. */
export class Value<T> {
  declare readonly type: T
}

/** Declares a value of type T: `prepare({ projectId: value<string>() }, …)`. */
export function value<T> (): Value<T> {
  return new Value<T>()
}

export type Declared = Record<string, Value<unknown>>

/** The values one call of the statement fills in. */
export type Values<D extends Declared> = { [K in keyof D]: D[K] extends Value<infer T> ? T : never }

/** What the statement's builder receives for each value: a parameter, nothing it could read or inline. */
export type ValueParameters<D extends Declared> = { [K in keyof D]: Expression<Values<D>[K]> }

/** The row a statement of prepare() returns: `type CompanyRow = RowOf<typeof FIND_COMPANY>`. */
export type RowOf<S> = S extends (values: never) => CompiledQuery<infer R> ? R : never

// Stands where a value goes while the statement is compiled; found again, by
// identity, among the compiled statement's parameters.
class Slot {
  constructor (readonly name: string) {}
}

/**
 * Compiles a statement once, with a parameter for each declared value, and returns
 * what fills in the values of one call (run it with `db.executeQuery`). The values
 * must reach the statement as parameters: checked here, at start.
 */
export function prepare<D extends Declared, R> (
  declared: D,
  build: (db: Kysely<Database>, values: ValueParameters<D>) => Compilable<R>
): (values: Values<D>) => CompiledQuery<R> {
  const names: Array<keyof D & string> = Object.keys(declared)
  const slots = new Map(names.map((name) => [name, new Slot(name)]))
  const parameter = <K extends keyof D & string>(name: K): ValueParameters<D>[K] => sql<Values<D>[K]>`${sql.val(slots.get(name))}`
  const parameters = {} as ValueParameters<D>
  for (const name of names) parameters[name] = parameter(name)
  const compiled = build(compiler, parameters).compile()
  const positions = compiled.parameters.map((parameter) => parameter instanceof Slot ? parameter.name : undefined)
  for (const name of names) {
    if (!positions.includes(name)) throw new Error(`${name} must be a parameter of the statement`)
  }
  nameStatement(compiled.sql)
  return (values) => ({
    ...compiled,
    queryId: createQueryId(),
    parameters: positions.map((name, i) => name === undefined ? compiled.parameters[i] : values[name])
  })
}
