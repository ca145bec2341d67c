// The OpenAPI 3.1 document, generated from the route schemas: served at
// DOCUMENT_URL and written to openapi.json by `npm run openapi`. Its components are
// the shared schemas under their $id (components.ts); each error status is
// described as routes/responses.ts says.
import fp from 'fastify-plugin'
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import pkg from '../../package.json' with { type: 'json' }
import { errorResponse } from './responses.js'
import { ErrorSchema, schemaId } from '../schemas/common.js'

export const DOCUMENT_URL = '/api/external/v1/openapi.json'

const DESCRIPTION = `The external JSON API of a project-management service, wire-compatible with
Operately's external API for the operations below.

**Authentication.** Every \`/api/external/v1/projects/*\` call carries an API token in
\`Authorization: Bearer <token>\`. A read-only token may call queries (\`GET\`) and no
mutation (\`POST\`). Without a valid token the answer is 401 with
\`WWW-Authenticate: Bearer realm="api"\`. The token is checked in the operation's own statement: a
successful request is one database round trip.

**Errors.** Every error, whatever its status, has one JSON body, the \`Error\` envelope:
\`{ "statusCode", "error", "code", "message", "details"? }\`. \`code\` is stable and
machine-readable (\`invalid_input\`, \`unauthenticated\`, \`read_only_token\`, \`forbidden\`,
\`not_found\`, \`request_timeout\`, \`precondition_failed\`, \`payload_too_large\`, \`unsupported_media_type\`,
\`expectation_failed\`, \`headers_too_large\`, \`rate_limited\`, \`internal\`, \`unavailable\`, and
\`route_not_found\` / \`method_not_allowed\` for unknown paths and methods);
\`details\` lists the offending fields of a 400 as JSON Pointers. Checks run in this order:
routing, the rate limit, authentication, read-only, the body (415, 413, malformed JSON), input validation,
then the project lookup and permission, so an unauthenticated caller learns nothing about
validation or about which projects exist.

**Conditional requests.** Every answer that carries one project (\`projects/get\` and both
mutations) has an \`ETag\`: a strong tag of the project as the token's person reads it, equal for
two reads that answer the same bytes and different after any change of that answer (someone
else's edit, a notification, a subscription, a change of access). \`projects/get\` with
\`If-None-Match\` naming it answers 304 without a body. A mutation with \`If-Match\` changes the
project only if it is still the version a listed tag names, else it answers 412
\`precondition_failed\` with the current \`ETag\` and writes nothing; the check and the write are
one statement, so of many requests carrying one tag exactly one succeeds. 404 and 403 come
before 304 and 412. Without these headers nothing changes.

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

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

const ERROR = schemaId(ErrorSchema)

/** Each response that is the error envelope gets its status's description, headers and examples. */
const transform: FastifyDynamicSwaggerOptions['transform'] = ({ schema, url }) => {
  if (!schema?.response || schema.hide || !isObject(schema.response)) return { schema, url }
  const response = Object.fromEntries(Object.entries(schema.response).map(([status, given]) =>
    [status, isObject(given) && given.$ref === ERROR ? errorResponse(status, given) : given]))
  return { schema: { ...schema, response }, url }
}

/** The components by name, whatever order the shared schemas were added in. */
const transformObject: FastifyDynamicSwaggerOptions['transformObject'] = (documentObject) => {
  if (!('openapiObject' in documentObject)) return documentObject.swaggerObject
  const document = documentObject.openapiObject
  const components = document.components
  if (components?.schemas) components.schemas = Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b)))
  return document
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
        { name: 'webhooks', description: "The company's signed webhook endpoints (Standard Webhooks), for its admins" },
        { name: 'health', description: 'Probes for orchestrators and load balancers; no token' }
      ]
    },
    convertConstToEnum: false,
    // Shared schemas keep their $id as their name: #/components/schemas/Project.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` },
    transform,
    transformObject
  })

  fastify.get(DOCUMENT_URL, { schema: { hide: true, security: [] } }, async () => fastify.swagger())
}, { name: 'openapi' })
