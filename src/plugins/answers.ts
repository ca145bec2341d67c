// Answers already written, kept under a digest of the text they were written from.
// projects/get and projects/list read each project's aggregate as JSON text (the
// aggregate row: every input of the Project object but the person's access level),
// notifications/list its page as JSON text; the answer is a function of that text,
// so an answer written once is written again byte for byte while the database
// returns the same text. A hit skips parsing, building the answer's objects and
// serializing them, most of a read's CPU. A project is kept by the part of its text
// that is the same for every reader: the reader's own fields (is_pinned, my_role,
// notifications, permissions) are written anew into its bytes (presenters/project.ts).
//
// Nothing is taken from memory that the database has not just confirmed: every
// request still runs its statement, and a change anywhere (this instance's,
// another's, a script's, the clock making a project outdated) changes the text.
// A page of projects, or a project, asked for again is confirmed by version
// instead of sent: its statement is told the versions of the projects the server
// holds written (RecentVersions below, db/project-list.ts, db/project-aggregate.ts),
// and returns only the readers' parts of those that are still at them. A page of
// notifications is confirmed by the page's version (db/notifications.ts), and then
// not sent at all.
// A change's answer is not kept, but its project's children's fields are, written,
// under the children's version (or the digest of their text when the statement could
// not tell it; presenters/project.ts, KeptChildren): the next change of the project,
// or a read that finds no whole answer, writes only the rest, and the next change's
// statement, told the version, does not send them.
// Keys are versions or digests of content, not people: everyone who reads a project
// shares one entry (a page of notifications is one person's own: its version names
// their notifications). The digest of a text is taken here, not in SQL: native
// SHA-256 costs the embedded database's WebAssembly several times more (a page's
// version is an MD5 in SQL, of a few kilobytes of ids and versions, not of the
// page). Bounded by the bytes entries hold (ANSWER_CACHE_MB, off the JavaScript
// heap): a project or a page compressed (AnswerPart below), a project's children as
// written; least recently used out first.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'
import { acceptsGzip, deflated, gzipMember, inflated, stored, type Deflated } from '../gzip.js'
import { WRITE_HIGH_WATER_MARK } from './transport.js'

declare module 'fastify' {
  interface FastifyInstance {
    answers: AnswerCache
    /** What recent pages of projects/list showed (RecentVersions). */
    recentPages: RecentVersions
    /** The version of each project projects/get recently answered, its id the scope (RecentVersions). */
    recentProjects: RecentVersions
    /** The version of the kept children of each project a change recently answered, its id the scope (RecentVersions). */
    recentChildren: RecentVersions
    /** The version of each page of notifications recently answered, the token (or person) and the page its scope (RecentVersions). */
    recentInboxes: RecentVersions
  }
}

// RecentVersions' bounds: a project's id and version take about 160 bytes, so
// under 3 MB in all; a scope holds the projects of a dozen pages of 20, or two of 100.
const RECENT_PROJECTS = 16_384
const RECENT_PER_SCOPE = 256

/** The key of an answer: SHA-256 of its kind and of the texts it is written from, each after its length. */
export function answerKey (kind: string, ...texts: string[]): string {
  const hash = createHash('sha256').update(kind)
  for (const text of texts) hash.update(`\n${text.length}\n`).update(text)
  return hash.digest('base64url')
}

/** What is kept: an answer's bytes, or an object holding them, whose size is theirs. */
export interface Kept {
  readonly byteLength: number
}

export class AnswerCache {
  /** Oldest use first: Map keeps insertion order, and a hit is moved to the end. */
  private readonly entries = new Map<string, Kept>()
  private size = 0
  hits = 0
  misses = 0
  /** Parts of answers taken from memory (part). */
  partHits = 0

  /** `maxBytes` 0 keeps nothing. */
  constructor (readonly maxBytes: number) {}

  get bytes (): number {
    return this.size
  }

  get count (): number {
    return this.entries.size
  }

  /** What `key` holds, without counting a use or making it recent. */
  peek<T extends Kept> (key: string): T | undefined {
    return this.entries.get(key) as T | undefined
  }

