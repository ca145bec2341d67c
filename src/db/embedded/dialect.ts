// Kysely's side of the embedded database: PostgreSQL's adapter, compiler and
// introspector (PGlite is PostgreSQL), and a driver whose connections are sessions
// of the database thread, so that a transaction Kysely opens holds that thread for
// its own statements only.
import {
  type CompiledQuery, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler,
  type DatabaseConnection, type Dialect, type Driver, type Kysely, type QueryResult, type TransactionSettings
} from 'kysely'
import { beginTransaction, commitTransaction } from '../dialect.js'
import { preparedName } from '../statements.js'
import type { EmbeddedDatabase } from './database.js'

export interface EmbeddedDialectConfig {
  database: EmbeddedDatabase
}

/** One request's connection: a session of the database thread. */
class EmbeddedConnection implements DatabaseConnection {
  constructor (readonly config: EmbeddedDialectConfig, readonly session: number) {}

  async executeQuery<R> (compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const sql = compiledQuery.sql
    const { rows, command, rowCount } = await this.config.database.query(this.session, sql, [...compiledQuery.parameters], preparedName(sql))
    // Kysely counts the rows of an update or delete from this.
    const counted = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE'
    return { numAffectedRows: counted && rowCount !== undefined ? BigInt(rowCount) : undefined, rows: rows as R[] }
  }

  /** Runs a transaction command; returns the command tag PostgreSQL completed it with. */
  async control (text: 'commit' | 'rollback'): Promise<string | undefined> {
    return (await this.config.database.query(this.session, text, [])).command
  }

  streamQuery<R> (): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('nothing in this service streams rows')
  }
}

class EmbeddedDriver implements Driver {
  constructor (readonly config: EmbeddedDialectConfig) {}

  async init (): Promise<void> {}

  async acquireConnection (): Promise<EmbeddedConnection> {
    return new EmbeddedConnection(this.config, this.config.database.session())
  }

  async beginTransaction (connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await beginTransaction(connection, settings)
  }

  async commitTransaction (connection: EmbeddedConnection): Promise<void> {
    await commitTransaction(connection)
  }

  async rollbackTransaction (connection: EmbeddedConnection): Promise<void> {
    await connection.control('rollback')
  }

  async releaseConnection (connection: EmbeddedConnection): Promise<void> {
    await this.config.database.release(connection.session)
  }

  async destroy (): Promise<void> {
    await this.config.database.close()
  }
}

export class EmbeddedDialect implements Dialect {
  constructor (readonly config: EmbeddedDialectConfig) {}

  createAdapter () { return new PostgresAdapter() }
  createDriver () { return new EmbeddedDriver(this.config) }
  createIntrospector (db: Kysely<unknown>) { return new PostgresIntrospector(db) }
  createQueryCompiler () { return new PostgresQueryCompiler() }
}
