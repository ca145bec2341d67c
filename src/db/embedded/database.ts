// The embedded database as the thread serving HTTP holds it: a handle on the worker
// thread that owns PGlite (thread.ts). PGlite runs each statement synchronously on
// the thread that calls it; in the thread serving HTTP that stalled every request
// behind every statement, so that at 50 connections the 99th percentile reached
// seconds. Here that thread only posts a message and is free until the answer
// comes back.
//
// Statements are posted as soon as they are sent, with no lock on this side: the
// database thread queues them (queue.ts), so it never waits for this one between
// two statements, and keeps a transaction whole by running only its session's
// statements while it is open.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { lockDataDir, privateFiles } from './data-dir.js'
import {
  EmbeddedDatabaseError, parsed,
  type FromThread, type StatementResult, type ThreadOptions, type ToThread, type UpkeepReport, type UpkeepTiming
} from './protocol.js'

// Run from source (tsx) this module is .ts, and so is its thread; built, both are .js.
const FROM_SOURCE = path.extname(fileURLToPath(import.meta.url)) === '.ts'
const THREAD_URL = new URL(`./thread${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url)

/**
 * The database thread. From source it needs tsx's hooks, which reach a worker
 * thread only on recent Node.js versions (not on 20): where they do not, it
 * registers them itself, then loads the thread anew (a failed import stays failed).
 * `entry`: the thread's entry already in JavaScript (tests transpile it once).
 */
function startThread (options: ThreadOptions, entry: URL | undefined): Worker {
  if (entry !== undefined) return new Worker(entry, { workerData: options })
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

/** Resolves once the thread has opened PGlite; rejects with why it could not. */
async function started (worker: Worker): Promise<void> {
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
      worker.off('message', message).off('error', fail).off('exit', exit)
    }
    worker.on('message', message).on('error', fail).on('exit', exit)
  })
}

/** How tests start an embedded database (ThreadOptions): none of it is needed in service. */
export interface EmbeddedOptions extends Partial<Pick<ThreadOptions, 'loadDataDir' | 'settings' | 'wasmModule'>> {
  /** The thread's entry in JavaScript, where the service's own would need tsx's hooks in the thread. */
  thread?: URL
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
   * open. `forTests`: what the tests start their databases with (EmbeddedOptions),
   * and when the thread does its upkeep on its own.
   */
  static async open (dataDir: string | null, forTests: EmbeddedOptions & Partial<UpkeepTiming> = {}): Promise<EmbeddedDatabase> {
    const release = dataDir === null ? () => {} : lockDataDir(dataDir)
    let worker: Worker | undefined
    try {
      const { thread, ...options } = forTests
      worker = startThread({ dataDir, upkeepIntervalMs: null, upkeepQuietMs: null, upkeepMaxWaitMs: null, ...options, settings: options.settings ?? [] }, thread)
      await started(worker)
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

  /** Statements sent and not yet answered. */
  inFlight (): number {
    return this.#pending.size
  }

  /** A new session: statements sent under it belong to one connection, and to its transaction when one is open. */
  session (): number {
    return this.#nextSession++
  }

  /** Whether the session's last statement left a transaction open. */
  inTransaction (session: number): boolean {
    return this.#inTransaction.has(session)
  }

  /** Runs one statement with its values; with a `name`, parsed the first time only (named.ts). */
  async query (session: number, sql: string, params: unknown[], name?: string): Promise<StatementResult> {
    return parsed(await this.#send({ id: 0, session, kind: 'query', sql, params, ...(name === undefined ? {} : { name }) }) as StatementResult)
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
