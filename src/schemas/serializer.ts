// How answers are written: fast-json-stringify from the route's response schema
// (Fastify's own compiler), given each nullable field in a form it writes without
// validating. A union with null (Nullable(), `anyOf: [X, {type: null}]` in the
// document) makes fast-json-stringify run Ajv on every value to choose a branch:
// for a project that meant validating its champion, goal, last check-in and whole
// subscription list, formats included, on every answer. The same field as X with
// `nullable: true` is written after one `=== null` check. Only the serializer sees
// this form: validation and the OpenAPI document keep the schemas as written.
import SerializerSelector from '@fastify/fast-json-stringify-compiler'

type Schema = Record<string, unknown>

const isObject = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value)

/** `{ type: 'null' }`, alone or with words that do not constrain (a description). */
function isNullSchema (schema: unknown): boolean {
  return isObject(schema) && schema.type === 'null' && Object.keys(schema).every((key) => key === 'type' || key === 'description')
}

const COMBINATORS = ['anyOf', 'oneOf', 'allOf', 'not', 'if', 'nullable'] as const

/**
 * The schema with every two-branch union of X and null written as X marked
 * nullable, where X is a single schema (a $ref, a typed schema or an enum of
 * strings) that is not itself a combination. Anything else is kept as it is.
 */
export function nullableForSerializer (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableForSerializer)
  if (!isObject(schema)) return schema
  const out: Schema = {}
  for (const [key, value] of Object.entries(schema)) out[key] = nullableForSerializer(value)
  const branches = out.anyOf
  if (!Array.isArray(branches) || branches.length !== 2) return out
  const nullAt = branches.findIndex(isNullSchema)
  const other: unknown = branches[1 - nullAt]
  if (nullAt === -1 || !isObject(other) || COMBINATORS.some((word) => word in other)) return out
  const { anyOf: _union, ...siblings } = out
  const merged: Schema = { ...siblings, ...other, nullable: true }
  if (merged.$ref === undefined && merged.type === undefined) {
    // An enum of strings (a role, a status): its type, which fast-json-stringify would otherwise guess.
    if (!Array.isArray(merged.enum) || !merged.enum.every((v) => typeof v === 'string')) return out
    merged.type = 'string'
  }
  return merged
}

/**
 * Serializers already compiled, by the schemas they were compiled from: each app
 * built in this process (a test file builds many) compiles each response schema
 * once, where compiling them all takes a third of a second. A serializer depends on
 * its schema, the shared schemas it refers to and the options, all kept in the key.
 */
const compiled = new WeakMap<object, Map<string, (data: unknown) => string>>()

/** Fastify's `schemaController.compilersFactory.buildSerializer`, with the nullable form above. */
export const buildSerializer: SerializerSelector.SerializerFactory = (externalSchemas, serializerOpts) => {
  const shared = isObject(externalSchemas)
    ? Object.fromEntries(Object.entries(externalSchemas).map(([id, schema]) => [id, nullableForSerializer(schema)]))
    : externalSchemas
  const compile = SerializerSelector()(shared, serializerOpts)
  const context = JSON.stringify([shared, serializerOpts ?? null])
  return (route) => {
    if (!isObject(route.schema)) return compile({ ...route, schema: nullableForSerializer(route.schema) })
    let bySchema = compiled.get(route.schema)
    if (bySchema === undefined) compiled.set(route.schema, bySchema = new Map())
    let serializer = bySchema.get(context)
    if (serializer === undefined) bySchema.set(context, serializer = compile({ ...route, schema: nullableForSerializer(route.schema) }))
    return serializer
  }
}
