// The rules every string the API stores must meet, whatever the field: well-formed
// Unicode (a lone surrogate would be stored as U+FFFD, so what is read back would
// not be what was sent), and, where a value is required, not blank. Blank is what
// shows nothing: whitespace, format characters (U+200B and the like) and other
// default-ignorable code points, in any mix.
import { invalidInput } from '../errors.js'

const INVISIBLE = /^[\p{White_Space}\p{Cf}\p{Default_Ignorable_Code_Point}]*$/u

/** Whether `value` shows nothing. */
export function isBlank (value: string): boolean {
  return INVISIBLE.test(value)
}

/** `value`, refused at `path` when it holds a lone surrogate. */
export function wellFormed (value: string, path: string): string {
  if (!value.isWellFormed()) throw invalidInput(path, 'must be valid Unicode (no lone surrogates)')
  return value
}

/**
 * An id: not empty or whitespace alone (SPEC part 4). It is never stored: anything
 * else that names nothing is the operation's 404.
 */
export function requireId (value: string, path: string): string {
  if (value.trim() === '') throw invalidInput(path, 'must not be blank')
  return value
}
