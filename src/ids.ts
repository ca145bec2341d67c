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

/**
 * A response carries an id for every milestone, contributor and subscriber, so
 * this runs hundreds of times per large project: long division of the 128 bits as
 * four 32-bit words in plain numbers (each step stays below 2^53), not BigInt.
 */
export function shortId (uuid: string): string {
  // Canonical UUID text: 8-4-4-4-12 hex digits.
  let w0 = parseInt(uuid.slice(0, 8), 16)
  let w1 = parseInt(uuid.slice(9, 13) + uuid.slice(14, 18), 16)
  let w2 = parseInt(uuid.slice(19, 23) + uuid.slice(24, 28), 16)
  let w3 = parseInt(uuid.slice(28, 36), 16)
  let out = ''
  for (let i = 0; i < SHORT_LENGTH; i++) {
    let current = w0
    w0 = Math.floor(current / 62)
    current = (current - w0 * 62) * TWO_32 + w1
    w1 = Math.floor(current / 62)
    current = (current - w1 * 62) * TWO_32 + w2
    w2 = Math.floor(current / 62)
    current = (current - w2 * 62) * TWO_32 + w3
    w3 = Math.floor(current / 62)
    out = ALPHABET[current - w3 * 62] + out
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

/** The id clients see for a named resource: `website-redesign-4Ck0aqTnqYgPo0FVqTbLYS`. */
export function sluggedId (uuid: string, name: string): string {
  const prefix = slug(name)
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
