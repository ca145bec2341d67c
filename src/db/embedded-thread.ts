// The thread that owns the embedded database. PGlite runs every statement
// synchronously in WebAssembly on the thread that calls it: here, so that the
// thread serving HTTP goes on parsing, routing and answering meanwhile. Statements
// arrive as messages (embedded.ts) and run one at a time in arrival order, except
// that while a session has a transaction open only that session's statements run:
// PGlite is a single PostgreSQL session, and a statement of another request must
// not land inside someone else's transaction. Between statements, the thread
// also does the upkeep autovacuum and the checkpointer would (embedded-upkeep.ts),
// in the quiet moments when it can: they work beside the statements, but here
// each table's VACUUM or ANALYZE, and each checkpoint, holds up every statement
// behind it.
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite, parse, protocol, type Results } from '@electric-sql/pglite'
import type { FromThread, StatementResult, ThreadError, ThreadOptions, ToThread, UpkeepReport } from './embedded.js'
import { checkpointDue, naptimeMs, tablesDue, upkeepCommand, walEnd, type UpkeepStep } from './embedded-upkeep.js'
import { PLAN_CACHE_MODE } from './statement-names.js'
import { EMBEDDED_THREAD_NAME, nameThisThread } from './thread-name.js'

// Dates stay `YYYY-MM-DD` strings: turning them into a Date would shift them by the
// process time zone.
const DATE_OID = 1082
// json and jsonb values cross to the other thread as their text, parsed there
// (embedded.ts): copying a string between threads costs a fraction of copying the
// objects parsed from it, and the thread serving HTTP has time to spare.
const JSON_OIDS = new Set([114, 3802])
const JSON_ARRAY_OIDS = new Set([199, 3807])
const asText = (value: string) => value

// How long the thread must have had no statement to run before a pass it began
// itself takes a turn. Requests a tenth of a second apart leave it that quiet; a
// steady load does not, and the pass then waits for the load to pause (or for
// its longest wait, upkeepMaxWaitMs).
const QUIET_MS = 100

// What a PostgreSQL error carries besides its message (pg-protocol's DatabaseError),
// so that the error handler sees the SQLSTATE as it does from `pg`. The statement
// and its values are left behind: they may hold a token digest.
const ERROR_FIELDS = ['severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery',
  'where', 'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine'] as const

function describe (error: unknown): ThreadError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} }
  const fields: Record<string, string | number> = {}
  for (const field of ERROR_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[field]
    if (typeof value === 'string' || typeof value === 'number') fields[field] = value
  }
  return { name: error.name, message: error.message, fields }
}

if (parentPort === null) throw new Error('embedded-thread.ts runs as a worker thread (embedded.ts starts it)')
const port = parentPort
const { dataDir, settings, loadDataDir, upkeepIntervalMs, upkeepQuietMs, upkeepMaxWaitMs } = workerData as ThreadOptions
nameThisThread(EMBEDDED_THREAD_NAME)

function send (message: FromThread): void {
  try {
    port.postMessage(message)
  } catch (error) {
    // A value that cannot cross threads: the caller gets an error, not silence.
    port.postMessage({ id: 'id' in message ? message.id : 0, ok: false, error: describe(error), inTransaction: false })
  }
}

async function openPGlite (): Promise<PGlite | null> {
  try {
    const pglite = await PGlite.create(dataDir ?? 'memory://', {
      parsers: Object.fromEntries([DATE_OID, ...JSON_OIDS].map((oid) => [oid, asText])),
      ...(settings.length > 0 ? { postgresqlconf: settings } : {}),
      ...(loadDataDir !== undefined ? { loadDataDir } : {})
    })
    // The session's setting, for the whole life of its one connection.
    await pglite.exec(`SET plan_cache_mode = ${PLAN_CACHE_MODE}`)
    return pglite
  } catch (error) {
    // The opener says why and ends this thread.
    send({ started: false, error: describe(error) })
    return null
  }
}

