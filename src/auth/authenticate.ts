// Bearer-token authentication: one onRequest hook turns the request's token into
// the caller (person, company, token, read-only), before its body is read, so SPEC
// part 2's order of checks holds by construction: 401, then 403 read_only_token on
// a mutation, then anything about the body or the project. Every route of the API
// adds it (`fastify.addHook('onRequest', fastify.authenticate)`).
import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { headerCount } from '../http/raw-headers.js'
import { findToken, recordUse, tokenDigest } from './tokens.js'
import { countAuthFailure } from '../metrics/registry.js'

/** Who a request acts for. */
export interface Caller {
  personId: string
  companyId: string
  /** The token used, recorded on what the request writes. */
  tokenId: string
  readOnly: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: (request: FastifyRequest) => Promise<void>
  }
  interface FastifyRequest {
    /** The caller, on the routes that authenticate. */
    caller: Caller
  }
  interface FastifyContextConfig {
    /**
     * A POST that read-only tokens may make: what it may change is decided further in
     * (the MCP endpoint, whose write tools run the mutations, which refuse them).
     */
    readOnlyTokens?: boolean
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

/** SHA-256 of the request's bearer token, or null without one (the rate limits key on it too). */
export function presentedTokenDigest (request: FastifyRequest): Buffer | null {
  const token = bearerToken(request.headers.authorization)
  return token === null ? null : tokenDigest(token)
}

const REJECTIONS = {
  revoked: 'token has been revoked',
  expired: 'token has expired',
  suspended: "token's owner is suspended"
} as const

/** Whether the request changes something: a read-only token may not make it. */
function isMutation (request: FastifyRequest): boolean {
  return request.method !== 'GET' && request.method !== 'HEAD' && request.routeOptions.config.readOnlyTokens !== true
}

export default fp(async (fastify) => {
  fastify.decorateRequest('caller', null as unknown as Caller)

  /** The caller of the request, or the 400, 401, 403 or 429 that refuses it; sets the request's databaseMoment. */
  async function caller (request: FastifyRequest): Promise<Caller> {
    // Two credentials are ambiguous: a proxy may judge one and this service the
    // other (RFC 6750 §3.1: invalid_request), whatever they are.
    if (headerCount(request.raw, 'authorization') > 1) {
      countAuthFailure('ambiguous')
      throw new ApiError(400, 'invalid_input', 'send one Authorization header', undefined, {
        'www-authenticate': `${REALM}, error="invalid_request"`
      })
    }
    const token = bearerToken(request.headers.authorization)
    if (token === null || token === '') {
      await fastify.authFailures.failed(request)
      countAuthFailure(token === null ? 'missing' : 'empty')
      throw unauthenticated(token === null ? 'missing bearer token in the Authorization header' : 'empty bearer token', false)
    }
    const refused = await fastify.authFailures.check(request)
    if (refused) throw refused
    const owner = await findToken(fastify.db, tokenDigest(token))
    if (owner === null || owner.rejection !== null) {
      await fastify.authFailures.failed(request)
      countAuthFailure(owner === null ? 'invalid' : owner.rejection!)
      throw unauthenticated(owner === null ? 'invalid token' : REJECTIONS[owner.rejection!], true)
    }
    fastify.authFailures.succeeded(request)
    request.databaseMoment = { snapshot: owner.snapshot, at: owner.now_ms }
    if (owner.stale) {
      const recorded = await recordUse(fastify.db, owner.token_id)
      if (recorded !== undefined) fastify.answers.passOver(recorded)
    }
    if (isMutation(request) && owner.read_only) {
      countAuthFailure('read_only')
      throw new ApiError(403, 'read_only_token', 'this token is read-only and cannot be used for mutations', undefined, {
        'www-authenticate': `${REALM}, error="insufficient_scope"`
      })
    }
    return { personId: owner.person_id, companyId: owner.company_id, tokenId: owner.token_id, readOnly: owner.read_only }
  }

  fastify.decorate('authenticate', async (request: FastifyRequest) => {
    request.caller = await caller(request)
  })
}, { name: 'auth', dependencies: ['db', 'rate-limit', 'answer-cache', '@fastify/sensible'] })