  /** What `key` holds: the kind its answerKey names says what that is. */
  get<T extends Kept> (key: string): T | undefined {
    const value = this.entries.get(key) as T | undefined
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
   * What `key` holds when it is a part of an answer (presenters/project.ts,
   * KeptChildren), counted among partHits, not among the answers' hits and misses;
   * made recent, like a hit, only when `recent` says so.
   */
  part<T extends Kept> (key: string, recent: boolean): T | undefined {
    const value = this.entries.get(key) as T | undefined
    if (value === undefined) return undefined
    this.partHits++
    if (recent) {
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }

  /**
   * Whether an answer of `bytes` may be kept: not when it is larger than a
   * sixteenth of the bound, for one project with a 512 KiB description must not
   * push out a hundred others. Asked with an answer's bytes as written, before it
   * is compressed for keeping, so that none is compressed for nothing.
   */
  mayKeep (bytes: number): boolean {
    return bytes <= this.maxBytes / 16
  }

  /**
   * Keeps `value` under `key`, dropping the least recently used entries to stay
   * within the bound; not when it is too large (mayKeep).
   */
  set (key: string, value: Kept): void {
    if (!this.mayKeep(value.byteLength)) return
    const previous = this.entries.get(key)
    if (previous !== undefined) {
      this.entries.delete(key)
      this.size -= previous.byteLength
    }
    this.entries.set(key, value)
    this.size += value.byteLength
    dropOldest(this.entries, () => this.size > this.maxBytes, (kept) => { this.size -= kept.byteLength })
  }
}

/**
 * The versions of the projects that recent pages of a list showed, by the page's
 * scope (the list's filters, cursor and size), each project's latest, most recent
 * last: what a request for the same page may tell the database the server holds
 * written (db/project-list.ts, `known`). The same scope is the same first page for
 * everyone of a company, so a scope keeps the projects of several pages. Bounded in
 * projects over all scopes, least recently shown scope out first.
 */
export class RecentVersions {
  /** Oldest use first; in each scope, project id to version, oldest shown first. */
  private readonly scopes = new Map<string, Map<string, string>>()
  private size = 0

  constructor (readonly maxProjects: number, readonly perScope: number) {}

  get count (): number {
    return this.size
  }

  /** How many scopes are remembered: only those that showed a project. */
  get scopeCount (): number {
    return this.scopes.size
  }

  /** The versions recent pages of `scope` showed. */
  of (scope: string): Iterable<string> {
    return this.scopes.get(scope)?.values() ?? []
  }

  /** Remembers the versions a page of `scope` showed, each project's instead of the one before (none for a project without one). */
  remember (scope: string, shown: ReadonlyArray<{ id: string, version: string | null }>): void {
    const versions = this.scopes.get(scope) ?? new Map<string, string>()
    this.scopes.delete(scope)
    this.size -= versions.size
    for (const { id, version } of shown) {
      versions.delete(id)
      if (version !== null) versions.set(id, version)
    }
    dropOldest(versions, () => versions.size > this.perScope)
    // An empty page leaves nothing: filters that match nothing would otherwise add
    // scopes without end, none of them counted against the bound.
    if (versions.size === 0) return
    this.scopes.set(scope, versions)
    this.size += versions.size
    dropOldest(this.scopes, () => this.size > this.maxProjects, (dropped) => { this.size -= dropped.size })
  }
}

/**
 * What `answers` holds under `keyOf` each version recent answers of `scope` showed,
 * by version: what a statement may be told the server holds written, held here for
 * the request whatever the cache drops meanwhile.
 */
export function heldAt<T extends Kept> (answers: AnswerCache, recent: RecentVersions, scope: string, keyOf: (version: string) => string): Map<string, T> {
  const held = new Map<string, T>()
  for (const version of recent.of(scope)) {
    const kept = answers.peek<T>(keyOf(version))
    if (kept !== undefined) held.set(version, kept)
  }
  return held
}

/**
 * What `held` holds at `version`, which the statement found the thing (`what`) at
 * and so left out of its answer. A statement leaves out only what it was told is
 * held: anything else is a bug, not an answer.
 */
export function heldVersion<T> (held: ReadonlyMap<string, T>, version: string | null, what: string): T {
  const kept = version === null ? undefined : held.get(version)
  if (kept === undefined) throw new Error(`${what} at version ${String(version)} sent without what this server holds of it, which it does not hold`)
  return kept
}

/** Drops the entries of `map` in insertion order, oldest first, while `over()` holds, telling `dropped` of each. */
function dropOldest<K, V> (map: Map<K, V>, over: () => boolean, dropped: (value: V) => void = () => {}): void {
  for (const [key, value] of map) {
    if (!over()) break
    map.delete(key)
    dropped(value)
  }
}

// What is kept is kept compressed (gzip.ts, Deflated): raw DEFLATE pieces, each
// compressed once as it is kept, about a quarter of the bytes they hold (a project
// of the bench: 19 KB written, 4.4 KB kept), so that the bound holds four times as
// many answers as it would hold written out. A page (projects/list,
// notifications/list) goes gzip-compressed to a client that accepts it: its kept
// pieces as they are, the bytes written for the request between them (a reader's
// fields, a project too large to keep) compressed now, or stored. Any other answer,
// or one to a client that does not accept gzip, is sent as it is: its kept pieces
// inflated, in one pass (20–30 µs for a project of the bench). A project
// (projects/get) goes as it is: its ETag names its bytes (routes/projects).
// With nothing kept (ANSWER_CACHE_MB=0) pages go as they are too: every page would
// be compressed whole, every time (a page of 20 of the bench's projects: about 6 ms
// of CPU at level 1, as much as writing it).

/** A part of an answer: bytes written for it, or kept bytes compressed (keep). */
export type AnswerPart = Buffer | Deflated

/** Kept bytes are compressed at this level, once (a project of the bench: level 1 keeps 9 % more bytes for 15 % less CPU). */
const KEPT_LEVEL = 6
/**
 * The bytes written for one request (a reader's fields, or a project too large to
 * keep) are compressed at FRESH_LEVEL when there are at least FRESH_DEFLATE_MIN of
 * them in a row, else sent as stored blocks: compressing a few hundred bytes costs
 * more CPU than sending them.
 */
const FRESH_LEVEL = 1
const FRESH_DEFLATE_MIN = 8 * 1024
/** An answer up to this size is sent as one buffer; a larger one in its parts, not copied into one. */
const ONE_BUFFER_MAX = 256 * 1024

/** `bytes` as they are kept: compressed once, to be sent compressed or inflated (AnswerPart). */
export function keep (bytes: Buffer): Deflated {
  return deflated(bytes, KEPT_LEVEL)
}

/** An answer as one gzip member: its kept pieces as they are, the bytes between them compressed now (or stored). */
function gzipAnswer (parts: readonly AnswerPart[]): Buffer[] {
  const pieces: Deflated[] = []
  let fresh: Buffer[] = []
  const flush = () => {
    if (fresh.length === 0) return
    const bytes = fresh.length === 1 ? fresh[0]! : Buffer.concat(fresh)
    pieces.push(bytes.length >= FRESH_DEFLATE_MIN ? deflated(bytes, FRESH_LEVEL) : stored(bytes))
    fresh = []
  }
  for (const part of parts) {
    if (Buffer.isBuffer(part)) {
      fresh.push(part)
      continue
    }
    flush()
    pieces.push(part)
  }
  flush()
  return gzipMember(pieces)
}

/** An answer's bytes as they are: its parts when none is kept, else one buffer, its kept pieces inflated with the bytes between them. */
export function plainAnswer (parts: readonly AnswerPart[]): Buffer[] {
  if (parts.every((part) => Buffer.isBuffer(part))) return parts as Buffer[]
  return [inflated(parts)]
}

/**
 * Sends an answer's bytes as its route's schema writes them: one buffer, or its
 * parts in order, its kept pieces inflated. An answer of many parts (a page of
 * projects is most of a megabyte) is sent one part after the other, not copied
 * into one, with its length.
 */
export function sendAnswer (reply: FastifyReply, answer: Buffer | readonly AnswerPart[]): FastifyReply {
  return sendBytes(reply, Buffer.isBuffer(answer) ? [answer] : plainAnswer(answer))
}

function sendBytes (reply: FastifyReply, parts: readonly Buffer[]): FastifyReply {
  reply.type('application/json; charset=utf-8')
  if (parts.length === 1) return reply.send(parts[0])
  let length = 0
  for (const part of parts) length += part.length
  if (length <= ONE_BUFFER_MAX) return reply.send(Buffer.concat(parts, length))
  // Read as a whole into the response, which takes it without waiting (WRITE_HIGH_WATER_MARK).
  return reply.header('content-length', length).send(Readable.from(parts, { objectMode: false, highWaterMark: WRITE_HIGH_WATER_MARK }))
}

/**
 * Sends a page as sendAnswer does, gzip-compressed when the request's
 * Accept-Encoding accepts it (gzip.ts, acceptsGzip) and answers are kept, its kept
 * pieces as they are kept. Either way the answer varies with Accept-Encoding.
 */
export function sendPage (reply: FastifyReply, page: readonly AnswerPart[]): FastifyReply {
  reply.header('vary', 'Accept-Encoding')
  if (reply.server.answers.maxBytes === 0 || !acceptsGzip(reply.request.headers['accept-encoding'])) return sendAnswer(reply, page)
  reply.header('content-encoding', 'gzip')
  return sendBytes(reply, gzipAnswer(page))
}

export default fp<{ maxBytes: number }>(async (fastify, { maxBytes }) => {
  fastify.decorate('answers', new AnswerCache(maxBytes))
  fastify.decorate('recentPages', new RecentVersions(RECENT_PROJECTS, RECENT_PER_SCOPE))
  fastify.decorate('recentProjects', new RecentVersions(RECENT_PROJECTS, 1))
  fastify.decorate('recentChildren', new RecentVersions(RECENT_PROJECTS, 1))
  fastify.decorate('recentInboxes', new RecentVersions(RECENT_PROJECTS, 1))
}, { name: 'answers' })
