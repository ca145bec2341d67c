// Opaque page cursors. A cursor carries where the last page ended and a MAC over
// that position and the scope it was issued for (the operation, the person, the
// filters), keyed by a secret of the database's: a cursor that was altered, or
// that was issued to another person or for other filters, is refused rather than
// followed, so it can neither probe nor leak.
import { createHmac, timingSafeEqual } from 'node:crypto'

const TAG_BYTES = 16
// The longest position this service issues is the list's: a project name of 255
// characters, each up to 6 bytes as JSON (a control character, `\u0001`, which the
// table holds though the API refuses it in a name), and a UUID: about 1,600 bytes,
// 2,150 characters of base64. The bound leaves room for that and refuses the absurd.
const SHAPE = /^([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{22})$/

export class CursorCodec {
  readonly #key: Buffer

  constructor (key: Buffer) {
    if (key.length < 32) throw new RangeError('a cursor key has at least 32 bytes')
    this.#key = key
  }

  #tag (scope: string, payload: string): Buffer {
    return createHmac('sha256', this.#key).update(scope).update('\n').update(payload).digest().subarray(0, TAG_BYTES)
  }

  /** A cursor for `position` (any JSON value), valid only for `scope`. */
  encode (scope: string, position: unknown): string {
    const payload = Buffer.from(JSON.stringify(position), 'utf8').toString('base64url')
    return `${payload}.${this.#tag(scope, payload).toString('base64url')}`
  }

  /** The position a cursor carries, or undefined when it was not issued by this service for `scope`. */
  decode (scope: string, cursor: string): unknown {
    const match = SHAPE.exec(cursor)
    if (!match) return undefined
    const [, payload = '', tag = ''] = match
    const given = Buffer.from(tag, 'base64url')
    if (given.length !== TAG_BYTES || !timingSafeEqual(given, this.#tag(scope, payload))) return undefined
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return undefined
    }
  }
}
