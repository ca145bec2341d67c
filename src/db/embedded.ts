// The embedded database (PGlite) as the rest of the service sees it: a Kysely
// dialect whose statements go to a worker thread that owns PGlite
// (embedded-thread.ts). PGlite runs each statement synchronously on the thread
// that calls it; in the thread serving HTTP that stalled every request behind
// every statement, so that at 50 connections the 99th percentile reached seconds.
// Here that thread only posts a message and is free until the answer comes back.
//
// Statements are posted as soon as Kysely sends them, with no lock on this side:
// the database thread queues them, so it never waits for this one between two
// statements, and keeps a transaction whole by running only its session's
// statements while it is open.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import {
  type CompiledQuery, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler,
  type DatabaseConnection, type Dialect, type Driver, type Kysely, type QueryResult, type TransactionSettings
} from 'kysely'
import { lockDataDir, privateFiles } from './data-dir.js'
import { beginTransaction, commitTransaction } from './dialect.js'
import { statementName } from './statement-names.js'

/** When the database thread does its upkeep on its own (embedded-thread.ts); null: the default. */
export interface UpkeepTiming {
  /** How often it looks for tables to vacuum or analyze: PostgreSQL's autovacuum_naptime (60 s) by default. */
  upkeepIntervalMs: number | null
  /** How long it must have had no statement to run before a pass it began takes a turn: 100 ms by default. */
  upkeepQuietMs: number | null
  /** How long such a pass waits for that quiet before it takes its turns between statements anyway: one interval by default. */
  upkeepMaxWaitMs: number | null
}

/** What the database thread is started with. */
export interface ThreadOptions extends UpkeepTiming {
  /** Where PGlite keeps its files; null keeps it in memory. */
  dataDir: string | null
  /** Lines for postgresql.conf (tests: a smaller max_wal_size, say); none by default. */
  settings: string[]
  /** A tarball of a data directory (PGlite's dumpDataDir) to start from instead of an empty one: tests start each database migrated. */
  loadDataDir?: Blob
}

/** What one pass of the embedded database's upkeep did (embedded-thread.ts): tables by schema-qualified name. */
export interface UpkeepReport {
  vacuumed: string[]
  analyzed: string[]
  /** Tables whose VACUUM or ANALYZE failed (dropped meanwhile, say), with why; the pass went on. */
  failed: Array<{ table: string, error: string }>
  /** Whether it made a checkpoint (one was due, by the checkpointer's rules). */
  checkpointed: boolean
}

/** A statement for the database thread; `session` tells whose transaction it belongs to. */
export type ToThread =
  | { id: number, session: number, kind: 'query', sql: string, params: unknown[], name?: string }
  | { id: number, session: number, kind: 'exec', sql: string }
  | { id: number, session: number, kind: 'release' }
  | { id: number, session: number, kind: 'upkeep' }
  | { id: number, session: number, kind: 'close' }

/** An error as it crosses threads: its name, message and PostgreSQL's fields (`code` the SQLSTATE). */
export interface ThreadError {
  name: string
  message: string
  fields: Record<string, string | number>
}

export type FromThread =
  | { started: true }
  | { started: false, error: ThreadError }
  | { id: number, ok: true, value: unknown, inTransaction: boolean }
  | { id: number, ok: false, error: ThreadError, inTransaction: boolean }

/** One statement's result as it crosses from the database thread: `json` and `jsonArrays` name the columns still to parse. */
export interface StatementResult {
  rows: unknown[]
  command?: string
  rowCount?: number
  json?: string[]
  jsonArrays?: string[]
}

type Row = Record<string, unknown>

function parseJsonArray (value: unknown): unknown {
  return Array.isArray(value) ? value.map(parseJsonArray) : typeof value === 'string' ? JSON.parse(value) : value
}

/** The result as PGlite's query() gives it: JSON columns parsed. */
function parsed (result: StatementResult): StatementResult {
  const { json = [], jsonArrays = [] } = result
  if (json.length === 0 && jsonArrays.length === 0) return result
  for (const row of result.rows as Row[]) {
    for (const name of json) {
      const value = row[name]
      if (typeof value === 'string') row[name] = JSON.parse(value)
    }
    for (const name of jsonArrays) row[name] = parseJsonArray(row[name])
  }
  return result
}

