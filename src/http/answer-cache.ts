// Answers of reads (projects/get, projects/list, notifications/list), kept while
// the database stays as it was. The token's statement (auth/tokens.ts) also reads
// PostgreSQL's snapshot and clock: two equal snapshots have seen the same
// transactions commit, so an answer computed after a request saw snapshot S holds
// for any later request that sees S, until the clock makes it untrue (a project
// becomes outdated at an instant its row tells). A commit anywhere changes the
// snapshot, and each kept answer is computed anew on its next read: nothing here
// needs to know which rows an answer read. One kind of commit is let pass: the
// once-a-minute record of a token's use (auth/tokens.ts), whose transaction ids
// this process is told of. Between two snapshots that differ by those alone, a
// kept answer still holds: no answer reads when a token was last used.
//
// An answer is kept as its route's serializer writes it and, on the routes that
// compress their pages, gzip-compressed once for the clients that accept it, as
// @fastify/compress would compress it. ANSWER_CACHE_MB=0 turns keeping off: each
// read is then computed and serialized as it comes, and @fastify/compress
// compresses it; the answers are the same (test/http/answer-cache.test.ts).
import { gzipSync } from 'node:zlib'
import { negotiate } from '@fastify/accept-negotiator'
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { PAGE_COMPRESSION } from '../schemas/common.js'

/** What the database was when the request was authenticated (auth/authenticate.ts). */
export interface DatabaseMoment {
  /** pg_current_snapshot() as text. */
  snapshot: string
  /** now(), in milliseconds since the epoch. */
  at: number
}

/** A read's answer: its body as the route serializes it, its ETag, and until when it holds. */
export interface Answer {
  body: string
  etag?: string
  /** The database's instant (ms) from which time makes the answer untrue; Infinity when it cannot. */
  until: number
}

/** A snapshot's parts (xmin:xmax:xip,…): every transaction below xmax not in xip had ended. */
interface Snapshot { xmax: number, running: Set<number> }

function parseSnapshot (text: string): Snapshot | null {
  const match = /^(\d+):(\d+):([\d,]*)$/.exec(text)
  if (match === null) return null
  return { xmax: Number(match[2]), running: new Set(match[3] === '' ? [] : match[3]!.split(',').map(Number)) }
}

/** Transactions let pass that a snapshot may differ by, at most: past it, it is taken as changed. */
const PASSABLE = 64
/** Transaction ids let pass, the most recent: a commit older than these has long been seen. */
const REMEMBERED = 4096

export interface Kept extends Answer {
  snapshot: string
  /** The body gzip-compressed, once a client that accepts gzip read it from a page route. */
  gzip?: Buffer
}

/** An answer larger than this share of the budget is not kept: it would crowd out many others. */
const LARGEST_SHARE = 1 / 8
/** @fastify/compress's default: smaller bodies are sent as they are. */
const COMPRESSION_THRESHOLD = 1024

const size = (kept: Kept) => kept.body.length + (kept.gzip?.length ?? 0)

export class AnswerCache {
  readonly #budget: number
  readonly #kept = new Map<string, Kept>()
  #bytes = 0
  readonly #passed = new Set<number>()

  /** `budget` in bytes; 0 keeps nothing. */
  constructor (budget: number) {
    this.#budget = budget
  }

