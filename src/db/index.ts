// The Kysely instance: real PostgreSQL through `pg` when a URL is given, else an
// embedded PGlite (in memory, or persisted under a data directory).
import { Kysely, PostgresDialect, type LogConfig } from 'kysely'
import pg from 'pg'
import type { Database } from './types.js'

export type Db = Kysely<Database>

export interface DbOptions {
  /** A postgres:// URL; without one the embedded database is used. */
  url?: string | undefined
  /** Where PGlite keeps its files; in memory when absent. */
  dataDir?: string | undefined
  poolSize?: number | undefined
  statementTimeoutMs?: number | undefined
  connectionTimeoutMs?: number | undefined
  log?: LogConfig | undefined
}

// Dates stay `YYYY-MM-DD` strings: turning them into a Date would shift them by the
// process time zone.
const DATE_OID = 1082

export async function createDb (options: DbOptions): Promise<Db> {
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
      statement_timeout: options.statementTimeoutMs ?? 10000,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === DATE_OID ? (value: string) => value : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser
      }
    })
    // An idle client that loses its connection must not take the process down.
    pool.on('error', () => {})
    return new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: options.log })
  }
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('kysely-pglite-dialect')
  ])
  const pglite = await PGlite.create(options.dataDir ?? 'memory://', {
    parsers: { [DATE_OID]: (value: string) => value }
  })
  return new Kysely<Database>({ dialect: new PGliteDialect(pglite), log: options.log })
}

/** The database options the environment asks for. */
export function dbOptions (config: {
  DATABASE_URL?: string | undefined
  DATA_DIR: string
  DB_POOL_SIZE: number
  DB_STATEMENT_TIMEOUT_MS: number
  DB_CONNECTION_TIMEOUT_MS: number
}): DbOptions {
  return {
    url: config.DATABASE_URL,
    dataDir: config.DATABASE_URL ? undefined : config.DATA_DIR,
    poolSize: config.DB_POOL_SIZE,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectionTimeoutMs: config.DB_CONNECTION_TIMEOUT_MS
  }
}
