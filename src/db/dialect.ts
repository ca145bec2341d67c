// The PostgreSQL dialect the API runs on: kysely's, with two differences. Failing
// to obtain a connection, for whatever reason PostgreSQL or the network gives
// (refused, unknown host, timed out, starting up, shutting down, too many
// connections, database gone or closed to connections, authentication), is one
// named error: the database is unavailable, which is not a bug in this service.
// And the statements compiled by prepare() go to the server by name.
import { PostgresDialect, PostgresDriver, type DatabaseConnection, type Driver, type PostgresDialectConfig } from 'kysely'
import pg from 'pg'
import { statementName } from './prepared.js'

/** No connection to the database could be had; `cause` says why, for the log. */
export class DatabaseUnavailableError extends Error {
  /** The cause's SQLSTATE or system error code (ECONNREFUSED, ENOTFOUND…), when it has one. */
  readonly code: string | undefined

  constructor (cause: unknown) {
    super('no connection to the database could be obtained', { cause })
    this.name = 'DatabaseUnavailableError'
    const code = (cause as { code?: unknown } | null)?.code
    this.code = typeof code === 'string' ? code : undefined
  }
}

class ApiPostgresDriver extends PostgresDriver {
  override async acquireConnection (...args: Parameters<PostgresDriver['acquireConnection']>): Promise<DatabaseConnection> {
    try {
      return await super.acquireConnection(...args)
    } catch (error) {
      throw new DatabaseUnavailableError(error)
    }
  }
}

export class ApiPostgresDialect extends PostgresDialect {
  readonly #config: PostgresDialectConfig

  constructor (config: PostgresDialectConfig) {
    super(config)
    this.#config = config
  }

  override createDriver (): Driver {
    return new ApiPostgresDriver(this.#config)
  }
}

/**
 * A pg client that sends the statements of prepare() by name: PostgreSQL parses
 * them once per connection and may keep a generic plan, where an unnamed statement
 * is parsed and planned on every call (the aggregate's planning costs about as much
 * as running it). Kysely's connection calls query(text, values); any other form
 * passes through unchanged.
 */
export class NamedStatementsClient extends pg.Client {
  // pg's query() has a dozen overloads; this one forwards them all.
  override query (...args: any[]): any { // eslint-disable-line @typescript-eslint/no-explicit-any
    const [text, values] = args
    const name = typeof text === 'string' && args.length <= 2 ? statementName(text) : undefined
    return name === undefined ? super.query(...(args as Parameters<pg.Client['query']>)) : super.query({ name, text, values })
  }
}