/** An error PGlite raised: `code` is the SQLSTATE, as on errors from `pg`. */
export class EmbeddedDatabaseError extends Error {
  code?: string
  detail?: string
  constraint?: string

  constructor (error: ThreadError) {
    super(error.message)
    Object.assign(this, error.fields)
    this.name = error.name
  }
}

// Run from source (tsx) this module is .ts, and so is its thread; built, both are .js.
const FROM_SOURCE = path.extname(fileURLToPath(import.meta.url)) === '.ts'
const THREAD_URL = new URL(`./embedded-thread${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url)

/**
 * The database thread. From source it needs tsx's hooks, which reach a worker
 * thread only on recent Node.js versions (not on 20): where they do not, it
 * registers them itself, then loads the thread anew (a failed import stays failed).
 */
function startThread (options: ThreadOptions): Worker {
  if (!FROM_SOURCE) return new Worker(THREAD_URL, { workerData: options })
  const thread = JSON.stringify(THREAD_URL.href)
  const code = `import(${thread}).catch(async (error) => {
    if (error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error
    const tsx = await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
    tsx.register()
    return import(${thread} + '?tsx')
  })`
  return new Worker(code, { eval: true, workerData: options })
}

interface Pending { resolve: (value: unknown) => void, reject: (error: Error) => void, session: number }

/**
 * PGlite in its own thread, owning the data directory: the lock is taken before
 * the thread opens the files and let go once it has closed them.
 */
export class EmbeddedDatabase {
  readonly #worker: Worker
  readonly #release: () => void
  readonly #pending = new Map<number, Pending>()
  #nextId = 1
  #nextSession = 1
  /** Why no statement can be sent any more, once the thread has stopped or is closing. */
  #gone: Error | null = null
  #closing: Promise<void> | null = null
  /** Sessions whose last statement left their transaction open. */
  readonly #inTransaction = new Set<number>()

  private constructor (worker: Worker, release: () => void) {
    this.#worker = worker
    this.#release = release
    worker.on('message', (message: FromThread) => { this.#answer(message) })
    worker.on('error', (error) => { this.#stopped(error) })
    worker.on('exit', (code) => { this.#stopped(new Error(`the embedded database thread exited with code ${code}`)) })
  }

  /**
   * Locks `dataDir` (unless in memory), starts the thread and waits until PGlite is
   * open. `forTests`: when the thread does its upkeep on its own, and PostgreSQL
   * settings for its rules (postgresql.conf lines), and a data directory to start from.
   */
  static async open (dataDir: string | null, forTests: Partial<UpkeepTiming & Pick<ThreadOptions, 'settings' | 'loadDataDir'>> = {}): Promise<EmbeddedDatabase> {
    const release = dataDir === null ? () => {} : lockDataDir(dataDir)
    let worker: Worker | undefined
    try {
      worker = startThread({ dataDir, settings: [], upkeepIntervalMs: null, upkeepQuietMs: null, upkeepMaxWaitMs: null, ...forTests })
      await new Promise<void>((resolve, reject) => {
        const fail = (error: Error) => { cleanup(); reject(error) }
        const exit = (code: number) => fail(new Error(`the embedded database thread exited with code ${code} while starting`))
        const message = (message: FromThread) => {
          if (!('started' in message)) return
          cleanup()
          if (message.started) resolve()
          else reject(new EmbeddedDatabaseError(message.error))
        }
        const cleanup = () => {
          worker!.off('message', message).off('error', fail).off('exit', exit)
        }
        worker!.on('message', message).on('error', fail).on('exit', exit)
      })
      if (dataDir !== null) privateFiles(dataDir)
    } catch (error) {
      await worker?.terminate()
      release()
      throw error
    }
    const database = new EmbeddedDatabase(worker, release)
    worker.unref()
    return database
  }

  /** A new session: statements sent under it belong to one connection, and to its transaction when one is open. */
  session (): number {
    return this.#nextSession++
  }

  /** Whether the session's last statement left a transaction open. */
  inTransaction (session: number): boolean {
    return this.#inTransaction.has(session)
  }

  /** Runs one statement with its values; under `name`, prepared once and then only executed. */
  async query (session: number, sql: string, params: unknown[], name?: string): Promise<StatementResult> {
    return parsed(await this.#send({ id: 0, session, kind: 'query', sql, params, name }) as StatementResult)
  }

  /**
   * Runs a script of several statements without values (PostgreSQL's simple
   * protocol), as pg-boss installs its schema; one result per statement.
   */
  async exec (sql: string): Promise<StatementResult[]> {
    return (await this.#send({ id: 0, session: this.session(), kind: 'exec', sql }) as StatementResult[]).map(parsed)
  }

  /**
   * Runs a pass of upkeep now, as the thread does on its own every
   * autovacuum_naptime once statements have run: each table autovacuum's rules
   * call for is vacuumed or analyzed, one at a time, between statements and never
   * inside a transaction. A pass the thread began itself waits for a quiet moment;
   * this one does not (joining one under way, it hurries it). Resolves once the
   * pass is over.
   */
  async upkeep (): Promise<UpkeepReport> {
    return await this.#send({ id: 0, session: this.session(), kind: 'upkeep' }) as UpkeepReport
  }

  /** The session is done: a transaction it left open is rolled back. */
  async release (session: number): Promise<void> {
    if (!this.#inTransaction.has(session)) return
    await this.#send({ id: 0, session, kind: 'release' })
  }

  /**
   * Lets the statements already sent finish, closes PGlite (which writes out what it
   * holds) and lets go of the data directory. Statements sent afterwards fail.
   */
  async close (): Promise<void> {
    this.#closing ??= (async () => {
      try {
        if (this.#gone === null) {
          const closed = this.#send({ id: 0, session: 0, kind: 'close' })
          this.#gone = closedError()
          await closed
        }
      } finally {
        await this.#worker.terminate()
        this.#release()
      }
    })()
    await this.#closing
  }

  async #send (request: ToThread): Promise<unknown> {
    if (this.#gone !== null) throw this.#gone
    const id = this.#nextId++
    request.id = id
    const answer = new Promise((resolve, reject) => { this.#pending.set(id, { resolve, reject, session: request.session }) })
    // While an answer is awaited the thread keeps the process alive; idle, it does not.
    if (this.#pending.size === 1) this.#worker.ref()
    this.#worker.postMessage(request)
    return await answer
  }

  #answer (message: FromThread): void {
    if ('started' in message) return
    const pending = this.#pending.get(message.id)
    if (pending === undefined) return
    this.#pending.delete(message.id)
    if (this.#pending.size === 0) this.#worker.unref()
    if (message.inTransaction) this.#inTransaction.add(pending.session)
    else this.#inTransaction.delete(pending.session)
    if (message.ok) pending.resolve(message.value)
    else pending.reject(new EmbeddedDatabaseError(message.error))
  }

  /** The thread is gone (crashed, or terminated by close): nothing more will be answered. */
  #stopped (cause: Error): void {
    const error = this.#gone ?? Object.assign(new Error(`the embedded database stopped: ${cause.message}`, { cause }), { code: '58000' })
    this.#gone = error
    for (const pending of this.#pending.values()) pending.reject(error)
    this.#pending.clear()
  }
}

/** As PostgreSQL answers a statement sent while it shuts down (admin_shutdown): the service is unavailable. */
function closedError (): Error {
  return Object.assign(new Error('the embedded database is closed'), { code: '57P01' })
}

export interface EmbeddedDialectConfig {
  database: EmbeddedDatabase
  /** Send the statements of prepare() by name, parsed and planned once (DB_PREPARED_STATEMENTS). */
  namedStatements: boolean
}

/** One request's connection: a session of the database thread. */
class EmbeddedConnection implements DatabaseConnection {
  constructor (readonly config: EmbeddedDialectConfig, readonly session: number) {}

  async executeQuery<R> (compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const text = compiledQuery.sql
    const name = this.config.namedStatements ? statementName(text) : undefined
    const { rows, command, rowCount } = await this.config.database.query(this.session, text, [...compiledQuery.parameters], name)
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
