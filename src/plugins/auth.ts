// Bearer-token authentication. `fastify.authenticate` is an onRequest hook, so it
// runs after routing and before the body is read: an unauthenticated caller learns
// nothing about validation or about which projects exist.
import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { findToken } from '../db/tokens.js'

export interface Caller {
  tokenId: string
  personId: string
  readOnly: boolean
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

  fastify.decorate('authenticate', async (request: FastifyRequest) => {
    const token = bearerToken(request.headers.authorization)
    if (token === null) throw unauthenticated('missing bearer token in the Authorization header', false)
    if (token === '') throw unauthenticated('empty bearer token', false)

    const owner = await findToken(fastify.db, token)
    if (!owner) throw unauthenticated('invalid token', true)
    if (owner.rejection) throw unauthenticated(REJECTIONS[owner.rejection], true)

    const mutation = request.method !== 'GET' && request.method !== 'HEAD'
    if (mutation && owner.read_only) {
      throw new ApiError(403, 'read_only_token', 'this token is read-only and cannot be used for mutations', undefined, {
        'www-authenticate': `${REALM}, error="insufficient_scope"`
      })
    }
    request.caller = { tokenId: owner.token_id, personId: owner.person_id, readOnly: owner.read_only }
  })
}, { name: 'auth', dependencies: ['db'] })
