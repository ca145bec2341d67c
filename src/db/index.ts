// The Kysely instance: real PostgreSQL through `pg` when a URL is given, else an
// embedded PGlite (in memory, or persisted under a data directory).
import { Kysely, sql, type LogConfig } from 'kysely'
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import type { Database } from './types.js'
import { ApiPostgresDialect, NamedStatementsClient } from './dialect.js'

export type Db = Kysely<Database>

export interface DbOptions {
  /** A postgres:// URL; without one the embedded database is used. */
  url?: string | undefined
  /** Where PGlite keeps its files; in memory when absent. */
  dataDir?: string | undefined
  poolSize?: number | undefined
  statementTimeoutMs?: number | undefined
  connectionTimeoutMs?: number | undefined
  /** Send the per-request statements as named prepared statements (not through PgBouncer < 1.21 in transaction mode). */
  preparedStatements?: boolean | undefined
  log?: LogConfig | undefined
}

// Dates stay `YYYY-MM-DD` strings: turning them into a Date would shift them by the
// process time zone.
const DATE_OID = 1082

function processAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

// The embedded database holds every token digest, and DATA_DIR/demo.json the demo's
// tokens in clear: like PostgreSQL's own data directory, it is its owner's alone.
const PRIVATE_DIR = 0o700
const GROUP_OTHER = 0o077

/**
 * Creates the data directory owner-only (0700), or makes an existing one so if it
 * belongs to this process's user. One that belongs to another user and is open to
 * others is refused: it cannot be made private from here.
 */
function privateDataDir (dataDir: string): void {
  // The parents as the umask says; the directory itself private from its first moment.
  mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true })
  try {
    mkdirSync(dataDir, { mode: PRIVATE_DIR })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const stats = statSync(dataDir)
  if (!stats.isDirectory()) throw new Error(`DATA_DIR ${dataDir} is not a directory`)
  // Windows has no such modes (chmod only sets read-only there).
  if (process.platform === 'win32' || (stats.mode & GROUP_OTHER) === 0) return
  if (stats.uid !== process.getuid?.()) {
    throw new Error(`the embedded database directory ${dataDir} is open to other users ` +
      `(mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')}) and belongs to another user (uid ${stats.uid}): ` +
      'make it owner-only (chmod 700) as its owner, or set DATA_DIR to a directory of your own')
  }
  chmodSync(dataDir, PRIVATE_DIR)
}

/**
 * PGlite writes the files of a new database open to everyone (0666 and 0777),
 * whatever the umask: takes the group's and others' bits off every file and
 * directory under the data directory that this user owns. Symbolic links are
 * neither followed nor changed.
 */
function privateFiles (dir: string): void {
  if (process.platform === 'win32') return
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue
    const file = path.join(dir, entry.name)
    const stats = lstatSync(file)
    if ((stats.mode & GROUP_OTHER) !== 0 && stats.uid === process.getuid?.()) chmodSync(file, stats.mode & 0o700)
    if (entry.isDirectory()) privateFiles(file)
  }
}

/**
 * PGlite is one process's database: a second process writing the same files loses
 * data. A lock file with the owner's pid turns that into a clear error.
 */
function lockDataDir (dataDir: string): () => void {
  privateDataDir(dataDir)
  const lock = path.join(dataDir, 'projects-api.lock')
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error
      const owner = Number(readFileSync(lock, 'utf8'))
      if (Number.isInteger(owner) && owner > 0 && (owner === process.pid || processAlive(owner))) {
        throw new Error(`the embedded database in ${dataDir} is in use by process ${owner}; ` +
          'stop that process first, or set DATABASE_URL to use PostgreSQL')
      }
      rmSync(lock, { force: true }) // left behind by a process that is gone
    }
  }
  let released = false
  const release = () => {
    if (released) return
    released = true
    process.off('exit', release)
    rmSync(lock, { force: true })
  }
  process.on('exit', release)
  return release
}

export async function createDb (options: DbOptions): Promise<Db> {
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
      statement_timeout: options.statementTimeoutMs ?? 10000,
      ...(options.preparedStatements ?? true ? { Client: NamedStatementsClient } : {}),
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === DATE_OID ? (value: string) => value : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser
      }
    })
    // A connection that dies must not take the process down: pg-pool listens for
    // errors only while a client is idle, so a client that loses its connection
    // during a query would raise an unhandled 'error'. The query still fails (503)
    // and the pool discards the client when it is released.
    pool.on('error', () => {})
    pool.on('connect', (client) => { client.on('error', () => {}) })
    return new Kysely<Database>({ dialect: new ApiPostgresDialect({ pool }), log: options.log })
  }
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('kysely-pglite-dialect')
  ])
  const release = options.dataDir ? lockDataDir(options.dataDir) : () => {}
  let pglite
  try {
    pglite = await PGlite.create(options.dataDir ?? 'memory://', {
      parsers: { [DATE_OID]: (value: string) => value }
    })
    if (options.dataDir) privateFiles(options.dataDir)
  } catch (error) {
    await pglite?.close().catch(() => {})
    release()
    throw error
  }
  const close = pglite.close.bind(pglite)
  pglite.close = async () => {
    try { await close() } finally { release() }
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), log: options.log })
  // Kysely closes a driver only once it has been used: use it now, so that
  // destroy() always closes PGlite and releases the lock.
  await sql`SELECT 1`.execute(db)
  return db
}

/** The database options the environment asks for. */
export function dbOptions (config: {
  DATABASE_URL?: string | undefined
  DATA_DIR: string
  DB_POOL_SIZE: number
  DB_STATEMENT_TIMEOUT_MS: number
  DB_CONNECTION_TIMEOUT_MS: number
  DB_PREPARED_STATEMENTS: boolean
}): DbOptions {
  return {
    url: config.DATABASE_URL,
    dataDir: config.DATABASE_URL ? undefined : config.DATA_DIR,
    poolSize: config.DB_POOL_SIZE,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectionTimeoutMs: config.DB_CONNECTION_TIMEOUT_MS,
    preparedStatements: config.DB_PREPARED_STATEMENTS
  }
}