/** Protocol messages sent to PostgreSQL in one go: it reads them in order, as from a socket. */
function messages (...parts: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let offset = 0
  for (const part of parts) {
    all.set(part, offset)
    offset += part.length
  }
  return all
}

/** A result as it crosses: its rows, and which of their columns hold JSON text (or arrays of it) to parse. */
function crossing ({ rows, command, rowCount, fields }: Results): StatementResult {
  const json = fields.filter((field) => JSON_OIDS.has(field.dataTypeID)).map((field) => field.name)
  const jsonArrays = fields.filter((field) => JSON_ARRAY_OIDS.has(field.dataTypeID)).map((field) => field.name)
  return { rows, command, rowCount, ...(json.length > 0 ? { json } : {}), ...(jsonArrays.length > 0 ? { jsonArrays } : {}) }
}

const opened = await openPGlite()
if (opened === null) {
  port.close()
} else {
  const intervalMs = upkeepIntervalMs ?? await naptimeMs(opened)
  // Opening ends with a checkpoint (the one a clean close wrote, or the one that
  // ends a crash's recovery): the log ends right after it.
  serve(opened, { intervalMs, quietMs: upkeepQuietMs ?? QUIET_MS, maxWaitMs: upkeepMaxWaitMs ?? intervalMs }, await walEnd(opened))
}

/** What a statement sent once the database is closing gets, as from PostgreSQL shutting down (admin_shutdown). */
const CLOSED: ThreadError = { name: 'Error', message: 'the embedded database is closed', fields: { code: '57P01' } }

/** The next step of the pass of upkeep under way, queued like a statement (of no session: never inside a transaction). */
interface UpkeepTurn { kind: 'turn', id: 0, session: -1 }
const UPKEEP_TURN: UpkeepTurn = { kind: 'turn', id: 0, session: -1 }

/**
 * Lets the messages that came while the thread was busy into the queue. They
 * arrive as events, which a loop that only awaits promises never lets in: without
 * this, a pass's turns would all run before a statement sent during the first.
 */
const arrivals = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

/** When the thread does its upkeep on its own. */
interface Rhythm {
  /** Between two looks for tables due (once statements have run since the last). */
  intervalMs: number
  /** The thread's quiet a pass it began waits for before each turn. */
  quietMs: number
  /** How long such a pass waits for quiet before it takes its turns between statements anyway. */
  maxWaitMs: number
}

