// Public ids: the row's UUID in base62 (22 characters), optionally after a slug of
// the name and a dash. Only the last dash-separated segment is decoded, so an id
// with an old slug keeps working after a rename. Canonical UUID strings are
// accepted too.
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const DIGIT = new Map([...ALPHABET].map((c, i) => [c, BigInt(i)]))
const SHORT_LENGTH = 22
const MAX = (1n << 128n) - 1n
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const SHORT = /^[0-9A-Za-z]{22}$/

/** Whether the text is a UUID in its canonical form (any case). */
export function isUuid (text: string): boolean {
  return UUID.test(text)
}

const TWO_32 = 2 ** 32
const HEX_DIGIT = new Int8Array(128)
for (const [i, c] of [...'0123456789abcdef'].entries()) {
  HEX_DIGIT[c.charCodeAt(0)] = i
  HEX_DIGIT[c.toUpperCase().charCodeAt(0)] = i
}
/** Every two-digit base62 string, by value: a step of the division yields two digits. */
const PAIRS = Array.from({ length: 62 * 62 }, (_, n) => ALPHABET[Math.floor(n / 62)]! + ALPHABET[n % 62]!)
const PAIR_BASE = 62 * 62

/** The 32-bit value of the 8 hex digits of `uuid` at `a` (4) and `b` (4). */
function hexWord (uuid: string, a: number, b: number): number {
  let w = 0
  for (let i = a; i < a + 4; i++) w = w * 16 + HEX_DIGIT[uuid.charCodeAt(i)]!
  for (let i = b; i < b + 4; i++) w = w * 16 + HEX_DIGIT[uuid.charCodeAt(i)]!
  return w
}

/**
 * A response carries an id for every milestone, contributor, subscriber and
 * notification, so this runs hundreds of times per answer: long division of the
 * 128 bits as four 32-bit words in plain numbers (each step stays below 2^53), not
 * BigInt, by 62² so that each step gives two digits (22 digits: 11 steps).
 */
export function shortId (uuid: string): string {
  // Canonical UUID text: 8-4-4-4-12 hex digits.
  let w0 = hexWord(uuid, 0, 4)
  let w1 = hexWord(uuid, 9, 14)
  let w2 = hexWord(uuid, 19, 24)
  let w3 = hexWord(uuid, 28, 32)
  let out = ''
  for (let i = 0; i < SHORT_LENGTH / 2; i++) {
    let current = w0
    w0 = Math.floor(current / PAIR_BASE)
    current = (current - w0 * PAIR_BASE) * TWO_32 + w1
    w1 = Math.floor(current / PAIR_BASE)
    current = (current - w1 * PAIR_BASE) * TWO_32 + w2
    w2 = Math.floor(current / PAIR_BASE)
    current = (current - w2 * PAIR_BASE) * TWO_32 + w3
    w3 = Math.floor(current / PAIR_BASE)
    out = PAIRS[current - w3 * PAIR_BASE] + out
  }
  return out
}

export function slug (name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 60)
    .replace(/^-+|-+$/g, '')
}

// A page of notifications names the same few projects again and again; Unicode
// normalisation is the dear part of a slug. Bounded: emptied when full.
const SLUGS = new Map<string, string>()
const SLUGS_MAX = 2000

function cachedSlug (name: string): string {
  let prefix = SLUGS.get(name)
  if (prefix === undefined) {
    if (SLUGS.size >= SLUGS_MAX) SLUGS.clear()
    prefix = slug(name)
    SLUGS.set(name, prefix)
  }
  return prefix
}

/** The id clients see for a named resource: `website-redesign-4Ck0aqTnqYgPo0FVqTbLYS`. */
export function sluggedId (uuid: string, name: string): string {
  const prefix = cachedSlug(name)
  return prefix ? `${prefix}-${shortId(uuid)}` : shortId(uuid)
}

/** The UUID an id stands for, or null when it stands for none. */
export function decodeId (id: string): string | null {
  const trimmed = id.trim()
  if (isUuid(trimmed)) return trimmed.toLowerCase()
  const last = trimmed.slice(trimmed.lastIndexOf('-') + 1)
  if (!SHORT.test(last)) return null
  let n = 0n
  for (const c of last) n = n * 62n + DIGIT.get(c)!
  if (n > MAX) return null
  const hex = n.toString(16).padStart(32, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
