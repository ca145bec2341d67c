// When the database thread does the upkeep autovacuum and the checkpointer would
// (upkeep-rules.ts says what is due). They work beside the statements; here each
// table's VACUUM or ANALYZE, and each checkpoint, holds up every statement behind
// it. So a pass is cut into turns, one table or one checkpoint each, queued like
// statements (queue.ts): a request waits for one turn at most, never for a whole
// pass. A pass the thread begins itself takes its turns in quiet moments; one asked
// for (EmbeddedDatabase.upkeep) takes them now. Time comes from a Clock, the
// system's but in tests, which move it on rather than wait seconds for quiet or
// for checkpoint_timeout.
import type { PGlite } from '@electric-sql/pglite'
import { describe, type Send, type ThreadError, type UpkeepReport, type UpkeepTiming } from './protocol.js'
import { checkpointDue, naptimeMs, tablesDue, upkeepCommand, walEnd, type UpkeepStep } from './upkeep-rules.js'

/** The upkeep's time. */
export interface Clock {
  /** Milliseconds on a clock that only moves forward (performance.now()). */
  now: () => number
  /** Milliseconds since 1970: what the last checkpoint's time is compared with. */
  epochMs: () => number
  /** Calls `callback` once, after `ms`; returns what cancels it. Keeps no process alive. */
  after: (ms: number, callback: () => void) => () => void
  /** Calls `callback` every `ms`; returns what stops it. Keeps no process alive. */
  every: (ms: number, callback: () => void) => () => void
}

export const SYSTEM_CLOCK: Clock = {
  now: () => performance.now(),
  epochMs: () => Date.now(),
  after: (ms, callback) => {
    const timer = setTimeout(callback, ms).unref()
    return () => { clearTimeout(timer) }
  },
  every: (ms, callback) => {
    const timer = setInterval(callback, ms).unref()
    return () => { clearInterval(timer) }
  }
}

/** What the upkeep needs of the statement queue (queue.ts). */
export interface TurnQueue {
  /** Nothing queued, nothing running, no transaction open. */
  readonly idle: boolean
  /** The database is closing or closed. */
  readonly closed: boolean
  /** Queues the pass's next turn behind the statements already waiting. */
  queueTurn: () => void
}

// How long the thread must have had no statement to run before a pass it began
// itself takes a turn. Requests a tenth of a second apart leave it that quiet; a
// steady load does not, and the pass then waits for the load to pause (or for
// its longest wait, upkeepMaxWaitMs).
const QUIET_MS = 100

/** When the thread does its upkeep on its own. */
interface Rhythm {
  /** Between two looks for tables due (once statements have run since the last). */
  intervalMs: number
  /** The thread's quiet a pass it began waits for before each turn. */
  quietMs: number
  /** How long such a pass waits for quiet before it takes its turns between statements anyway. */
  maxWaitMs: number
}

/** A pass of upkeep under way. */
interface Pass {
  /** The tables still due; null until they are looked up. */
  due: UpkeepStep[] | null
  /** Whether a checkpoint is due after them; null until that is looked up, once the tables are done. */
  checkpoint: boolean | null
  /** Who waits for its report (EmbeddedDatabase.upkeep). */
  waiting: number[]
  report: UpkeepReport
  /**
   * Whether it waits for quiet moments (a pass the thread began itself, until it
   * has waited `maxWaitMs` since `begun`) or takes its turns between statements.
   */
  quiet: boolean
  begun: number
}

interface Setting { pglite: PGlite, queue: TurnQueue, send: Send, clock: Clock }

export class Upkeep {
  readonly #pglite: PGlite
  readonly #queue: TurnQueue
  readonly #send: Send
  readonly #clock: Clock
  readonly #rhythm: Rhythm
  #pass: Pass | null = null
  /** Where the log ended right after the last checkpoint: a checkpoint on time is due only once something was written since. */
  #checkpointedAt: string
  /** Whether a statement has run since the last pass began: with none, none is due. */
  #used = false
  /** When the thread last received or finished a statement. */
  #lastActivityAt: number
  /** Cancels the wait before the pass looks again whether the thread is quiet. */
  #cancelQuietWait: (() => void) | null = null
  readonly #stopLooking: () => void

  /** The upkeep of a PGlite just opened, its rhythm by `timing` or else by PostgreSQL's settings. */
  static async start (setting: Setting, timing: UpkeepTiming): Promise<Upkeep> {
    const intervalMs = timing.upkeepIntervalMs ?? await naptimeMs(setting.pglite)
    const rhythm = { intervalMs, quietMs: timing.upkeepQuietMs ?? QUIET_MS, maxWaitMs: timing.upkeepMaxWaitMs ?? intervalMs }
    // Opening ends with a checkpoint (the one a clean close wrote, or the one that
    // ends a crash's recovery): the log ends right after it.
    return new Upkeep(setting, rhythm, await walEnd(setting.pglite))
  }