  /**
   * Sends the answer kept under `key` for the request's moment, else `compute`'s,
   * kept for the requests that follow; `compressed` on the routes that compress
   * their pages. `prepare` sets what depends on the answer (its ETag) and may send
   * something else instead (a 304).
   */
  async send (request: FastifyRequest, reply: FastifyReply, options: { key: string, compressed?: boolean },
    compute: () => Promise<Answer>, prepare?: (answer: Answer) => boolean): Promise<FastifyReply> {
    const answer = await this.read(options.key, request.databaseMoment, compute)
    if (prepare !== undefined && !prepare(answer)) return reply
    reply.type('application/json; charset=utf-8')
    if (options.compressed === true && this.#budget > 0 && acceptsGzip(request) && answer.body.length >= COMPRESSION_THRESHOLD) {
      if (answer.gzip === undefined) {
        answer.gzip = gzipSync(answer.body, PAGE_COMPRESSION.zlibOptions)
        if (this.#kept.get(options.key) === answer) this.#bytes += answer.gzip.length
      }
      varyOnEncoding(reply)
      reply.header('content-encoding', 'gzip')
      return reply.send(answer.gzip)
    }
    return reply.send(answer.body)
  }

  /** Lets the commit of transaction `xid` pass: it wrote nothing any answer reads. */
  passOver (xid: string): void {
    this.#passed.add(Number(xid))
    for (const oldest of this.#passed) {
      if (this.#passed.size <= REMEMBERED) break
      this.#passed.delete(oldest)
    }
  }

  /**
   * Whether snapshot `now` has seen only the commits of `kept` and some let pass:
   * every transaction that ended between them was let pass, and none that had
   * ended at `kept` is running at `now` (an older snapshot than the kept one).
   */
  #unchangedSince (kept: string, now: string): boolean {
    if (kept === now) return true
    const before = parseSnapshot(kept)
    const after = parseSnapshot(now)
    if (before === null || after === null || after.xmax < before.xmax || after.xmax - before.xmax > PASSABLE) return false
    for (const xid of after.running) if (xid < before.xmax && !before.running.has(xid)) return false
    const ended = (xid: number) => !after.running.has(xid)
    for (const xid of before.running) if (xid < after.xmax && ended(xid) && !this.#passed.has(xid)) return false
    for (let xid = before.xmax; xid < after.xmax; xid++) if (ended(xid) && !this.#passed.has(xid)) return false
    return true
  }

  /** The answer kept under `key` for this moment, else `compute`'s, kept for the moments that follow. */
  async read (key: string, moment: DatabaseMoment, compute: () => Promise<Answer>): Promise<Kept> {
    if (this.#budget === 0) return { ...await compute(), snapshot: moment.snapshot }
    const kept = this.#kept.get(key)
    if (kept !== undefined) {
      this.#forget(key, kept)
      if (moment.at < kept.until && this.#unchangedSince(kept.snapshot, moment.snapshot)) {
        // Compared from the later snapshot from now on.
        kept.snapshot = moment.snapshot
        this.#keep(key, kept)
        return kept
      }
    }
    const answer: Kept = { ...await compute(), snapshot: moment.snapshot }
    if (answer.body.length <= this.#budget * LARGEST_SHARE) this.#keep(key, answer)
    return answer
  }

  #keep (key: string, kept: Kept): void {
    this.#kept.set(key, kept)
    this.#bytes += size(kept)
    // The least recently read go first (a Map iterates in insertion order).
    for (const [oldest, answer] of this.#kept) {
      if (this.#bytes <= this.#budget) break
      this.#forget(oldest, answer)
    }
  }

  #forget (key: string, kept: Kept): void {
    this.#kept.delete(key)
    this.#bytes -= size(kept)
  }
}

/** Whether @fastify/compress would send this request's answer gzip-compressed. */
function acceptsGzip (request: FastifyRequest): boolean {
  const header = request.headers['accept-encoding']
  if (header === undefined || request.headers['x-no-compression'] !== undefined) return false
  return negotiate(header.toLowerCase().replace(/\*|x-gzip/gu, 'gzip'), PAGE_COMPRESSION.encodings) === 'gzip'
}

/** Vary names Accept-Encoding, as @fastify/compress writes it. */
function varyOnEncoding (reply: FastifyReply): void {
  const vary = reply.getHeader('vary')
  if (vary === undefined) {
    reply.header('vary', 'accept-encoding')
    return
  }
  const values = Array.isArray(vary) ? vary : [String(vary)]
  if (!values.some((value) => value.includes('accept-encoding'))) reply.header('vary', [...values, 'accept-encoding'].join(', '))
}

declare module 'fastify' {
  interface FastifyInstance {
    answers: AnswerCache
  }
  interface FastifyRequest {
    /** The database's snapshot and clock when the request was authenticated. */
    databaseMoment: DatabaseMoment
  }
}

export default fp<{ budgetBytes: number }>(async (fastify, { budgetBytes }) => {
  fastify.decorate('answers', new AnswerCache(budgetBytes))
  fastify.decorateRequest('databaseMoment', null as unknown as DatabaseMoment)
}, { name: 'answer-cache' })
