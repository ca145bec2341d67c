// Two budgets (@fastify/rate-limit), both in this process by default and shared by
// every instance through Redis with REDIS_URL:
// - requests per token per window (per client address for requests without one);
// - failed authentications per client address per window. Once an address has
//   spent it, its requests are refused before their token is looked up, so a flood
//   of made-up tokens (each with a fresh per-token budget) stops costing database
//   lookups; tokens that authenticated before in this process are still served,
//   under their own budget.
// Over either: 429 in the error envelope with Retry-After.
// While Redis is unreachable both fail open: requests are let through unlimited
// (the limits protect capacity, they authorize nothing, and an outage of the
// shared budget must not become one of the API). That is said once per outage in
// the log (a warning when Redis goes, a line when it is back) and, for as long as
// it lasts, in the readiness probe's body (rateLimitState).
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { presentedTokenDigest } from '../auth/authenticate.js'
import { isDispatched } from './dispatch.js'
import { countRateLimited } from '../metrics/registry.js'

export interface RateLimitOptions {
  /** Requests per key and window; 0 turns limiting off. */
  max: number
  windowMs: number
  /** Failed authentications per client address and window; 0 turns this limit off. */
  authFailureMax: number
  authFailureWindowMs: number
  redisUrl?: string | undefined
}

/** The per-address budget of failed authentications, used by the auth hook. */
export interface AuthFailureLimit {
  /** The 429 to answer when the caller's address has spent its budget and its token is not known here; else null. */
  check: (request: FastifyRequest) => Promise<ApiError | null>
  /** Spends one failure of the caller's address, and forgets its token. */
  failed: (request: FastifyRequest) => Promise<void>
  /** Remembers the caller's token as one that authenticated. */
  succeeded: (request: FastifyRequest) => void
}

/**
 * Where the budgets are kept, as readiness reports it: `off` (no limit set),
 * `local` (this process's memory), `shared` (Redis), or `degraded` (Redis is
 * unreachable: requests are let through unlimited until it is back).
 */
export type RateLimitState = 'off' | 'local' | 'shared' | 'degraded'

declare module 'fastify' {
  interface FastifyInstance {
    authFailures: AuthFailureLimit
    rateLimitState: () => RateLimitState
  }
}

/** The presented token, hashed, so that no store or memory here holds a usable token. */
function tokenKey (request: FastifyRequest): string | null {
  const digest = presentedTokenDigest(request)
  if (digest === null) return null
  return `token:${digest.toString('base64url').slice(0, 32)}`
}

/** The per-request key: the token presented, or the client address when there is none. */
function keyOf (request: FastifyRequest): string {
  return tokenKey(request) ?? `ip:${request.ip}`
}

/** How many tokens that authenticated are remembered (least recently seen forgotten first). */
const KNOWN_TOKENS = 10_000

function tooMany (ttlMs: number, what: string): ApiError {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000))
  return new ApiError(429, 'rate_limited', `${what}; retry in ${seconds} s`, undefined, { 'retry-after': String(seconds) })
}

const noFailureLimit: AuthFailureLimit = { check: async () => null, failed: async () => {}, succeeded: () => {} }

/**
 * The Redis client the instances share their counts through, and whether it is
 * reachable now. The client says so on every failed reconnection (up to one every
 * 2 s) and each request's command fails on its own: only a change of state is
 * logged, once per outage.
 */
async function sharedStore (fastify: FastifyInstance, url: string): Promise<{ redis: Redis, reachable: () => boolean }> {
  // Loaded only when asked for: a process without Redis does not carry the client.
  const { Redis } = await import('ioredis')
  const redis = new Redis(url, {
    connectTimeout: 1000,
    maxRetriesPerRequest: 1,
    // Fail fast while Redis is away; skipOnError lets requests through.
    enableOfflineQueue: false,
    lazyConnect: true
  })
  // Whether Redis was reachable at the last word from its client; null before the first.
  let reachable: boolean | null = null
  let closing = false
  const lost = (error?: unknown) => {
    if (closing || reachable === false) return
    reachable = false
    fastify.log.warn(error === undefined ? {} : { err: error },
      'rate-limit store (Redis) unreachable: requests are let through without a limit until it is back')
  }
  redis.on('error', lost)
  redis.on('close', () => lost())
  redis.on('ready', () => {
    if (reachable === false) fastify.log.info('rate-limit store (Redis) reachable again: the limits apply again')
    reachable = true
  })
  await redis.connect().catch(lost)
  fastify.addHook('onClose', async () => {
    closing = true
    redis.disconnect()
  })
  return { redis, reachable: () => reachable === true }
}

export default fp<RateLimitOptions>(async (fastify, options) => {
  if (options.max === 0 && options.authFailureMax === 0) {
    fastify.decorate('authFailures', noFailureLimit)
    fastify.decorate('rateLimitState', () => 'off' as const)
    return
  }
  const store = options.redisUrl ? await sharedStore(fastify, options.redisUrl) : undefined
  const redis = store?.redis
  fastify.decorate('rateLimitState', (): RateLimitState => store === undefined ? 'local' : store.reachable() ? 'shared' : 'degraded')
  await fastify.register(rateLimit, {
    global: false,
    max: options.max,
    timeWindow: options.windowMs,
    keyGenerator: keyOf,
    nameSpace: 'projects-api:rl:',
    ...(redis ? { redis, skipOnError: true } : {}),
    enableDraftSpec: true, // RateLimit-Limit / -Remaining / -Reset, as the IETF draft names them
    errorResponseBuilder: (_request, context) => {
      countRateLimited('requests')
      return new ApiError(429, 'rate_limited', `too many requests; retry in ${Math.ceil(context.ttl / 1000)} s`)
    }
  })

  if (options.max > 0) {
    // One hook for the whole app, ahead of authentication: a flood of bad tokens is
    // refused before it costs a database lookup. Routes opt out with rateLimit: false.
    const limit = fastify.rateLimit()
    fastify.addHook('onRequest', async function (request, reply) {
      if (request.routeOptions.config.rateLimit === false) return
      // An MCP tool's operation: the request that carried the call was counted (http/dispatch.ts).
      if (isDispatched(request)) return
      await limit.call(this, request, reply)
    })
  }

  if (options.authFailureMax === 0) {
    fastify.decorate('authFailures', noFailureLimit)
    return
  }
  const failures = fastify.createRateLimit({
    max: options.authFailureMax,
    timeWindow: options.authFailureWindowMs,
    keyGenerator: (request) => `auth-failures:${request.ip}`
  })
  // Hashed keys of tokens that authenticated, in the order they were last seen.
  const known = new Map<string, true>()
  fastify.decorate('authFailures', {
    async check (request) {
      const key = tokenKey(request)
      if (key !== null && known.has(key)) return null
      const status = await failures(request, { increment: false })
      // A peek: nothing left means the address has spent its budget.
      if (status.isAllowed || status.remaining > 0) return null
      countRateLimited('auth_failures')
      return tooMany(status.ttl, 'too many failed authentications from this address')
    },
    async failed (request) {
      const key = tokenKey(request)
      if (key !== null) known.delete(key)
      await failures(request)
    },
    succeeded (request) {
      const key = tokenKey(request)
      if (key === null) return
      known.delete(key)
      known.set(key, true)
      if (known.size > KNOWN_TOKENS) known.delete(known.keys().next().value!)
    }
  } satisfies AuthFailureLimit)
}, { name: 'rate-limit', dependencies: ['errors'] })
