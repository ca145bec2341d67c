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
