// Input rules the JSON schema cannot say: trimmed and bounded names, ids that are
// not blank, descriptions that are JSON within the size and depth limits, and no
// text Postgres could not store exactly.
import { invalidInput } from '../errors.js'
import { isBlank, wellFormed } from '../http/input.js'
import { decodeId } from '../ids.js'
import { DESCRIPTION_MAX_BYTES, DESCRIPTION_MAX_DEPTH, NAME_MAX_LENGTH, type ContextualDateInput } from './schemas.js'

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

import { requireId } from '../http/input.js'
export { requireId }

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

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const DATE_VALUE_MAX_LENGTH = 255

/** The label Operately requires of a month, quarter or year holding the date; null for a day (any label). */
export function contextualValue (type: ContextualDateInput['date_type'], year: number, month: number): string | null {
  if (type === 'month') return `${MONTHS[month - 1]} ${year}`
  if (type === 'quarter') return `Q${Math.floor((month - 1) / 3) + 1} ${year}`
  if (type === 'year') return String(year)
  return null
}

/**
 * A contextual date as Operately validates it, stricter where it would fail later:
 * a real calendar date (year 1 to 9999), a label that is not blank, and for a
 * month, quarter or year exactly the label its date gives (`Jun 2026`, `Q2 2026`,
 * `2026`). Stored and answered as given. Null stays null (no date).
 */
export function checkContextualDate (input: ContextualDateInput | null, path: string): ContextualDateInput | null {
  if (input === null) return null
  const [year, month, day] = input.date.split('-').map(Number) as [number, number, number]
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  if (year < 1 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    throw invalidInput(`${path}/date`, 'must be a calendar date (YYYY-MM-DD)')
  }
  const value = wellFormed(input.value, `${path}/value`)
  if (isBlank(value)) throw invalidInput(`${path}/value`, 'must not be blank')
  if (value.length > DATE_VALUE_MAX_LENGTH) throw invalidInput(`${path}/value`, `must be at most ${DATE_VALUE_MAX_LENGTH} characters`)
  if (CONTROL.test(value)) throw invalidInput(`${path}/value`, 'must not contain control characters')
  const expected = contextualValue(input.date_type, year, month)
  if (expected !== null && value !== expected) {
    throw invalidInput(`${path}/value`, `must be "${expected}" for a ${input.date_type} dated ${input.date}`)
  }
  return { date: input.date, date_type: input.date_type, value }
}

/** An optional id (absent or null: none), not blank when given. */
export function optionalId (value: string | null | undefined, path: string): string | null {
  return value === undefined || value === null ? null : requireId(value, path)
}

/** A day as Operately labels it (`Jun 30, 2026`), from YYYY-MM-DD. */
export function dayLabel (date: string): string {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number]
  return `${MONTHS[month - 1]} ${day}, ${year}`
}

/** A person's id as the client sent it (public or UUID), decoded; 400 when it decodes to nothing. */
export function personId (value: string, path: string): string {
  requireId(value, path)
  const id = decodeId(value.trim())
  if (id === null) throw invalidInput(path, "must be a person's id")
  return id
}
