// Every status an operation may answer besides 200, each with the error envelope,
// and what each means on this API: the route schemas list the statuses, and the
// OpenAPI document (http/openapi.ts) describes each with the text, headers and
// examples below. A query (GET) has no body (no 408, 413 or 415) and is open to
// read-only tokens (no 403 read_only_token). What a 400 or a 404 is about depends
// on the operation: each gives its own example (invalidExample, notFoundExample).
import { envelope, invalidInput } from '../errors.js'
import { ErrorRef, ErrorSchema, schemaId, Shared, type ErrorBody } from '../schemas/common.js'

export const queryErrors = { 400: ErrorRef, 401: ErrorRef, 404: ErrorRef, 429: ErrorRef, 500: ErrorRef, 503: ErrorRef }

/** A mutation's If-Match that names no current version of the project (projects/conditional.ts). */
export const preconditionErrors = { 412: ErrorRef }

export const mutationErrors = {
  400: ErrorRef, 401: ErrorRef, 403: ErrorRef, 404: ErrorRef, 408: ErrorRef, 413: ErrorRef, 415: ErrorRef, 429: ErrorRef, 500: ErrorRef, 503: ErrorRef
}

/** The envelope with this operation's typical 400 as the document's example. */
export function invalidExample (path: string, message: string) {
  return Shared(ErrorSchema, { examples: [invalidInput(path, message).body()] })
}

/** The envelope with this operation's 404: its message, and what is not found and when. */
export function notFoundExample (message: string, description: string) {
  return Shared(ErrorSchema, { description, examples: [envelope(404, 'not_found', message)] })
}

/** The 404 of an operation that names nothing to find: it is listed, as for every operation, and never answered. */
export const nothingToFind = (why: string) => notFoundExample('not found', `Not answered by this operation: ${why}`)

interface ErrorResponse {
  description: string
  examples: ErrorBody[]
  headers?: Record<string, { type: string, description: string }>
}

const RETRY_AFTER = { type: 'integer', description: 'Seconds to wait before trying again' }
const WWW_AUTHENTICATE = { type: 'string', description: 'The Bearer challenge' }

// What each status means on this API; a route may give its own description and
// examples on the reference (Shared(ErrorSchema, { description, examples })).
const ERROR_RESPONSES: Record<string, ErrorResponse> = {
  400: {
    description: 'Invalid input: a missing, null, wrongly typed or unknown field, a value outside its rules, a malformed JSON body or a key repeated within one of its objects, or two Authorization headers (then with `WWW-Authenticate: Bearer realm="api", error="invalid_request"`). `details` points at each offending field.',
    examples: [envelope(400, 'invalid_input', 'body is not valid JSON')],
    headers: { 'WWW-Authenticate': { ...WWW_AUTHENTICATE, description: 'Bearer realm="api", error="invalid_request" when the request carried two Authorization headers' } }
  },
  401: {
    description: 'No valid token: none, another scheme, an empty, unknown, revoked or expired token, or a suspended owner.',
    examples: [envelope(401, 'unauthenticated', 'missing bearer token in the Authorization header')],
    headers: { 'WWW-Authenticate': { ...WWW_AUTHENTICATE, description: 'Bearer realm="api", plus error="invalid_token" when a token was presented' } }
  },
  403: {
    description: 'A read-only token on a mutation (`read_only_token`), or a person who may view the project but not edit it (`forbidden`).',
    examples: [
      envelope(403, 'forbidden', 'you may view this project but not edit it'),
      envelope(403, 'read_only_token', 'this token is read-only and cannot be used for mutations')
    ],
    headers: { 'WWW-Authenticate': { ...WWW_AUTHENTICATE, description: 'Bearer realm="api", error="insufficient_scope" for a read-only token' } }
  },
  404: {
    description: 'What the request names is unknown, its id cannot be decoded, or it is not the person\'s to see: one body for all, so existence never leaks.',
    examples: [envelope(404, 'not_found', 'not found')]
  },
  408: {
    description: 'The request did not arrive whole in time: its headers within 10 s or all of it, body included, within 30 s (the defaults). The connection is closed; nothing was done.',
    examples: [envelope(408, 'request_timeout', 'the request did not arrive whole within 30 s')]
  },
  412: {
    description: 'If-Match names no version the project is in now, as the person would read it right before the change: ' +
      'someone (or something: another edit, a notification, a subscription) changed it since it was read. Nothing was ' +
      'written. The ETag header is the current tag: read the project again, then decide.',
    examples: [envelope(412, 'precondition_failed', 'the project has changed since the version If-Match names: read it again (its current tag is in this answer\'s ETag)')],
    headers: { ETag: { type: 'string', description: 'The current tag of the project, as the person reads it' } }
  },
  413: {
    description: 'The body is larger than the limit (1 MiB by default).',
    examples: [envelope(413, 'payload_too_large', 'body is larger than 1 MiB')]
  },
  415: {
    description: 'The body is not UTF-8 `application/json`, is sent with a `Content-Encoding` other than `identity` (nothing is decoded), or with two `Content-Type` headers.',
    examples: [envelope(415, 'unsupported_media_type', 'body must be application/json')]
  },
  429: {
    description: "Over the token's request budget for the current window, or over the address's budget of failed authentications (then only `Retry-After`).",
    examples: [envelope(429, 'rate_limited', 'too many requests; retry in 42 s')],
    headers: {
      'Retry-After': RETRY_AFTER,
      'RateLimit-Limit': { type: 'integer', description: 'Requests allowed in a window' },
      'RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current window' },
      'RateLimit-Reset': { type: 'integer', description: 'Seconds until the window resets' }
    }
  },
  500: {
    description: 'A bug on our side. The message is generic; the request id (X-Request-Id) finds it in the logs.',
    examples: [envelope(500, 'internal', 'internal error')]
  },
  503: {
    description: 'The database cannot serve this request now: unreachable, refusing connections, saturated, too ' +
      'slow, or read-only (a standby after a failover: reads still answer, mutations are refused and nothing is ' +
      'written). Try again after Retry-After.',
    examples: [envelope(503, 'unavailable', 'the database is unavailable; try again shortly')],
    headers: { 'Retry-After': RETRY_AFTER }
  }
}

/** A response that is the shared error envelope, with its description, headers and examples. */
export function errorResponse (status: string, given: Record<string, unknown>): Record<string, unknown> {
  const standard = ERROR_RESPONSES[status]
  if (standard === undefined) throw new Error(`no description of error status ${status}`)
  const examples = (Array.isArray(given.examples) ? given.examples : standard.examples) as ErrorBody[]
  return {
    description: typeof given.description === 'string' ? given.description : standard.description,
    ...(standard.headers ? { headers: standard.headers } : {}),
    content: {
      'application/json': {
        schema: { $ref: schemaId(ErrorSchema) },
        examples: Object.fromEntries(examples.map((example) => [example.code, { summary: example.message, value: example }]))
      }
    }
  }
}
