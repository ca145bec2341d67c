// Named statements on the embedded database, as pg keeps them on PostgreSQL
// (db/statements.ts gives the Project's statements and the changes' records a
// name while DB_STATEMENT_CACHE is on). PGlite's query() parses and plans every
// statement anew as the unnamed one: for the Project's read, more than half of its
// time on the database. A named statement is parsed once per database and then
// only bound and executed, through PGlite's own protocol messages, the steps its
// query() takes for an unnamed one.
import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite'

const { serialize } = protocol

type Message = Awaited<ReturnType<PGlite['execProtocol']>>['messages'][number]

export class NamedStatements {
  /** Each statement parsed on this database, by name: its parameters' type ids. */
  readonly #parameterTypes = new Map<string, number[]>()

  constructor (private readonly pglite: PGlite) {}

  /** Runs the statement `name` stands for (`sql`), parsing it the first time. */
  async query (name: string, sql: string, params: unknown[]): Promise<Results> {
    const messages: Message[] = []
    try {
      const types = this.#parameterTypes.get(name) ?? await this.#prepare(name, sql)
      const values = params.map((value, i) => value === null || value === undefined ? null : this.#serialize(value, types[i]))
      messages.push(
        ...await this.#send(serialize.bind({ statement: name, values })),
        ...await this.#send(serialize.describe({ type: 'P' })),
        ...await this.#send(serialize.execute({}))
      )
    } finally {
      // Ends the exchange, and after an error lets the next statement be read.
      messages.push(...await this.#send(serialize.sync()))
      await this.pglite.syncToFs()
    }
    return parse.parseResults(messages, this.pglite.parsers)[0]!
  }

  /** Parses `sql` as `name`; its parameters' types. */
  async #prepare (name: string, sql: string): Promise<number[]> {
    await this.#send(serialize.parse({ name, text: sql, types: [] }))
    const described = await this.#send(serialize.describe({ type: 'S', name }))
    const types = described.flatMap((message) => message.name === 'parameterDescription' ? (message as unknown as { dataTypeIDs: number[] }).dataTypeIDs : [])
    this.#parameterTypes.set(name, types)
    return types
  }

  /** A value as PGlite's query() sends it: its type's serializer, else its text. */
  #serialize (value: unknown, type: number | undefined): string {
    const serializer = type === undefined ? undefined : this.pglite.serializers[type]
    return serializer === undefined ? String(value) : serializer(value)
  }

  async #send (message: Uint8Array): Promise<Message[]> {
    return (await this.pglite.execProtocol(message, { syncToFs: false, throwOnError: true })).messages
  }
}
