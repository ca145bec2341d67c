// The PostgreSQL dialect the API runs on: kysely's adapter, compiler and
// introspector, with a driver of its own for two reasons. Failing to obtain a
// connection, for whatever reason PostgreSQL or the network gives (refused, unknown
// host, timed out, starting up, shutting down, too many connections, database gone
// or closed to connections, authentication), is one named error: the database is
// unavailable, which is not a bug in this service.
import {
  AbortedTransactionError, CompiledQuery, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler,
  type DatabaseConnection, type Dialect, type Driver, type Kysely, type QueryResult, type TransactionSettings
} from 'kysely'
import type pg from 'pg'
import { preparedName } from './statements.js'

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

/** Starts a transaction with Kysely's settings (both drivers: this one and embedded.ts's). */
export async function beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
  const modes = [settings.isolationLevel && `isolation level ${settings.isolationLevel}`, settings.accessMode].filter(Boolean)
  await connection.executeQuery(CompiledQuery.raw(modes.length > 0 ? `start transaction ${modes.join(' ')}` : 'begin'))
}

/**
 * Commits, and fails when PostgreSQL did not: it completes COMMIT with a ROLLBACK
 * tag if an earlier statement error left the transaction aborted.
 */
export async function commitTransaction (connection: { control: (text: 'commit') => Promise<string | undefined> }): Promise<void> {
  if (await connection.control('commit') === 'ROLLBACK') throw new AbortedTransactionError()
}

export interface ApiPostgresDialectConfig {
  pool: pg.Pool
}

/** One pooled pg client, lent to Kysely until released. */
class ApiPostgresConnection implements DatabaseConnection {
  readonly #client: pg.PoolClient
  #discarded = false

  constructor (client: pg.PoolClient) {
    this.#client = client
  }

  async executeQuery<R> (compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#discarded) throw new Error('the connection has been discarded')
    const text = compiledQuery.sql
    const values = [...compiledQuery.parameters]
    const name = preparedName(text)
    const { command, rowCount, rows } = await this.#client.query<R & pg.QueryResultRow>(name === undefined ? { text, values } : { name, text, values })
    // Kysely counts the rows of an update or delete from this.
    const counted = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE'
    return { numAffectedRows: counted && rowCount !== null ? BigInt(rowCount) : undefined, rows }
  }

  /** Runs a transaction command; returns the command tag PostgreSQL completed it with. */
  async control (text: 'commit' | 'rollback'): Promise<string> {
    if (this.#discarded) throw new Error('the connection has been discarded')
    return (await this.#client.query(text)).command
  }

  streamQuery<R> (): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('nothing in this service streams rows')
  }

  /** A failed rollback leaves the session in an unknown state: it goes back to the pool to be closed. */
  discard (): void {
    this.#discarded = true
  }

  release (): void {
    this.#client.release(this.#discarded)
  }
}

class ApiPostgresDriver implements Driver {
  readonly #config: ApiPostgresDialectConfig

  constructor (config: ApiPostgresDialectConfig) {
    this.#config = config
  }

  async init (): Promise<void> {}

  async acquireConnection (): Promise<ApiPostgresConnection> {
    let client
    try {
      client = await this.#config.pool.connect()
    } catch (error) {
      throw new DatabaseUnavailableError(error)
    }
    return new ApiPostgresConnection(client)
  }

  async beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await beginTransaction(connection, settings)
  }

  async commitTransaction (connection: ApiPostgresConnection): Promise<void> {
    await commitTransaction(connection)
  }

  async rollbackTransaction (connection: ApiPostgresConnection): Promise<void> {
    try {
      await connection.control('rollback')
    } catch (error) {
      connection.discard()
      throw error
    }
  }

  async releaseConnection (connection: ApiPostgresConnection): Promise<void> {
    connection.release()
  }

  async destroy (): Promise<void> {
    await this.#config.pool.end()
  }
}

export class ApiPostgresDialect implements Dialect {
  readonly #config: ApiPostgresDialectConfig

  constructor (config: ApiPostgresDialectConfig) {
    this.#config = config
  }

  createAdapter () { return new PostgresAdapter() }
  createDriver () { return new ApiPostgresDriver(this.#config) }
  createIntrospector (db: Kysely<unknown>) { return new PostgresIntrospector(db) }
  createQueryCompiler () { return new PostgresQueryCompiler() }
}
