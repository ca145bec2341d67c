// Shapes shared by every resource: the error envelope and small helpers.
import Type, { type Static, type TSchema, type TSchemaOptions, type TUnsafe } from 'typebox'

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

/** Digits only: a number in a query string, which is text. */
export const DIGITS = '^[0-9]+$'
/** YYYY-MM-DD. */
export const DAY_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'
/** The settings' (config.ts): a list of seconds, a PostgreSQL URL, a Redis URL. */
export const SECONDS_LIST = '^\\s*\\d+(\\.\\d+)?\\s*(,\\s*\\d+(\\.\\d+)?\\s*)*$'
export const POSTGRES_URL = '^postgres(ql)?://'
export const REDIS_URL = '^rediss?://'
/** What a value refused by each pattern must be, as its refusal says (schemas/validation.ts). */
export const PATTERN_MEANING: Readonly<Record<string, string>> = {
  [DIGITS]: 'a whole number in digits',
  [DAY_PATTERN]: 'a calendar date (YYYY-MM-DD)',
  [SECONDS_LIST]: 'seconds separated by commas (5,300,1800)',
  [POSTGRES_URL]: 'a postgres:// or postgresql:// URL',
  [REDIS_URL]: 'a redis:// or rediss:// URL'
}

/**
 * How a page is compressed (@fastify/compress, on the page's route and as the
 * plugin's default): gzip only, whatever else the client accepts, at zlib's level
 * 3, which takes about half the time of the default 6 for 5 to 10 % more bytes
 * (a page of 20 projects, 746 KB: 6.5 ms and 153 KB against 11.1 ms and 138 KB).
 */
export const PAGE_COMPRESSION: { encodings: Array<'gzip'>, zlibOptions: { level: number } } = { encodings: ['gzip'], zlibOptions: { level: 3 } }

/** The headers of a page (projects/list, notifications/list), which is sent gzip-compressed to a client that accepts it (@fastify/compress). */
export const PAGE_HEADERS = {
  'Content-Encoding': {
    type: 'string',
    enum: ['gzip'],
    description: '`gzip` when the request\'s Accept-Encoding accepts gzip (with a weight no lower than identity\'s): the page ' +
      'compressed, Content-Length its compressed length. Absent otherwise.'
  },
  Vary: { type: 'string', enum: ['Accept-Encoding'], description: 'The page varies with Accept-Encoding' }
}

/** The $id of a shared schema. */
export function schemaId (schema: TSchema): string {
  const id: unknown = Reflect.get(schema, '$id')
  if (typeof id !== 'string') throw new Error('a shared schema needs an $id')
  return id
}

/**
 * A reference to a shared schema by its $id (`{ "$ref": "Person" }`), typed as the
 * schema itself; `options` (a description, examples) describe this use of it. The
 * shared schemas are added to the app once (components.ts) and are the
 * OpenAPI document's components under their $id.
 */
export function Shared<T extends TSchema> (schema: T, options?: TSchemaOptions): TUnsafe<Static<T>> {
  return Type.Unsafe<Static<T>>(Type.Ref(schemaId(schema), options))
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp', examples: ['2026-11-21T09:30:00.000Z'] })
export const DateOnly = Type.String({ format: 'date', description: 'Calendar date', examples: ['2026-12-31'] })
/**
 * Operately's `include_*` flags of one operation (`true` or `false`), accepted for
 * its clients' sake and ignored: the answer is the same whatever they say. Only
 * the operation's own flags: any other query parameter is 400.
 */
export function operatelyFlags (...names: string[]) {
  return Object.fromEntries(names.map((name) => [name, Type.Optional(Type.Enum(['true', 'false'], { description: 'Accepted for compatibility with Operately; changes nothing' }))]))
}

export const Id = Type.String({ description: 'Public id: base62 of a UUID, optionally after a slug and a dash', examples: ['1S9sHJdXziGMetRhKlyYI1'] })

/**
 * Every code the error envelope may carry: the one list, from which the
 * TypeScript type of a code is derived and which the document lists.
 */
const ErrorCodeSchema = Type.Enum([
  'invalid_input', 'unauthenticated', 'read_only_token', 'forbidden', 'not_found', 'route_not_found',
  'method_not_allowed', 'request_timeout', 'precondition_failed', 'payload_too_large', 'unsupported_media_type', 'expectation_failed',
  'headers_too_large', 'rate_limited', 'internal', 'unavailable'
], { description: 'Stable machine-readable error code', examples: ['invalid_input'] })

export type ErrorCode = Static<typeof ErrorCodeSchema>

const ErrorDetailSchema = Type.Object({
  path: Type.String({ description: 'JSON Pointer to the offending input', examples: ['/name'] }),
  message: Type.String({ examples: ['must not be blank'] })
}, { additionalProperties: false })

/** One offending field of a 400 invalid_input. */
export type ErrorDetail = Static<typeof ErrorDetailSchema>

export const ErrorSchema = Type.Object({
  statusCode: Type.Integer({ description: 'Equals the HTTP status', examples: [400] }),
  error: Type.String({ description: 'HTTP reason phrase, as Node.js names the status', examples: ['Bad Request'] }),
  code: ErrorCodeSchema,
  message: Type.String({ description: 'What went wrong, for people; never a stack trace or SQL', examples: ['name must not be blank'] }),
  details: Type.Optional(Type.Array(ErrorDetailSchema, { description: 'The offending fields of a 400 invalid_input' }))
}, {
  $id: 'Error',
  description: 'The one envelope of every error response',
  additionalProperties: false,
  examples: [{
    statusCode: 400,
    error: 'Bad Request',
    code: 'invalid_input',
    message: 'name must not be blank',
    details: [{ path: '/name', message: 'must not be blank' }]
  }]
})

export type ErrorBody = Static<typeof ErrorSchema>

/** Reference to the shared error envelope. */
export const ErrorRef = Shared(ErrorSchema)
