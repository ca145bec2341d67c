// The security headers of every answer: helmet's defaults, and no caching of
// answers that depend on who asks. (Answers given before routing carry the same
// headers: http/transport.ts.)
//
// helmet's defaults are the same headers for every answer, so helmet's middleware
// runs once, at start, and each answer gets what it set. (@fastify/helmet builds
// the middleware anew for every request, parsing the policy each time: measured
// at about 5 % of the server's CPU on projects/get.)
import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import helmet from 'helmet'

/** The headers helmet's default middleware leaves on an answer, by lower-case name. */
function helmetHeaders (): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader (name: string, value: string | number | readonly string[]) { headers[name.toLowerCase()] = String(value) },
    removeHeader (name: string) { delete headers[name.toLowerCase()] }
  }
  let failure: unknown
  let called = false
  helmet()({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    called = true
    failure = error
  })
  if (!called || failure) throw new Error('helmet\'s middleware did not complete at once', { cause: failure })
  return Object.freeze(headers)
}

/** helmet's headers on an answer, as every answer of this service carries them. */
export const SECURITY_HEADERS = helmetHeaders()

export default fp(async (fastify) => {
  // Before the route runs, so that a route may set a header of its own instead (the docs' policy).
  fastify.addHook('onRequest', (_request, reply, done) => {
    reply.headers(SECURITY_HEADERS)
    done()
  })
  fastify.addHook('onSend', async (_request, reply) => {
    // Routes that may be cached (the static docs) say so themselves.
    if (!reply.hasHeader('cache-control')) reply.cacheControl('no-store')
  })
}, { name: 'security' })
