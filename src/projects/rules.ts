// Input rules the JSON schema cannot say: trimmed and bounded names, ids that are
// not blank, descriptions that are JSON within the size and depth limits, and no
// text Postgres could not store exactly.
import { invalidInput } from '../errors.js'
import { isBlank, requireId, wellFormed } from '../http/input.js'
import { decodeId } from '../ids.js'
import { DESCRIPTION_MAX_BYTES, DESCRIPTION_MAX_DEPTH, NAME_MAX_LENGTH } from './schemas.js'

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

export { requireId } from '../http/input.js'

export function normalizeName (value: string, path = '/name'): string {
  const name = wellFormed(value, path).trim()
  if (isBlank(name)) throw invalidInput(path, 'must not be blank')
  let length = 0
  for (const _ of name) length++
  if (length > NAME_MAX_LENGTH) throw invalidInput(path, `must be at most ${NAME_MAX_LENGTH} characters`)
  if (CONTROL.test(name)) throw invalidInput(path, 'must not contain control characters')
  return name
}

/** Deepest nesting of arrays and objects in JSON text, counted outside strings. */
function jsonDepth (text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) max = depth
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return max
}

export function checkDescription (value: string, path = '/description'): string {
  wellFormed(value, path)
  if (Buffer.byteLength(value, 'utf8') > DESCRIPTION_MAX_BYTES) {
    throw invalidInput(path, `must be at most ${DESCRIPTION_MAX_BYTES} bytes (UTF-8)`)
  }
  // Checked before parsing, so a hostile document is refused in one linear pass.
  if (jsonDepth(value) > DESCRIPTION_MAX_DEPTH) {
    throw invalidInput(path, `must not nest arrays and objects more than ${DESCRIPTION_MAX_DEPTH} deep`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    throw invalidInput(path, 'must be a JSON text')
  }
  if (parsed === null) throw invalidInput(path, 'must not be JSON null')
  return value
}

/** A person's id as the client sent it (public or UUID), decoded; 400 when it decodes to nothing. */
export function personId (value: string, path: string): string {
  requireId(value, path)
  const id = decodeId(value.trim())
  if (id === null) throw invalidInput(path, "must be a person's id")
  return id
}
