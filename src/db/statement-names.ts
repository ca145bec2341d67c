// The names the statements compiled by prepare() are prepared under on a PostgreSQL
// connection: named statements are parsed and planned once per connection instead
// of on every call, and these are the statements every request runs.
import { createHash } from 'node:crypto'

const NAMES = new Map<string, string>()

/** Gives the statement with this text a name derived from the text itself. */
export function nameStatement (text: string): void {
  NAMES.set(text, `api_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`)
}

/** The name of a statement compiled by prepare(), or undefined for any other. */
export function statementName (text: string): string | undefined {
  return NAMES.get(text)
}

/**
 * The plans of those statements: generic, made once per connection. Their plans do
 * not depend on the values (ids, a digest, a name), but PostgreSQL's default
 * (`plan_cache_mode = auto`) estimates the generic plan of a large statement as the
 * costlier one and then plans it anew on every call: measured on a rename's 18 KB
 * statement, about 3 ms of planning a call, 4.6 ms a rename against 1.4 ms with the
 * generic plan (a description 4.6 against 1.1, notifications/list 2.3 against 1.6;
 * a project and a page of projects unchanged, as PostgreSQL chose generic plans for
 * them already).
 */
export const PLAN_CACHE_MODE = 'force_generic_plan'
