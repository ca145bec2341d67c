// The page parameters of the list operations (projects/list's `limit`,
// notifications/list's `page` and `per_page`): digits by their schema's pattern, a
// whole number within the operation's bounds here, with one message for all.
import { invalidInput } from '../errors.js'

/** A page parameter's value when absent and the largest one allowed. */
export interface PageBounds {
  default: number
  max: number
}

/** The parameter's digits as a number from 1 to `bounds.max`, its default when absent; outside, 400 at `path`. */
export function pageParameter (digits: string | undefined, path: string, bounds: PageBounds): number {
  if (digits === undefined) return bounds.default
  const n = Number(digits)
  if (n < 1 || n > bounds.max) throw invalidInput(path, `must be from 1 to ${bounds.max}`)
  return n
}
