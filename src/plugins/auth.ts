// Bearer-token authentication. `fastify.authenticate` is an onRequest hook, so it
// runs after routing and before the body is read: an unauthenticated caller learns
// nothing about validation or about which projects exist. An address that has
// failed to authenticate too often is refused before its token is looked up
// (plugins/rate-limit.ts).
import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { findToken } from '../db/tokens.js'
import { headerCount } from '../raw-headers.js'

export interface Caller {
  tokenId: string
  personId: string
}

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: (request: FastifyRequest) => Promise<void>
  }
  interface FastifyRequest {
    caller: Caller
  }
}

const REALM = 'Bearer realm="api"'

function unauthenticated (message: string, invalidToken: boolean): ApiError {
  return new ApiError(401, 'unauthenticated', message, undefined, {
    'www-authenticate': invalidToken ? `${REALM}, error="invalid_token"` : REALM
  })
}

/** The token of an `Authorization: Bearer <token>` header: '' when empty, null when absent or another scheme. */
export function bearerToken (header: string | undefined): string | null {
  if (header === undefined) return null
  const match = /^\s*(\S+)(?:[ \t]+(.*?))?\s*$/s.exec(header)
  if (!match || match[1]!.toLowerCase() !== 'bearer') return null
  return match[2] ?? ''
}

const REJECTIONS = {
  revoked: 'token has been revoked',
  expired: 'token has expired',
  suspended: "token's owner is suspended"
} as const

export default fp(async (fastify) => {
  fastify.decorateRequest('caller', null as unknown as Caller)

  async function identify (request: FastifyRequest) {
    // Two credentials are ambiguous: a proxy may judge one and this service the
    // other (RFC 6750 §3.1: invalid_request), whatever they are.
    if (headerCount(request.raw, 'authorization') > 1) {
      throw new ApiError(400, 'invalid_input', 'send one Authorization header', undefined, {
        'www-authenticate': `${REALM}, error="invalid_request"`
      })
    }
    const token = bearerToken(request.headers.authorization)
    if (token === null) throw unauthenticated('missing bearer token in the Authorization header', false)
    if (token === '') throw unauthenticated('empty bearer token', false)

    const refused = await fastify.authFailures.check(request)
    if (refused) throw refused
    const owner = await findToken(fastify.db, token)
    if (!owner) throw unauthenticated('invalid token', true)
    if (owner.rejection) throw unauthenticated(REJECTIONS[owner.rejection], true)
    fastify.authFailures.succeeded(request)
    return owner
  }

  fastify.decorate('authenticate', async (request: FastifyRequest) => {
    const [error, owner] = await fastify.to(identify(request))
    if (error) {
      if (error instanceof ApiError && error.statusCode === 401) await fastify.authFailures.failed(request)
      throw error
    }

    const mutation = request.method !== 'GET' && request.method !== 'HEAD'
    if (mutation && owner.read_only) {
      throw new ApiError(403, 'read_only_token', 'this token is read-only and cannot be used for mutations', undefined, {
        'www-authenticate': `${REALM}, error="insufficient_scope"`
      })
    }
    request.caller = { tokenId: owner.token_id, personId: owner.person_id }
  })
}, { name: 'auth', dependencies: ['db', 'rate-limit', '@fastify/sensible'] })
