// One error handler and one not-found handler: every error leaves in the same
// envelope, 5xx never carries the cause, and unknown routes are told apart from
// known routes called with the wrong method (405 with Allow).
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { ApiError, unavailable } from '../errors.js'
import type { ErrorCode } from '../schemas/common.js'
import { redactTokens } from '../redact.js'
import { DatabaseUnavailableError } from '../db/dialect.js'
import { validationDetails } from '../schemas/validation.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

function fromValidation (errors: FastifySchemaValidationError[], context: string | undefined): ApiError {
  // A path names what the client sent, which may be a token sent as a field or a
  // query parameter: masked in the answer and so in the log.
  const details = validationDetails(errors).map((d) => ({ ...d, path: redactTokens(d.path) }))
  const where = context === 'querystring' ? 'query' : context ?? 'body'
  const message = details.map((d) => `${d.path ? d.path.slice(1).replaceAll('/', '.') : where} ${d.message}`).join('; ')
  return new ApiError(400, 'invalid_input', message, details)
}

// A connection that broke under a statement, as Node or pg reports it.
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
const CONNECTION_LOST = /timeout exceeded when trying to connect|Connection terminated|not queryable|Cannot use a pool after calling end/i

/**
 * SQLSTATEs of a statement that failed because the database cannot serve right
 * now, not because of the request or of this service: connection exceptions (08),
 * insufficient resources (53: too many connections, disk full, out of memory),
 * operator intervention (57: statement timeout, shutdown, recovery, database
 * dropped), system errors (58), PostgreSQL's internal errors (XX), a lock not
 * available (55P03), serialization failures and deadlocks (40001, 40P01), a
 * read-only database (25006: a standby after a failover, or
 * default_transaction_read_only) and privileges taken away (42501).
 */
const UNAVAILABLE_SQLSTATE = /^(08|53|57|58|XX)|^(55P03|40001|40P01|25006|42501)$/

/** The answer for a database error, or null when the error is not the database's. */
function fromDatabase (error: { code?: unknown, message?: unknown }): ApiError | null {
  const code = typeof error.code === 'string' ? error.code : ''
  const message = typeof error.message === 'string' ? error.message : ''
  // Failing to obtain a connection is always this, whatever the cause (db/dialect.ts).
  if (error instanceof DatabaseUnavailableError || CONNECTION_ERRORS.has(code) ||
    UNAVAILABLE_SQLSTATE.test(code) || CONNECTION_LOST.test(message)) {
    return unavailable('the database is unavailable; try again shortly')
  }
  // Class 22 (data exception) and check violations: a value Postgres cannot store.
  if (/^22/.test(code) || code === '23514') return new ApiError(400, 'invalid_input', 'a value cannot be stored')
  return null
}

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_input',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable'
}

function describeBytes (bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return `${bytes} bytes`
}

export function toApiError (error: FastifyError, bodyLimit = 1024 * 1024): ApiError {
  if (error instanceof ApiError) return error
  if (error.validation) return fromValidation(error.validation, error.validationContext)
  const database = fromDatabase(error)
  if (database) return database
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError(413, 'payload_too_large', `body is larger than ${describeBytes(bodyLimit)}`)
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'unsupported_media_type', 'body must be application/json')
    return new ApiError(status, BY_STATUS[status] ?? 'invalid_input', error.message)
  }
  return new ApiError(500, 'internal', 'internal error')
}

/**
 * The client closed its connection before its request arrived whole: the body
 * stream died of it. Nothing was done and nobody is left to answer; not a failure
 * of the service, whatever code the socket reported (ECONNRESET is also a
 * database connection's).
 */
function cutOffByClient (error: FastifyError, request: FastifyRequest): boolean {
  return !request.raw.complete && request.raw.errored === error
}

/** The methods the routes at a request target's path take (none for a path without routes). */
export function allowedMethods (fastify: FastifyInstance, target: string): string[] {
  const url = target.split('?', 1)[0] ?? '/'
  return METHODS.filter((method) => fastify.hasRoute({ method, url }))
}

export default fp(async (fastify) => {
  fastify.setErrorHandler(async (failure: FastifyError, request, reply) => {
    if (cutOffByClient(failure, request)) {
      request.log.info({ code: 'client_aborted' }, 'the connection closed before the request arrived whole; nothing was done')
      return reply.code(400).send(new ApiError(400, 'invalid_input', 'the request did not arrive whole').body())
    }
    const error = failure
    const apiError = toApiError(error, fastify.initialConfig.bodyLimit)
    // An outage is logged with its cause and SQLSTATE (err.code) at warn: it is
    // the database's state, not a bug here. A 503 thrown on purpose was logged by
    // whoever threw it.
    const outage = apiError.code === 'unavailable'
    if (outage && !(error instanceof ApiError)) request.log.warn({ err: error }, 'database unavailable')
    else if (apiError.statusCode >= 500 && !outage) request.log.error({ err: error }, 'request failed')
    else request.log.info({ code: apiError.code, statusCode: apiError.statusCode }, redactTokens(apiError.message))
    return reply.code(apiError.statusCode).headers(apiError.headers).send(apiError.body())
  })

  // Routing comes first: an unknown path or a wrong method is answered before the
  // body is read, so a bad or oversized body cannot turn a 404/405 into a 400/413.
  const routeNotFound = (request: FastifyRequest, reply: FastifyReply) => {
    const allow = allowedMethods(fastify, request.url)
    const error = allow.length > 0
      ? new ApiError(405, 'method_not_allowed', `${request.method} is not allowed here; use ${allow.join(' or ')}`, undefined, { allow: allow.join(', ') })
      : new ApiError(404, 'route_not_found', `no route ${request.method} ${redactTokens(request.url.split('?', 1)[0] ?? '/')}`)
    return reply.code(error.statusCode).headers(error.headers).send(error.body())
  }
  fastify.addHook('onRequest', async (request, reply) => {
    if (request.is404) return routeNotFound(request, reply)
  })
  fastify.setNotFoundHandler(routeNotFound)
}, { name: 'errors' })
