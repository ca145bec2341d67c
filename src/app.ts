// The application: a Fastify plugin that never listens. The server and the tests
// build it with the same options, so tests run what production runs.
//
// A request meets, in order (SPEC part 2's order of checks): Node's parser and
// the router (http/transport.ts), its request id, security headers, transport
// rules, routing (404/405, http/errors.ts), the rate limit (http/rate-limit.ts),
// then on the API's routes the token (auth/authenticate.ts: 401, 403 read-only),
// the body (http/json-body.ts: 415, 413, 400), the route's schema (400), and the
// operation's own steps (<resource>/operations/<name>.ts). Every error leaves
// through http/errors.ts's handler in the one envelope. POST /mcp (mcp/) runs
// the same operations as MCP tools.
import fp from 'fastify-plugin'
import sensible from '@fastify/sensible'
import type { Server } from 'node:http'
import type { FastifyHttpOptions } from 'fastify'
import type { DestinationStream } from 'pino'
import type { Config } from './config.js'
import type { Db } from './db/index.js'
import compress from '@fastify/compress'
import { COMPONENTS } from './components.js'
import { buildSerializer } from './schemas/serializer.js'
import { logDestination, loggerOptions } from './logger.js'
import dbPlugin from './db/plugin.js'
import requestIds, { requestId } from './http/request-id.js'
import security from './http/security.js'
import transport, { transportOptions } from './http/transport.js'
import openapi from './http/openapi.js'
import docs from './http/docs.js'
import jsonBody from './http/json-body.js'
import errors from './http/errors.js'
import rateLimit from './http/rate-limit.js'
import cursors from './http/cursors.js'
import answerCache from './http/answer-cache.js'
import auth from './auth/authenticate.js'
import health from './health/index.js'
import projects from './projects/index.js'
import people from './people/get-me.js'
import companies from './companies/get.js'
import notifications from './notifications/index.js'
import webhooks from './webhooks/index.js'
import mcp from './mcp/index.js'
import metrics from './metrics/http.js'
import { PAGE_COMPRESSION } from './schemas/common.js'

export function appOptions (config: Config, options: { logStream?: DestinationStream } = {}): FastifyHttpOptions<Server> {
  return {
    logger: { ...loggerOptions(config), stream: logDestination(config, options) },
    bodyLimit: config.BODY_LIMIT_BYTES,
    ...transportOptions(config),
    genReqId: requestId,
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY,
    // Fastify's own closing 503 is not in the error envelope; requests that reach
    // a closing server are served instead (see http/transport.ts).
    return503OnClosing: false,
    // Answers are written from the response schemas, nullable fields without validation (schemas/serializer.ts).
    schemaController: { compilersFactory: { buildSerializer } },
    ajv: {
      // The contract forbids silently rewriting input: no stripping, no coercion.
      customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false }
    }
  }
}

export interface AppOptions {
  db: Db
  config: Config
}

export default fp<AppOptions>(async (fastify, { db, config }) => {
  for (const schema of Object.values(COMPONENTS)) fastify.addSchema(schema)
  await fastify.register(sensible)
  // Only the routes that ask for it (the pages) are compressed, for a client that accepts gzip.
  await fastify.register(compress, { global: false, ...PAGE_COMPRESSION })
  await fastify.register(dbPlugin, { db })
  if (config.METRICS_PORT !== 0) await fastify.register(metrics, { db })
  await fastify.register(requestIds)
  await fastify.register(security)
  await fastify.register(transport)
  await fastify.register(openapi)
  await fastify.register(docs)
  await fastify.register(jsonBody)
  await fastify.register(errors)
  await fastify.register(rateLimit, {
    max: config.RATE_LIMIT_MAX,
    windowMs: config.RATE_LIMIT_WINDOW_MS,
    authFailureMax: config.AUTH_FAILURE_LIMIT_MAX,
    authFailureWindowMs: config.AUTH_FAILURE_LIMIT_WINDOW_MS,
    redisUrl: config.REDIS_URL
  })
  await fastify.register(answerCache, { budgetBytes: config.ANSWER_CACHE_MB * 1024 * 1024 })
  await fastify.register(auth)
  await fastify.register(health, { prefix: '/health' })
  await fastify.register(cursors)
  // Before the resources: each MCP tool is made from the route it runs.
  await fastify.register(mcp)
  await fastify.register(projects, { prefix: '/api/external/v1/projects' })
  await fastify.register(people, { prefix: '/api/external/v1/people' })
  await fastify.register(companies, { prefix: '/api/external/v1/companies' })
  await fastify.register(notifications, { prefix: '/api/external/v1/notifications' })
  await fastify.register(webhooks, { prefix: '/api/external/v1/webhooks', allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS })
}, { name: 'app' })
