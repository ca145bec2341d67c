// Shapes shared by every resource: the error envelope and small helpers.
import Type, { type Static, type TSchema } from 'typebox'

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp', examples: ['2026-11-21T09:30:00.000Z'] })
export const DateOnly = Type.String({ format: 'date', description: 'Calendar date', examples: ['2026-12-31'] })
export const Id = Type.String({ description: 'Public id: base62 of a UUID, optionally after a slug and a dash' })

export const ErrorSchema = Type.Object({
  statusCode: Type.Integer({ description: 'Equals the HTTP status' }),
  error: Type.String({ description: 'HTTP reason phrase' }),
  code: Type.String({ description: 'Stable machine-readable error code' }),
  message: Type.String(),
  details: Type.Optional(Type.Array(Type.Object({
    path: Type.String({ description: 'JSON Pointer to the offending input' }),
    message: Type.String()
  }, { additionalProperties: false })))
}, { $id: 'Error', additionalProperties: false })

export type ErrorBody = Static<typeof ErrorSchema>

/** Reference to the shared error envelope, added once to the app with addSchema. */
export const ErrorRef = Type.Ref('Error')
