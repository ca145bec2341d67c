// The application: a Fastify plugin that never listens. The server and the tests
// build it with the same options, so tests run what production runs.
//
// What a request meets, in order (SPEC part 2's order of checks, and what surrounds
// it). Hooks of one kind run in the order their plugins are registered below; the
// first answer ends the request, and every error leaves through plugins/errors.ts's
// handler in the one envelope.
//
//  Before routing (appOptions: transportOptions, genReqId)
//   1. Node.js's parser and clock       plugins/transport.ts  400 malformed HTTP, 431 headers too large,
//                                                              408 headers or body too slow,
//                                                              405 CONNECT (Node.js never hands it to the router)
//   2. the router                       plugins/transport.ts  400 malformed percent escape in the path
//   3. the request's id                 plugins/request-id.ts the caller's X-Request-Id if sane, else a UUID
//  onRequest, every route
//   4. security headers                 plugins/security.ts   helmet's headers on whatever answer follows
//   5. transport rules                  plugins/transport.ts  417 Expect other than 100-continue,
//                                                              400 no Host or two
//   6. routing                          plugins/errors.ts     404 route_not_found, 405 method_not_allowed
//                                                              (with Allow), whatever the token
//   7. rate limit                       plugins/rate-limit.ts 429 over the token's (or address's) budget;
//                                                              not on /health
//  onRequest, the API's routes (routes/<resource>/index.ts add fastify.authenticate)
//   8. authentication                   plugins/auth.ts       400 two Authorization headers, 401 no or
//                                                              empty token, then 429 when the address has
//                                                              spent its failed-authentication budget
//                                                              (plugins/rate-limit.ts); the token itself is
//                                                              checked by the operation's statement (14)
//   9. the token, on any other answer   plugins/errors.ts,    before steps 10-15 answer anything but the
//                                       plugins/auth.ts       statement's success, and before a body still
//                                                              on its way is read, the token is looked up
//                                                              on its own: 401 unknown, revoked, expired
//                                                              or suspended owner, then 403
//                                                              read_only_token on a mutation
//  preParsing and parsing, a body only
//  10. the body's form                  plugins/json-body.ts  415 a Content-Encoding, two Content-Types,
//                                                              a charset other than UTF-8
//  11. the body                         Fastify, json-body.ts 415 not application/json, 413 over
//                                                              BODY_LIMIT_BYTES, 400 not UTF-8 or not
//                                                              JSON or a key repeated
//  validation
//  12. the route's schema               schemas/<resource>.ts 400 invalid_input with details
//  handler
//  13. input rules                      routes/<resource>/    400 blank id, name and description rules,
//                                                              filters, page size, cursor, an If-Match or
//                                                              If-None-Match that is no list of tags
//  14. the one statement                db/<name>.ts,         the token's check (none found: step 9),
//                                       db/caller.ts          404 not_found (absent, undecodable, archived
//                                                              on a mutation, invisible), 403 forbidden;
//                                                              503 when the database cannot serve
//  15. the condition                    db/project-           412 precondition_failed (If-Match, judged in
//                                       precondition.ts,      the mutation's statement on the locked row),
//                                       routes/projects/      304 (If-None-Match, on the tag get read)
//                                       conditional.ts
//  onSend, every answer
//  16. headers of the answer            request-id.ts (X-Request-Id), security.ts (Cache-Control: no-store
//                                       unless the route set one), transport.ts (Connection: close while
//                                       shutting down), docs.ts (/docs's own policy)
import fp from 'fastify-plugin'
import sensible from '@fastify/sensible'
import type { Server } from 'node:http'
import type { FastifyHttpOptions } from 'fastify'
import type { DestinationStream } from 'pino'
import type { Config } from './config.js'
import type { Db } from './db/index.js'
import { COMPONENTS } from './schemas/components.js'
import { buildSerializer } from './schemas/serializer.js'
import { loggerOptions } from './logger.js'
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
import notifications from './routes/notifications/index.js'
import webhooks from './routes/webhooks/index.js'
import cursors from './plugins/cursors.js'
import answers from './plugins/answers.js'

export function appOptions (config: Config, options: { logStream?: DestinationStream } = {}): FastifyHttpOptions<Server> {
  return {
    logger: {
      ...loggerOptions(config, options),
      ...(options.logStream ? { stream: options.logStream } : {})
    },
    bodyLimit: config.BODY_LIMIT_BYTES,
    ...transportOptions(config),
    genReqId: requestId,
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY,
    // Fastify's own closing 503 is not in the error envelope; requests that reach
    // a closing server are served instead (see plugins/transport.ts).
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
  await fastify.register(answers, { maxBytes: config.ANSWER_CACHE_MB * 1024 * 1024 })
  await fastify.register(projects, { prefix: '/api/external/v1/projects' })
  await fastify.register(people, { prefix: '/api/external/v1/people' })
  await fastify.register(companies, { prefix: '/api/external/v1/companies' })
  await fastify.register(notifications, { prefix: '/api/external/v1/notifications' })
  await fastify.register(webhooks, { prefix: '/api/external/v1/webhooks', allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS })
}, { name: 'app' })
