// The application: a Fastify plugin that never listens. The server and the tests
// build it with the same options, so tests run what production runs.
import fp from 'fastify-plugin'
import sensible from '@fastify/sensible'
import type { Server } from 'node:http'
import type { FastifyHttpOptions, FastifyServerOptions } from 'fastify'
import type { DestinationStream } from 'pino'
import type { Config } from './config.js'
import type { Db } from './db/index.js'
import { COMPONENTS } from './schemas/components.js'
import { redactTokens } from './redact.js'
import dbPlugin from './plugins/db.js'
import requestIds, { requestId } from './plugins/request-id.js'
import security from './plugins/security.js'
import transport, { transportOptions } from './plugins/transport.js'
import openapi from './plugins/openapi.js'
import docs from './plugins/docs.js'
import jsonBody from './plugins/json-body.js'
import errors from './plugins/errors.js'
import rateLimit from './plugins/rate-limit.js'
import auth from './plugins/auth.js'
import health from './routes/health/index.js'
import projects from './routes/projects/index.js'
import people from './routes/people/index.js'
import companies from './routes/companies/index.js'
import cursors from './plugins/cursors.js'

function prettyLogs (config: Config): boolean {
  const wanted = config.LOG_PRETTY ?? (process.stdout.isTTY === true && config.NODE_ENV !== 'production')
  if (!wanted) return false
  try {
    import.meta.resolve('pino-pretty') // a development dependency: absent from production images
    return true
  } catch {
    return false
  }
}

export function appOptions (config: Config, options: { logStream?: DestinationStream } = {}): FastifyHttpOptions<Server> {
  const pretty = options.logStream === undefined && prettyLogs(config)
  return {
    logger: {
      level: config.LOG_LEVEL,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
      serializers: {
        req: (req) => ({
          method: req.method,
          // A token belongs in the Authorization header, but a client may put one
          // anywhere else: in the URL (percent-encoded or not) or in a header.
          url: redactTokens(req.url),
          remoteAddress: req.ip,
          userAgent: req.headers?.['user-agent'] === undefined ? undefined : redactTokens(req.headers['user-agent'])
        })
      },
      ...(options.logStream ? { stream: options.logStream } : {}),
      ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {})
    },
    bodyLimit: config.BODY_LIMIT_BYTES,
    ...transportOptions(config),
    genReqId: requestId,
    requestIdHeader: false,
    // Fastify takes a hop count too, though its type does not say so.
    trustProxy: config.TRUST_PROXY as FastifyServerOptions['trustProxy'],
    // Fastify's own closing 503 is not in the error envelope; requests that reach
    // a closing server are served instead (see plugins/transport.ts).
    return503OnClosing: false,
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
  await fastify.register(dbPlugin, { db })
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
  await fastify.register(auth)
  await fastify.register(health, { prefix: '/health' })
  await fastify.register(cursors)
  await fastify.register(projects, { prefix: '/api/external/v1/projects' })
  await fastify.register(people, { prefix: '/api/external/v1/people' })
  await fastify.register(companies, { prefix: '/api/external/v1/companies' })
}, { name: 'app' })
