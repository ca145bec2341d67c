// The application: a Fastify plugin that never listens. The server and the tests
// build it with the same options, so tests run what production runs.
import fp from 'fastify-plugin'
import sensible from '@fastify/sensible'
import type { FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'
import type { Db } from './db/index.js'
import { ErrorSchema } from './schemas/common.js'
import dbPlugin from './plugins/db.js'
import jsonBody from './plugins/json-body.js'
import errors from './plugins/errors.js'
import auth from './plugins/auth.js'
import projects from './routes/projects/index.js'

export const BODY_LIMIT = 1024 * 1024

export function appOptions (config: Pick<Config, 'LOG_LEVEL'>): FastifyServerOptions {
  return {
    logger: {
      level: config.LOG_LEVEL,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' }
    },
    bodyLimit: BODY_LIMIT,
    requestIdHeader: 'x-request-id',
    return503OnClosing: true,
    ajv: {
      // The contract forbids silently rewriting input: no stripping, no coercion.
      customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false }
    }
  }
}

export interface AppOptions {
  db: Db
}

export default fp<AppOptions>(async (fastify, { db }) => {
  fastify.addSchema(ErrorSchema)
  await fastify.register(sensible)
  await fastify.register(dbPlugin, { db })
  await fastify.register(jsonBody)
  await fastify.register(errors)
  await fastify.register(auth)
  await fastify.register(projects, { prefix: '/api/external/v1/projects' })
}, { name: 'app' })