function serve (pglite: PGlite, { intervalMs, quietMs, maxWaitMs }: Rhythm, opened: string): void {
  const queue: Array<ToThread | UpkeepTurn> = []
  /** The session whose transaction is open: only its statements run until it ends. */
  let owner: number | null = null
  let running = false
  let closed = false

  /**
   * The pass of upkeep under way: the tables still due (null until they are looked
   * up), whether a checkpoint is due after them (null until that is looked up,
   * once the tables are done), who waits for its report (EmbeddedDatabase.upkeep),
   * the report, and whether it waits for quiet moments (a pass the thread began
   * itself, until it has waited `maxWaitMs`, since `begun`) or takes its turns
   * between statements.
   */
  let pass: { due: UpkeepStep[] | null, checkpoint: boolean | null, waiting: number[], report: UpkeepReport, quiet: boolean, begun: number } | null = null
  /** Where the log ended right after the last checkpoint: a checkpoint on time is due only once something was written since. */
  let checkpointedAt = opened
  /** Whether a statement has run since the last pass began: with none, none is due. */
  let used = false
  /** When the thread last received or finished a statement. */
  let lastStatementAt = performance.now()
  /** The timer that looks again whether the thread is quiet, while a pass waits for it. */
  let quietTimer: NodeJS.Timeout | null = null

  /**
   * Starts a pass, unless one is under way; `waiting` is told when it is over. A
   * pass the thread begins itself (no one waiting) waits for quiet moments; one
   * asked for runs now, and hurries one under way.
   */
  function beginPass (waiting?: number): void {
    if (pass === null) {
      pass = { due: null, checkpoint: null, waiting: [], report: { vacuumed: [], analyzed: [], failed: [], checkpointed: false }, quiet: waiting === undefined, begun: performance.now() }
      used = false
      nextTurn()
    } else if (waiting !== undefined && pass.quiet) {
      pass.quiet = false
      if (quietTimer !== null) nextTurn()
    }
    if (waiting !== undefined) pass.waiting.push(waiting)
  }

  /**
   * Puts the pass's next turn in the queue: at once when it takes its turns
   * between statements, else once the thread has been quiet for `quietMs`, or once
   * the pass has waited `maxWaitMs` for that.
   */
  function nextTurn (): void {
    if (quietTimer !== null) {
      clearTimeout(quietTimer)
      quietTimer = null
    }
    const current = pass!
    const now = performance.now()
    if (current.quiet && now - current.begun >= maxWaitMs) current.quiet = false
    const idle = queue.length === 0 && owner === null && !running
    if (!current.quiet || (idle && now - lastStatementAt >= quietMs)) {
      queue.push(UPKEEP_TURN)
      void pump()
      return
    }
    const wait = idle ? quietMs - (now - lastStatementAt) : quietMs
    quietTimer = setTimeout(() => {
      quietTimer = null
      if (pass === current && !closed) nextTurn()
    }, Math.max(1, Math.min(wait, current.begun + maxWaitMs - now)))
    quietTimer.unref()
  }

  function endPass (outcome: { ok: true } | { ok: false, error: ThreadError }): void {
    const ended = pass!
    pass = null
    for (const id of ended.waiting) {
      send(outcome.ok ? { id, ok: true, value: ended.report, inTransaction: false } : { id, ok: false, error: outcome.error, inTransaction: false })
    }
  }

  /**
   * One step of the pass: the tables due are looked up, or the next one is
   * vacuumed or analyzed, or, once they are done, a checkpoint made if one is due
   * (after the tables: their VACUUMs write to the log too). The statements that
   * came meanwhile run before the next step: a request waits for one table's
   * upkeep or one checkpoint at most, never for a whole pass.
   */
  async function takeTurn (): Promise<void> {
    const current = pass!
    try {
      if (current.due === null) {
        current.due = await tablesDue(pglite)
      } else if (current.due.length > 0) {
        const step = current.due.shift()!
        try {
          await pglite.exec(upkeepCommand(step))
          if (step.vacuum) current.report.vacuumed.push(step.table)
          if (step.analyze) current.report.analyzed.push(step.table)
        } catch (error) {
          // Dropped meanwhile, say: the others are still due.
          current.report.failed.push({ table: step.table, error: describe(error).message })
        }
      } else {
        await pglite.exec('CHECKPOINT')
        checkpointedAt = await walEnd(pglite)
        current.report.checkpointed = true
        current.checkpoint = false
      }
      if (current.due.length === 0 && current.checkpoint === null) current.checkpoint = await checkpointDue(pglite, checkpointedAt)
    } catch (error) {
      endPass({ ok: false, error: describe(error) })
      return
    }
    if (current.due.length > 0 || current.checkpoint === true) nextTurn()
    else endPass({ ok: true })
  }

  // Autovacuum's rhythm: a look every autovacuum_naptime, if anything ran since
  // (the checkpointer looks more often, but a checkpoint is due only after
  // minutes, or after hundreds of megabytes of log).
  const upkeepTimer = setInterval(() => {
    if (used && !closed) beginPass()
  }, intervalMs)
  upkeepTimer.unref()

  /** The first statement that may run now, taken off the queue. */
  function next (): ToThread | UpkeepTurn | undefined {
    if (owner === null) return queue.shift()
    const index = queue.findIndex((request) => request.session === owner)
    return index < 0 ? undefined : queue.splice(index, 1)[0]
  }

  /** Parameter types of the statements prepared under a name in PGlite's session. */
  const prepared = new Map<string, number[]>()

  /**
   * A named statement, as `pg` sends one: parsed and planned once, then only bound
   * and executed (PGlite's query() parses and plans every time, which costs more
   * than running the statements a request sends). Values are serialized for the
   * types PostgreSQL found, and rows parsed, with PGlite's own serializers and
   * parsers, as its query() does; the result is query()'s.
   */
  async function runNamed (name: string, sql: string, params: unknown[]) {
    return await pglite.runExclusive(async () => {
      let types = prepared.get(name)
      if (types === undefined) {
        try {
          const described = await pglite.execProtocolStream(messages(
            protocol.serialize.parse({ name, text: sql }), protocol.serialize.describe({ type: 'S', name }), protocol.serialize.sync()
          ), { syncToFs: false })
          types = parse.parseDescribeStatementResults(described)
        } catch (error) {
          // Parsed but not described: forget it, so that the next try can parse it again.
          await pglite.execProtocolStream(messages(protocol.serialize.close({ type: 'S', name }), protocol.serialize.sync()),
            { syncToFs: false, throwOnError: false })
          throw error
        }
        prepared.set(name, types)
      }
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null
        const serializer = pglite.serializers[types[i]!]
        return serializer ? serializer(value) : String(value)
      })
      const answer = await pglite.execProtocolStream(messages(
        protocol.serialize.bind({ statement: name, values }), protocol.serialize.describe({ type: 'P' }),
        protocol.serialize.execute({}), protocol.serialize.sync()
      ), { syncToFs: false })
      await pglite.syncToFs()
      return parse.parseResults(answer, pglite.parsers)[0]!
    })
  }

  async function run (request: Exclude<ToThread, { kind: 'upkeep' }>): Promise<unknown> {
    switch (request.kind) {
      case 'query': {
        used = true
        return crossing(request.name === undefined
          ? await pglite.query(request.sql, request.params)
          : await runNamed(request.name, request.sql, request.params))
      }
      case 'exec': {
        used = true
        const results = await pglite.exec(request.sql)
        if (pglite.isInTransaction()) {
          // Nobody would end it, and every other statement would wait behind it.
          await pglite.query('ROLLBACK')
          throw new Error('a script must not leave a transaction open; it was rolled back')
        }
        return results.map(crossing)
      }
      case 'release':
        // A connection given back inside its transaction: nothing of it was committed.
        if (owner === request.session && pglite.isInTransaction()) await pglite.query('ROLLBACK')
        return null
      case 'close':
        closed = true
        clearInterval(upkeepTimer)
        if (quietTimer !== null) clearTimeout(quietTimer)
        await pglite.close()
        return null
    }
  }

  async function pump (): Promise<void> {
    if (running) return
    running = true
    try {
      for (let request = next(); request !== undefined; request = next()) {
        if (request.kind === 'turn') {
          if (closed) {
            endPass({ ok: false, error: CLOSED })
            continue
          }
          // Statements sent while the thread was busy go first; a pass waiting
          // for quiet waits for it again after them.
          await arrivals()
          if (queue.some((waiting) => waiting.kind !== 'turn')) {
            if (pass?.quiet === true) nextTurn()
            else queue.push(request)
            continue
          }
          await takeTurn()
          continue
        }
        if (closed) {
          send({ id: request.id, ok: false, error: CLOSED, inTransaction: false })
          continue
        }
        if (request.kind === 'upkeep') {
          // Answered when the pass is over.
          beginPass(request.id)
          continue
        }
        let reply: Extract<FromThread, { id: number }>
        try {
          const value = await run(request)
          reply = { id: request.id, ok: true, value, inTransaction: false }
        } catch (error) {
          reply = { id: request.id, ok: false, error: describe(error), inTransaction: false }
        }
        const inTransaction = !closed && pglite.isInTransaction()
        owner = inTransaction ? request.session : null
        reply.inTransaction = inTransaction
        lastStatementAt = performance.now()
        send(reply)
      }
    } finally {
      running = false
    }
  }

  port.on('message', (request: ToThread) => {
    lastStatementAt = performance.now()
    queue.push(request)
    void pump()
  })
  send({ started: true })
}
