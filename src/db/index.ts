// The Kysely instance: real PostgreSQL through `pg` when a URL is given, else an
// embedded PGlite (in memory, or persisted under a data directory).
import { Kysely, sql, type LogConfig } from 'kysely'
import pg from 'pg'
import type { Config } from '../config.js'
import { ApiPostgresDialect } from './dialect.js'
import { cacheStatements } from './statements.js'
import type { EmbeddedDatabase, EmbeddedOptions } from './embedded/index.js'
import type { Database } from './types.js'

export type Db = Kysely<Database>

const EMBEDDED = new WeakMap<Db, EmbeddedDatabase>()
const POOLS = new WeakMap<Db, pg.Pool>()

/** What must talk to the embedded database directly (the job engine) may run scripts of several statements. */
export interface EmbeddedScripts {
  exec: (sql: string) => Promise<Array<{ rows: unknown[] }>>
  /** Statements sent and not yet answered (the metrics' pool gauges). */
  inFlight: () => number
}

/** The embedded database under `db`, for what must talk to it directly (the job engine); null on PostgreSQL. */
export function embeddedDatabase (db: Db): EmbeddedScripts | null {
  return EMBEDDED.get(db) ?? null
}

/** The pg Pool under `db` (the metrics read its counts); null on the embedded database. */
export function poolOf (db: Db): pg.Pool | null {
  return POOLS.get(db) ?? null
}

/** How to reach the database: filled from the configuration by dbOptions(). */
export interface DbOptions {
  /** A postgres:// URL, or null for the embedded database. */
  url: string | null
  /** Where the embedded database keeps its files; null keeps it in memory. */
  dataDir: string | null
  poolSize: number
  statementTimeoutMs: number
  connectionTimeoutMs: number
  /** DB_STATEMENT_CACHE (statements.ts). */
  statementCache: boolean
}

/** The database options the configuration asks for. */
export function dbOptions (config: Pick<Config,
  'DATABASE_URL' | 'DATA_DIR' | 'DB_POOL_SIZE' | 'DB_STATEMENT_TIMEOUT_MS' | 'DB_CONNECTION_TIMEOUT_MS' | 'DB_STATEMENT_CACHE'>): DbOptions {
  return {
    url: config.DATABASE_URL ?? null,
    dataDir: config.DATABASE_URL ? null : config.DATA_DIR,
    poolSize: config.DB_POOL_SIZE,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectionTimeoutMs: config.DB_CONNECTION_TIMEOUT_MS,
    statementCache: config.DB_STATEMENT_CACHE
  }
}

// Dates stay `YYYY-MM-DD` strings: turning them into a Date would shift them by the
// process time zone (the embedded database's thread does the same).
const DATE_OID = 1082

/**
 * `log` is Kysely's: every statement the app sends, e.g. for a test to count.
 * `embedded`: how tests start the embedded database (a migrated tarball, so that
 * they need not migrate each database they make, say); ignored with a URL.
 */
export async function createDb (options: DbOptions, { log, embedded }: { log?: LogConfig, embedded?: EmbeddedOptions } = {}): Promise<Db> {
  cacheStatements(options.statementCache)
  if (options.url !== null) {
    const types = new pg.TypeOverrides()
    types.setTypeParser(DATE_OID, 'text', (value) => value)
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: options.connectionTimeoutMs,
      statement_timeout: options.statementTimeoutMs,
      types
    })
    // A connection that dies must not take the process down: pg-pool listens for
    // errors only while a client is idle, so a client that loses its connection
    // during a query would raise an unhandled 'error'. The query still fails (503)
    // and the pool discards the client when it is released.
    pool.on('error', () => {})
    pool.on('connect', (client) => { client.on('error', () => {}) })
    const db = new Kysely<Database>({ dialect: new ApiPostgresDialect({ pool }), log })
    POOLS.set(db, pool)
    return db
  }
  // PGlite in a thread of its own (embedded/), which takes the data directory's lock.
  const { EmbeddedDatabase, EmbeddedDialect } = await import('./embedded/index.js')
  const database = await EmbeddedDatabase.open(options.dataDir, embedded)
  const db = new Kysely<Database>({ dialect: new EmbeddedDialect({ database }), log })
  // Kysely closes a driver only once it has been used: use it now, so that
  // destroy() always closes PGlite and releases the lock.
  try {
    await sql`SELECT 1`.execute(db)
  } catch (error) {
    await database.close().catch(() => {})
    throw error
  }
  EMBEDDED.set(db, database)
  return db
}
