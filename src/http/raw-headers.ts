// Node.js keeps only the first of some repeated headers (Authorization, Host,
// Content-Type) in `headers` and drops the rest; a proxy in front may keep another.
// The raw list tells how many were sent.
import type { IncomingMessage } from 'node:http'

/** How many times the request carried the header `name` (lower case). */
export function headerCount (raw: Pick<IncomingMessage, 'rawHeaders'>, name: string): number {
  const headers = raw.rawHeaders
  let count = 0
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() === name) count++
  return count
}
