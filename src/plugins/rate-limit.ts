// Requests per token per window (@fastify/rate-limit). The budget lives in this
// process by default; with REDIS_URL every instance draws on one shared budget.
// Over budget is a 429 in the error envelope with Retry-After and RateLimit-*.
import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { Redis } from 'ioredis'
import type { FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { bearerToken } from './auth.js'

export interface RateLimitOptions {
  /** Requests per key and window; 0 turns limiting off. */
  max: number
  windowMs: number
  redisUrl?: string | undefined
}

/**
 * The key is the token presented (hashed, so the store never holds a usable token),
 * or the client address when there is none: one client flooding does not spend
 * another's budget.
 */
function keyOf (request: FastifyRequest): string {
  const token = bearerToken(request.headers.authorization)
  if (token === null) return `ip:${request.ip}`
  return `token:${createHash('sha256').update(token).digest('base64url').slice(0, 32)}`
}

export default fp<RateLimitOptions>(async (fastify, options) => {
  if (options.max === 0) return
  let redis: Redis | undefined
  if (options.redisUrl) {
    // Loaded only when asked for: a process without Redis does not carry the client.
    const { Redis } = await import('ioredis')
    redis = new Redis(options.redisUrl, {
      connectTimeout: 1000,
      maxRetriesPerRequest: 1,
      // Fail fast while Redis is away; skipOnError below lets requests through.
      enableOfflineQueue: false,
      lazyConnect: true
    })
    redis.on('error', (error) => { fastify.log.warn({ err: error }, 'rate-limit store unavailable') })
    await redis.connect().catch((error: unknown) => {
      fastify.log.warn({ err: error }, 'rate-limit store unavailable at start; limits apply once it is back')
    })
    fastify.addHook('onClose', async () => { redis?.disconnect() })
  }
  await fastify.register(rateLimit, {
    global: false,
    max: options.max,
    timeWindow: options.windowMs,
    keyGenerator: keyOf,
    nameSpace: 'projects-api:rl:',
    ...(redis ? { redis, skipOnError: true } : {}),
    enableDraftSpec: true, // RateLimit-Limit / -Remaining / -Reset, as the IETF draft names them
    errorResponseBuilder: (_request, context) => new ApiError(
      429, 'rate_limited', `too many requests; retry in ${Math.ceil(context.ttl / 1000)} s`
    )
  })
  // One hook for the whole app, ahead of authentication: a flood of bad tokens is
  // refused before it costs a database lookup. Routes opt out with rateLimit: false.
  const limit = fastify.rateLimit()
  fastify.addHook('onRequest', async function (request, reply) {
    if (request.routeOptions.config.rateLimit === false) return
    await limit.call(this, request, reply)
  })
}, { name: 'rate-limit', dependencies: ['errors'] })
