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

export function shortId (uuid: string): string {
  let n = BigInt('0x' + uuid.replaceAll('-', ''))
  let out = ''
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out
    n /= 62n
  }
  return out.padStart(SHORT_LENGTH, '0')
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
  if (UUID.test(trimmed)) return trimmed.toLowerCase()
  const last = trimmed.slice(trimmed.lastIndexOf('-') + 1)
  if (!SHORT.test(last)) return null
  let n = 0n
  for (const c of last) n = n * 62n + DIGIT.get(c)!
  if (n > MAX) return null
  const hex = n.toString(16).padStart(32, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
