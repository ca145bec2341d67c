// Answers already written, kept by the database's digest of what they were written
// from. projects/get and projects/list read each project's aggregate with its tag
// in their one statement (db/project-etag.ts): a digest of every input of the
// Project object (the aggregate row and the person's access level), so a project
// written once under a tag is written again byte for byte; notifications/list
// reads its page as JSON text with the text's digest. A hit skips parsing,
// building the answer's objects and serializing them, most of a read's CPU.
//
// Nothing is taken from memory that the database has not just vouched for: every
// request still runs its statement, and a change anywhere (this instance's,
// another's, a script's, the clock making a project outdated) gives another tag.
// Keys are digests of content, not people: two people who see a project alike
// (same role, pins, unread notifications and access level) share one entry.
// Bounded by bytes (ANSWER_CACHE_MB, off the JavaScript heap), least recently used
// out first.
import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    answers: AnswerCache
  }
}

export class AnswerCache {
  /** Oldest use first: Map keeps insertion order, and a hit is moved to the end. */
  private readonly entries = new Map<string, Buffer>()
  private size = 0
  hits = 0
  misses = 0

  /** `maxBytes` 0 keeps nothing. */
  constructor (readonly maxBytes: number) {}

  get bytes (): number {
    return this.size
  }

  get count (): number {
    return this.entries.size
  }

  get (key: string): Buffer | undefined {
    const value = this.entries.get(key)
    if (value === undefined) {
      this.misses++
      return undefined
    }
    this.hits++
    this.entries.delete(key)
    this.entries.set(key, value)
    return value
  }

  /**
   * Keeps `value` under `key`, dropping the least recently used entries to stay
   * within the bound. An answer larger than a sixteenth of the bound is not kept:
   * one project with a 512 KiB description must not push out a hundred others.
   */
  set (key: string, value: Buffer): void {
    if (value.length > this.maxBytes / 16) return
    const previous = this.entries.get(key)
    if (previous !== undefined) {
      this.entries.delete(key)
      this.size -= previous.length
    }
    this.entries.set(key, value)
    this.size += value.length
    for (const [oldest, buffer] of this.entries) {
      if (this.size <= this.maxBytes) break
      this.entries.delete(oldest)
      this.size -= buffer.length
    }
  }
}

/** Sends an answer written (or kept) as its route's schema writes it. */
export function sendAnswer (reply: FastifyReply, answer: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(answer)
}

export default fp<{ maxBytes: number }>(async (fastify, { maxBytes }) => {
  fastify.decorate('answers', new AnswerCache(maxBytes))
}, { name: 'answers' })
