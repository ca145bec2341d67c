// Every request has an id, in every log line about it and in its answer's
// X-Request-Id, so that a client can quote it. A caller's own X-Request-Id is kept
// when it is a plain, short identifier; anything else (too long, spaces, control
// characters, anything shaped like a token, which would be logged on every line
// and handed back) is replaced rather than logged.
import { randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type { RawRequestDefaultExpression } from 'fastify'
import { hasToken } from '../redact.js'

const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/** Fastify's genReqId: the caller's id when it may be kept, else a fresh UUID. */
export function requestId (request: RawRequestDefaultExpression): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) && !hasToken(given) ? given : randomUUID()
}

export default fp(async (fastify) => {
  fastify.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
}, { name: 'request-id' })
