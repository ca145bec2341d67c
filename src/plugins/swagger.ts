// The OpenAPI 3.1 document, generated from the route schemas, and the reference at /docs.
//
// The document is served at /api/external/v1/openapi.json and written to openapi.json
// by `npm run openapi`. The reference is Scalar's, served from this process (its
// bundled script, no CDN), under a Content-Security-Policy of its own: the API keeps
// helmet's strict default.
import { CompanySchema } from '../schemas/companies.js'
import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifySchema } from 'fastify'
import type { TSchema } from 'typebox'
import pkg from '../../package.json' with { type: 'json' }
import type { ErrorBody } from '../schemas/common.js'
import {
  AccessLevelsSchema, CheckInSchema, ContributorSchema, GoalSchema, KeyResourceSchema, MilestoneSchema,
  NotificationSchema, PermissionsSchema, PersonSchema, ProjectSchema, RetrospectiveSchema, SpaceSchema,
  SubscriberSchema, SubscriptionListSchema, TaskStatusSchema, TimeframeSchema
} from '../schemas/projects.js'
import { ApiError, envelope } from '../errors.js'

export const DOCUMENT_URL = '/api/external/v1/openapi.json'
export const DOCS_PREFIX = '/docs'

const DESCRIPTION = `The external JSON API of a project-management service, wire-compatible with
Operately's external API for the operations below.

**Authentication.** Every \`/api/external/v1/projects/*\` call carries an API token in
\`Authorization: Bearer <token>\`. A read-only token may call queries (\`GET\`) and no
mutation (\`POST\`). Without a valid token the answer is 401 with
\`WWW-Authenticate: Bearer realm="api"\`.

**Errors.** Every error, whatever its status, has one JSON body, the \`Error\` envelope:
\`{ "statusCode", "error", "code", "message", "details"? }\`. \`code\` is stable and
machine-readable (\`invalid_input\`, \`unauthenticated\`, \`read_only_token\`, \`forbidden\`,
\`not_found\`, \`request_timeout\`, \`payload_too_large\`, \`unsupported_media_type\`,
\`expectation_failed\`, \`headers_too_large\`, \`rate_limited\`, \`internal\`, \`unavailable\`, and
\`route_not_found\` / \`method_not_allowed\` for unknown paths and methods);
\`details\` lists the offending fields of a 400 as JSON Pointers. Checks run in this order:
routing, the rate limit, authentication, read-only, the body (415, 413, malformed JSON), input validation,
then the project lookup and permission, so an unauthenticated caller learns nothing about
validation or about which projects exist.

**Before routing.** Whatever the path, a request HTTP/1.1 cannot carry is answered in the same
envelope, with \`Connection: close\`: malformed HTTP (bytes not allowed in a header, a
\`Content-Length\` that is not one number or comes twice or with \`Transfer-Encoding\`, a
\`Transfer-Encoding\` other than chunked), a path with a malformed percent escape, or no \`Host\`
or more than one is 400 \`invalid_input\`; a request line and headers over 16 KiB are 431 \`headers_too_large\`; an
\`Expect\` other than \`100-continue\` is 417 \`expectation_failed\`.

**Ambiguous requests are refused, not guessed.** Two \`Authorization\` headers are 400
\`invalid_input\` with \`WWW-Authenticate: Bearer realm="api", error="invalid_request"\`; a key
repeated within a JSON object is 400 \`invalid_input\` pointing at it; a body with a
\`Content-Encoding\` other than \`identity\`, or two \`Content-Type\` headers, is 415
\`unsupported_media_type\`. Nothing is written.

**Limits.** Request bodies up to 1 MiB by default. A request must arrive whole within 30 s, its
headers within 10 s (the defaults), else the answer is 408 \`request_timeout\` and the connection
is closed. Requests are rate-limited per token (or per address without one): over the budget the
answer is 429 with \`Retry-After\` and \`RateLimit-*\` headers. An address that has failed to
authenticate 20 times in a minute (the default) gets 429 with \`Retry-After\` before its token is
looked up, for the rest of that minute, unless its token authenticated before.`

const BEARER_DESCRIPTION = `An API token: \`pat_\` followed by 43 characters. A token belongs to
one person and acts with that person's access; it may be read-only and may expire. It is
shown once, when it is issued: an operator issues one with
\`npm run cli -- tokens create --email <email> [--read-only] [--expires-in <days>]\`
(\`npm start\` on an empty embedded database prints a demo token).`