  private constructor ({ pglite, queue, send, clock }: Setting, rhythm: Rhythm, checkpointedAt: string) {
    this.#pglite = pglite
    this.#queue = queue
    this.#send = send
    this.#clock = clock
    this.#rhythm = rhythm
    this.#checkpointedAt = checkpointedAt
    this.#lastActivityAt = clock.now()
    // Autovacuum's rhythm: a look every autovacuum_naptime, if anything ran since
    // (the checkpointer looks more often, but a checkpoint is due only after
    // minutes, or after hundreds of megabytes of log).
    this.#stopLooking = clock.every(rhythm.intervalMs, () => {
      if (this.#used && !queue.closed) this.#begin()
    })
  }

  /** A statement arrived or finished: the thread is not quiet. */
  sawActivity (): void {
    this.#lastActivityAt = this.#clock.now()
  }

  /** A statement ran: the next look may find upkeep due. */
  sawStatement (): void {
    this.#used = true
  }

  /** A pass asked for: it runs now (hurrying one under way), and `id` is answered with its report. */
  ask (id: number): void {
    this.#begin(id)
  }

  /** Statements came while a turn waited: they go first, and a pass waiting for quiet waits for it again after them. */
  yieldTurn (): void {
    if (this.#pass?.quiet === true) this.#nextTurn()
    else this.#queue.queueTurn()
  }

  /** The pass cannot go on (the database is closing): whoever waits for it gets `error`. */
  abandon (error: ThreadError): void {
    this.#end({ ok: false, error })
  }

  /** The database is closing: no more looks, no more waits. */
  stop (): void {
    this.#stopLooking()
    this.#cancelQuietWait?.()
    this.#cancelQuietWait = null
  }

  /**
   * One step of the pass: the tables due are looked up, or the next one is
   * vacuumed or analyzed, or, once they are done, a checkpoint made if one is due
   * (after the tables: their VACUUMs write to the log too).
   */
  async takeTurn (): Promise<void> {
    const current = this.#pass!
    try {
      if (current.due === null) current.due = await tablesDue(this.#pglite)
      else if (current.due.length > 0) await this.#tableTurn(current, current.due.shift()!)
      else await this.#checkpointTurn(current)
      if (current.due.length === 0 && current.checkpoint === null) {
        current.checkpoint = await checkpointDue(this.#pglite, this.#checkpointedAt, this.#clock.epochMs())
      }
    } catch (error) {
      this.#end({ ok: false, error: describe(error) })
      return
    }
    if (current.due.length > 0 || current.checkpoint === true) this.#nextTurn()
    else this.#end({ ok: true })
  }

  async #tableTurn (current: Pass, step: UpkeepStep): Promise<void> {
    try {
      await this.#pglite.exec(upkeepCommand(step))
      if (step.vacuum) current.report.vacuumed.push(step.table)
      if (step.analyze) current.report.analyzed.push(step.table)
    } catch (error) {
      // Dropped meanwhile, say: the others are still due.
      current.report.failed.push({ table: step.table, error: describe(error).message })
    }
  }

  async #checkpointTurn (current: Pass): Promise<void> {
    await this.#pglite.exec('CHECKPOINT')
    this.#checkpointedAt = await walEnd(this.#pglite)
    current.report.checkpointed = true
    current.checkpoint = false
  }

  /**
   * Starts a pass, unless one is under way; `waiting` is told when it is over. A
   * pass the thread begins itself (no one waiting) waits for quiet moments; one
   * asked for runs now, and hurries one under way.
   */
  #begin (waiting?: number): void {
    if (this.#pass === null) {
      this.#pass = {
        due: null,
        checkpoint: null,
        waiting: [],
        report: { vacuumed: [], analyzed: [], failed: [], checkpointed: false },
        quiet: waiting === undefined,
        begun: this.#clock.now()
      }
      this.#used = false
      this.#nextTurn()
    } else if (waiting !== undefined && this.#pass.quiet) {
      this.#pass.quiet = false
      if (this.#cancelQuietWait !== null) this.#nextTurn()
    }
    if (waiting !== undefined) this.#pass.waiting.push(waiting)
  }

  /**
   * Queues the pass's next turn: at once when it takes its turns between
   * statements, else once the thread has been quiet for `quietMs`, or once the
   * pass has waited `maxWaitMs` for that.
   */
  #nextTurn (): void {
    this.#cancelQuietWait?.()
    this.#cancelQuietWait = null
    const current = this.#pass!
    const { quietMs, maxWaitMs } = this.#rhythm
    const now = this.#clock.now()
    if (current.quiet && now - current.begun >= maxWaitMs) current.quiet = false
    const idle = this.#queue.idle
    if (!current.quiet || (idle && now - this.#lastActivityAt >= quietMs)) {
      this.#queue.queueTurn()
      return
    }
    const wait = idle ? quietMs - (now - this.#lastActivityAt) : quietMs
    this.#cancelQuietWait = this.#clock.after(Math.max(1, Math.min(wait, current.begun + maxWaitMs - now)), () => {
      this.#cancelQuietWait = null
      if (this.#pass === current && !this.#queue.closed) this.#nextTurn()
    })
  }

  #end (outcome: { ok: true } | { ok: false, error: ThreadError }): void {
    const ended = this.#pass!
    this.#pass = null
    for (const id of ended.waiting) {
      this.#send(outcome.ok
        ? { id, ok: true, value: ended.report, inTransaction: false }
        : { id, ok: false, error: outcome.error, inTransaction: false })
    }
  }
}
