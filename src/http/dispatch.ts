// Requests the app makes to itself on behalf of a request it is serving: an MCP
// tool call runs its operation through `fastify.inject`, so that the operation's
// hooks, checks and logs run as for any HTTP call. The request that carried the
// call was counted by the rate limit already; its inner request carries this
// process's random key and is not counted again. A client cannot guess the key,
// so a header it sends changes nothing.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

const HEADER = 'x-internal-dispatch'
const KEY = randomBytes(32)

/** The header an inner request carries. */
export function dispatchHeaders (): Record<string, string> {
  return { [HEADER]: KEY.toString('base64url') }
}

/** Whether the request is one the app made to itself (dispatchHeaders). */
export function isDispatched (request: FastifyRequest): boolean {
  const value = request.headers[HEADER]
  if (typeof value !== 'string') return false
  const given = Buffer.from(value, 'base64url')
  return given.length === KEY.length && timingSafeEqual(given, KEY)
}
