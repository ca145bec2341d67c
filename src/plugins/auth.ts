// Bearer-token authentication, in two halves. `fastify.authenticate`, an onRequest
// hook, makes the checks that need no database: one Authorization header, a
// bearer token that is not empty, and the per-address budget of failed
// authentications (plugins/rate-limit.ts: an address that has spent it is refused
// before its token is looked up). It keeps the token's digest as the request's
// `caller`, which the operation's one statement checks (db/caller.ts).
//
// Any answer but that statement's own success first confirms the caller
// (`fastify.confirmCaller`, called by the error handler of plugins/errors.ts),
// with db/tokens.ts's findToken: a body, a query or an id that is refused, a
// statement that found no valid caller. So SPEC part 2's order of checks holds:
// an unauthenticated caller learns nothing about validation or about which
// projects exist (401, then 403 read_only_token on a mutation, before 400).
// A body that has not arrived whole by the time it would be read is not read
// for a caller not yet confirmed: the token is confirmed first (one statement
// more for such a request), so an unauthenticated client cannot make the
// service wait for, or read, its body.
import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { findToken, tokenDigest } from '../db/tokens.js'
import type { Caller } from '../db/caller.js'
import { headerCount } from '../raw-headers.js'

export type { Caller }

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: (request: FastifyRequest) => Promise<void>
    /** Answers 401 or 403 read_only_token unless the request's token is known to be valid; nothing on a route without one. */
    confirmCaller: (request: FastifyRequest) => Promise<void>
  }
  interface FastifyRequest {
    /** The presented token, on the routes that authenticate (null elsewhere). */
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

// The digest of each request's token, taken once: the rate limits key on it as
// well as the operation's statement (a token's hash on every use, otherwise
// three or four times a request).
const digests = new WeakMap<FastifyRequest, Buffer | null>()

/** SHA-256 of the request's bearer token (db/tokens.ts), or null without one. */
export function presentedTokenDigest (request: FastifyRequest): Buffer | null {
  let digest = digests.get(request)
  if (digest === undefined) {
    const token = bearerToken(request.headers.authorization)
    digest = token === null ? null : tokenDigest(token)
    digests.set(request, digest)
  }
  return digest
}

const REJECTIONS = {
  revoked: 'token has been revoked',
  expired: 'token has expired',
  suspended: "token's owner is suspended"
} as const

/**
 * Whether the whole body is here, unread: the message is complete, or Node has
 * already parsed as many bytes as Content-Length announces (it marks the message
 * complete a turn later). Requests built in process (inject) have it all.
 */
function bodyArrived (request: FastifyRequest): boolean {
  const raw = request.raw
  if (raw.complete !== false) return true
  const length = Number(raw.headers['content-length'])
  return Number.isSafeInteger(length) && raw.readableLength >= length
}

/** Whether the request changes something: a read-only token may not make it. */
function isMutation (request: FastifyRequest): boolean {
  return request.method !== 'GET' && request.method !== 'HEAD'
}

export default fp(async (fastify) => {
  fastify.decorateRequest('caller', null as unknown as Caller)

  fastify.decorate('authenticate', async (request: FastifyRequest) => {
    // Two credentials are ambiguous: a proxy may judge one and this service the
    // other (RFC 6750 §3.1: invalid_request), whatever they are.
    if (headerCount(request.raw, 'authorization') > 1) {
      throw new ApiError(400, 'invalid_input', 'send one Authorization header', undefined, {
        'www-authenticate': `${REALM}, error="invalid_request"`
      })
    }
    const token = bearerToken(request.headers.authorization)
    if (token === null || token === '') {
      await fastify.authFailures.failed(request)
      throw unauthenticated(token === null ? 'missing bearer token in the Authorization header' : 'empty bearer token', false)
    }
    const refused = await fastify.authFailures.check(request)
    if (refused) throw refused
    request.caller = { digest: presentedTokenDigest(request)!, confirmed: false }
  })

  /** The 401 or 403 this token gets, or null when the request may go on. */
  async function refusal (request: FastifyRequest, caller: Caller): Promise<ApiError | null> {
    const owner = await findToken(fastify.db, caller.digest)
    if (!owner) return unauthenticated('invalid token', true)
    if (owner.rejection) return unauthenticated(REJECTIONS[owner.rejection], true)
    caller.confirmed = true
    if (isMutation(request) && owner.read_only) {
      return new ApiError(403, 'read_only_token', 'this token is read-only and cannot be used for mutations', undefined, {
        'www-authenticate': `${REALM}, error="insufficient_scope"`
      })
    }
    return null
  }

  // Once per request: the error handler asks again for a refusal made before the body.
  const confirmations = new WeakMap<FastifyRequest, Promise<void>>()
  async function confirm (request: FastifyRequest, caller: Caller) {
    const error = await refusal(request, caller)
    if (error === null) return
    if (error.statusCode === 401) await fastify.authFailures.failed(request)
    throw error
  }

  fastify.decorate('confirmCaller', async (request: FastifyRequest) => {
    const caller = request.caller
    if (caller === null || caller.confirmed) return
    let confirmation = confirmations.get(request)
    if (confirmation === undefined) {
      confirmation = confirm(request, caller)
      confirmations.set(request, confirmation)
    }
    await confirmation
  })

  // Before the body is read: when it is still on its way (a slow or stalled
  // client, or a large one), the token is confirmed first. A body that came with
  // the headers costs nothing more.
  fastify.addHook('preParsing', async (request) => {
    if (request.caller !== null && !bodyArrived(request)) await fastify.confirmCaller(request)
  })

  // A token found valid, by the operation's statement or by findToken, is one the
  // failed-authentication budget lets through from then on.
  fastify.addHook('onResponse', async (request) => {
    if (request.caller?.confirmed) fastify.authFailures.succeeded(request)
  })
}, { name: 'auth', dependencies: ['db', 'rate-limit', '@fastify/sensible'] })
