// The order in which the database thread runs what it is sent. PGlite is a single
// PostgreSQL session, so statements run one at a time in arrival order, except
// that while a session has a transaction open only that session's statements run:
// a statement of another request must not land inside someone else's transaction
// (nor be undone with it). The upkeep's turns (upkeep.ts) queue here too, as a
// session of their own, so that they never land inside a transaction either.
import type { PGlite } from '@electric-sql/pglite'
import { CLOSED, crossing, describe, type FromThread, type Send, type ToThread, type UpkeepTiming } from './protocol.js'
import { NamedStatements } from './named.js'
import { SYSTEM_CLOCK, Upkeep, type Clock, type TurnQueue } from './upkeep.js'

/** The next step of the pass of upkeep under way, queued like a statement (of no session: never inside a transaction). */
interface UpkeepTurn { kind: 'turn', id: 0, session: -1 }
const UPKEEP_TURN: UpkeepTurn = { kind: 'turn', id: 0, session: -1 }

/**
 * Lets the messages that came while the thread was busy into the queue. They
 * arrive as events, which a loop that only awaits promises never lets in: without
 * this, a pass's turns would all run before a statement sent during the first.
 */
const arrivals = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

export class StatementQueue implements TurnQueue {
  readonly #pglite: PGlite
  readonly #named: NamedStatements
  readonly #send: Send
  readonly #items: Array<ToThread | UpkeepTurn> = []
  #upkeep!: Upkeep
  /** The session whose transaction is open: only its statements run until it ends. */
  #owner: number | null = null
  #running = false
  #closed = false

  /** The queue of a PGlite just opened, which answers through `send`; its upkeep keeps `clock`'s time. */
  static async start (pglite: PGlite, send: Send, timing: UpkeepTiming, clock: Clock = SYSTEM_CLOCK): Promise<StatementQueue> {
    const queue = new StatementQueue(pglite, send)
    queue.#upkeep = await Upkeep.start({ pglite, queue, send, clock }, timing)
    return queue
  }

  private constructor (pglite: PGlite, send: Send) {
    this.#pglite = pglite
    this.#named = new NamedStatements(pglite)
    this.#send = send
  }

  /** A message from the other thread: it runs once everything before it that may run has. */
  receive (request: ToThread): void {
    this.#upkeep.sawActivity()
    this.#items.push(request)
    void this.#pump()
  }

  /** Whether a statement or a turn is being run: once not, the thread has done all it may for now. */
  get running (): boolean {
    return this.#running
  }

  get idle (): boolean {
    return this.#items.length === 0 && this.#owner === null && !this.#running
  }

  get closed (): boolean {
    return this.#closed
  }

  queueTurn (): void {
    this.#items.push(UPKEEP_TURN)
    void this.#pump()
  }

  /** The first item that may run now, taken off the queue. */
  #next (): ToThread | UpkeepTurn | undefined {
    if (this.#owner === null) return this.#items.shift()
    const index = this.#items.findIndex((item) => item.session === this.#owner)
    return index < 0 ? undefined : this.#items.splice(index, 1)[0]
  }

  async #pump (): Promise<void> {
    if (this.#running) return
    this.#running = true
    try {
      for (let item = this.#next(); item !== undefined; item = this.#next()) {
        if (item.kind === 'turn') await this.#turn()
        else await this.#answer(item)
      }
    } finally {
      this.#running = false
    }
  }

  async #turn (): Promise<void> {
    if (this.#closed) {
      this.#upkeep.abandon(CLOSED)
      return
    }
    await arrivals()
    if (this.#items.some((item) => item.kind !== 'turn')) this.#upkeep.yieldTurn()
    else await this.#upkeep.takeTurn()
  }

  async #answer (request: ToThread): Promise<void> {
    if (this.#closed) {
      this.#send({ id: request.id, ok: false, error: CLOSED, inTransaction: false })
      return
    }
    if (request.kind === 'upkeep') {
      // Answered when the pass is over.
      this.#upkeep.ask(request.id)
      return
    }
    let reply: Extract<FromThread, { id: number }>
    try {
      reply = { id: request.id, ok: true, value: await this.#run(request), inTransaction: false }
    } catch (error) {
      reply = { id: request.id, ok: false, error: describe(error), inTransaction: false }
    }
    const inTransaction = !this.#closed && this.#pglite.isInTransaction()
    this.#owner = inTransaction ? request.session : null
    reply.inTransaction = inTransaction
    this.#upkeep.sawActivity()
    this.#send(reply)
  }

  async #run (request: Exclude<ToThread, { kind: 'upkeep' }>): Promise<unknown> {
    switch (request.kind) {
      case 'query':
        this.#upkeep.sawStatement()
        return crossing(request.name === undefined
          ? await this.#pglite.query(request.sql, request.params)
          : await this.#named.query(request.name, request.sql, request.params))
      case 'exec': {
        this.#upkeep.sawStatement()
        const results = await this.#pglite.exec(request.sql)
        if (this.#pglite.isInTransaction()) {
          // Nobody would end it, and every other statement would wait behind it.
          await this.#pglite.query('ROLLBACK')
          throw new Error('a script must not leave a transaction open; it was rolled back')
        }
        return results.map(crossing)
      }
      case 'release':
        // A connection given back inside its transaction: nothing of it was committed.
        if (this.#owner === request.session && this.#pglite.isInTransaction()) await this.#pglite.query('ROLLBACK')
        return null
      case 'close':
        this.#closed = true
        this.#upkeep.stop()
        await this.#pglite.close()
        return null
    }
  }
}