// Named in the document and in generated clients; found in the route schemas by identity.
const COMPONENTS = new Map<TSchema, string>([
  [ProjectSchema, 'Project'], [PersonSchema, 'Person'], [ContributorSchema, 'Contributor'],
  [GoalSchema, 'Goal'], [SpaceSchema, 'Space'], [KeyResourceSchema, 'KeyResource'],
  [CheckInSchema, 'CheckIn'], [MilestoneSchema, 'Milestone'], [NotificationSchema, 'Notification'],
  [SubscriberSchema, 'Subscriber'], [SubscriptionListSchema, 'SubscriptionList'],
  [RetrospectiveSchema, 'Retrospective'], [TaskStatusSchema, 'TaskStatus'], [TimeframeSchema, 'Timeframe'],
  [AccessLevelsSchema, 'AccessLevels'], [PermissionsSchema, 'Permissions'], [CompanySchema, 'Company']
])
const COMPONENT_KEY = 'x-component'

interface ErrorResponse {
  description: string
  examples: ErrorBody[]
  headers?: Record<string, { type: string, description: string }>
}

const RETRY_AFTER = { type: 'integer', description: 'Seconds to wait before trying again' }
const WWW_AUTHENTICATE = { type: 'string', description: 'The Bearer challenge' }

// What each status means on this API; a route may give its own description and
// examples on the reference (Type.Ref('Error', { description, examples })).
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
    description: 'The project is unknown, its id cannot be decoded, it is archived (mutations) or the person cannot see it: one body for all, so existence never leaks.',
    examples: [envelope(404, 'not_found', 'project not found')]
  },
  408: {
    description: 'The request did not arrive whole in time: its headers within 10 s or all of it, body included, within 30 s (the defaults). The connection is closed; nothing was done.',
    examples: [envelope(408, 'request_timeout', 'the request did not arrive whole within 30 s')]
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

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A copy of a route schema in which the named schemas carry their name, so that
 * transformObject can move them to components.schemas. The route's own schema,
 * which Fastify validates and serializes with, is left alone.
 */
function markComponents (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(markComponents)
  if (!isObject(schema)) return schema
  const copy: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    copy[key] = key === 'examples' || key === 'default' ? value : markComponents(value)
  }
  const name = COMPONENTS.get(schema as TSchema)
  if (name !== undefined) copy[COMPONENT_KEY] = name
  return copy
}

/** Replaces every marked schema by a $ref to its component, innermost first. */
function hoistComponents (node: unknown, schemas: Json): unknown {
  if (Array.isArray(node)) return node.map((item) => hoistComponents(item, schemas))
  if (!isObject(node)) return node
  const copy: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === COMPONENT_KEY) continue
    copy[key] = key === 'examples' || key === 'example' ? value : hoistComponents(value, schemas)
  }
  const name = node[COMPONENT_KEY]
  if (typeof name !== 'string') return copy
  schemas[name] ??= copy
  return { $ref: `#/components/schemas/${name}` }
}

/** A response that is the shared error envelope, with its description, headers and examples. */
function errorResponse (status: string, given: Json): Json {
  const standard = ERROR_RESPONSES[status]
  if (standard === undefined) throw new Error(`no description of error status ${status}`)
  const examples = (Array.isArray(given.examples) ? given.examples : standard.examples) as ErrorBody[]
  return {
    description: typeof given.description === 'string' ? given.description : standard.description,
    ...(standard.headers ? { headers: standard.headers } : {}),
    content: {
      'application/json': {
        schema: { $ref: 'Error' },
        examples: Object.fromEntries(examples.map((example) => [example.code, { summary: example.message, value: example }]))
      }
    }
  }
}

const transform: FastifyDynamicSwaggerOptions['transform'] = ({ schema, url }) => {
  if (!schema || schema.hide) return { schema, url }
  const copy = markComponents(schema) as FastifySchema & { response?: Json }
  if (copy.response) {
    copy.response = Object.fromEntries(Object.entries(copy.response).map(([status, response]) =>
      [status, isObject(response) && response.$ref === 'Error' ? errorResponse(status, response) : response]))
  }
  return { schema: copy, url }
}

const transformObject: FastifyDynamicSwaggerOptions['transformObject'] = (documentObject) => {
  const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
  const schemas: Json = {}
  const hoisted = hoistComponents(document, schemas) as typeof document & { components: { schemas: Json } }
  hoisted.components.schemas = sortKeys({ ...hoisted.components.schemas, ...schemas })
  return hoisted
}

function sortKeys (object: Json): Json {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b)))
}

// helmet's default policy, but everything from this origin (no https: fonts or
// styles), scripts from this origin plus the page's inline ones by their hash (Scalar
// configures itself in one inline script), inline styles (Scalar injects its
// stylesheet), and no upgrade-insecure-requests, which would make a page served over
// plain HTTP ask for its own script over HTTPS.
const DOCS_POLICY = [
  "default-src 'self'",
  "base-uri 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'"
]
const INLINE_SCRIPT = /<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi

function docsPolicy (html: string): string {
  const hashes = [...html.matchAll(INLINE_SCRIPT)].map((match) =>
    ` 'sha256-${createHash('sha256').update(match[1] ?? '').digest('base64')}'`)
  return [...DOCS_POLICY, `script-src 'self'${hashes.join('')}`].join('; ')
}

export default fp(async (fastify) => {
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Projects API', version: pkg.version, description: DESCRIPTION },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'pat_<43 characters>', description: BEARER_DESCRIPTION }
        }
      },
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'projects', description: 'Read and change projects' },
        { name: 'health', description: 'Probes for orchestrators and load balancers; no token' }
      ]
    },
    convertConstToEnum: false,
    // Shared schemas keep their $id as their name: #/components/schemas/Error.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` },
    transform,
    transformObject
  })

  fastify.get(DOCUMENT_URL, { schema: { hide: true, security: [] } }, async () => fastify.swagger())

  await fastify.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, security: [] }
      // helmet's other headers stay; the policy is set below, once the page is known.
      route.config = { ...route.config, helmet: { contentSecurityPolicy: false } } as typeof route.config
    })
    docs.addHook('onSend', async (_request, reply, payload) => {
      reply.header('content-security-policy', docsPolicy(typeof payload === 'string' ? payload : ''))
      // Scalar's bundle (4 MB) changes only with the package: no need to fetch it on every visit.
      if (String(reply.getHeader('content-type')).startsWith('application/javascript')) {
        reply.header('cache-control', 'public, max-age=3600')
      }
      return payload
    })
    // Typed by the package more narrowly than Scalar's page reads it (agent, MCP).
    const configuration = {
      url: DOCUMENT_URL,
      pageTitle: 'Projects API reference',
      // Everything from this process: no web fonts, telemetry or proxy elsewhere.
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      // Features that call Scalar's own services: nothing to offer offline.
      showDeveloperTools: 'never' as const,
      mcp: { disabled: true },
      agent: { disabled: true }
    }
    // Scalar's module carries its page script as a 4 MB string, some 40 MB of memory
    // once loaded: it is loaded on the first visit to the docs, into an instance of
    // its own whose answers are passed on, so a server nobody reads the docs of
    // never carries it.
    let reference: Promise<FastifyInstance> | undefined
    const load = async () => {
      const { default: scalar } = await import('@scalar/fastify-api-reference')
      const instance = Fastify()
      await instance.register(scalar, { routePrefix: DOCS_PREFIX, configuration })
      await instance.ready()
      return instance
    }
    fastify.addHook('onClose', async () => { if (reference) await (await reference).close() })
    const pass = async (request: FastifyRequest, reply: FastifyReply) => {
      reference ??= load()
      const answer = await (await reference).inject({ method: 'GET', url: request.url })
      if (answer.statusCode === 404) throw new ApiError(404, 'route_not_found', `no route ${request.method} ${request.url.split('?', 1)[0]}`)
      for (const name of ['content-type', 'location', 'etag', 'last-modified']) {
        const value = answer.headers[name]
        if (value !== undefined) reply.header(name, value)
      }
      return reply.code(answer.statusCode).send(answer.payload)
    }
    docs.get(DOCS_PREFIX, { schema: { hide: true } }, pass)
    docs.get(`${DOCS_PREFIX}/*`, { schema: { hide: true } }, pass)
  })
}, { name: 'swagger' })
