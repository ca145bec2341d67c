// schemas/serializer.ts: answers are written as Fastify's own serializer writes them,
// only without validating nullable fields. Every response schema of every route is
// compiled both ways and fed values with every nullable field present, then with
// every one null: the two must write the very same bytes.
import t from '../tap.js'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import type { RouteOptions } from 'fastify'
import { buildSerializer, nullableForSerializer } from '../../src/schemas/serializer.js'
import { COMPONENTS } from '../../src/components.js'
import { ProjectResponseSchema } from '../../src/projects/schemas.js'
import { build } from '../helper.js'

type Schema = Record<string, unknown>

/** A value of `schema`: each union with null as its other branch (`present`) or as null. */
function sample (schema: Schema, present: boolean, depth = 0): unknown {
  if (typeof schema.$ref === 'string') return sample(COMPONENTS[schema.$ref] as unknown as Schema, present, depth)
  if (Array.isArray(schema.anyOf)) {
    const branches = schema.anyOf as Schema[]
    const other = branches.find((b) => b.type !== 'null')!
    return !present && branches.some((b) => b.type === 'null') ? null : sample(other, present, depth)
  }
  if (Array.isArray(schema.enum)) return schema.enum[schema.enum.length - 1]
  if (schema.const !== undefined) return schema.const
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, sample(value, present, depth + 1)]))
    }
    case 'array': return depth > 6 ? [] : [sample(schema.items as Schema, present, depth + 1), sample(schema.items as Schema, present, depth + 1)]
    case 'string':
      if (schema.format === 'date-time') return '2026-11-24T10:00:00.000Z'
      if (schema.format === 'date') return '2026-11-24'
      return 'a "quoted" \\ text\u2028 é 😀 </script>'
    case 'integer': return 70
    case 'number': return 1.5
    case 'boolean': return true
    case 'null': return null
    default: return { any: ['thing', 1, null] }
  }
}

const routes: RouteOptions[] = []
const { app } = await build(t, { before: (server) => { server.addHook('onRoute', (route) => { routes.push(route) }) } })
await app.ready()

const standard = SerializerSelector()(COMPONENTS, {})
const ours = buildSerializer(COMPONENTS, {})

t.test('every answer of every route is written byte for byte as Fastify\'s own serializer writes it', async (t) => {
  let compared = 0
  const differences: string[] = []
  for (const route of routes) {
    const responses = (route.schema?.response ?? {}) as Record<string, Schema>
    for (const [status, schema] of Object.entries(responses)) {
      const definition = { schema, method: String(route.method), url: route.url, httpStatus: status }
      const before = standard(definition)
      const after = ours(definition)
      for (const present of [true, false]) {
        const value = sample(schema, present)
        const expected = before(value)
        compared++
        if (after(value) !== expected) differences.push(`${String(route.method)} ${route.url} ${status} (${present ? 'present' : 'null'})`)
      }
    }
  }
  t.ok(compared >= 60, `${compared} answers compared`)
  t.same(differences, [])
})

t.test('a project\'s nullable fields are written without validating them', async (t) => {
  const definition = { schema: ProjectResponseSchema, method: 'GET', url: '/api/external/v1/projects/get', httpStatus: '200' }
  const project = sample(ProjectResponseSchema as unknown as Schema, true) as { project: Record<string, unknown> }
  // A value the schema's format refuses: Fastify's serializer validates the branch and
  // throws; ours checks only for null. The database is where these values come from.
  const odd = { project: { ...project.project, archived_at: 'not a timestamp' } }
  t.throws(() => standard(definition)(odd), /does not match schema definition/)
  t.match(ours(definition)(odd), /"archived_at":"not a timestamp"/)
})

t.test('the nullable form: a union of one schema and null, and nothing else', async (t) => {
  t.same(nullableForSerializer({ anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] }), { type: 'string', format: 'date-time', nullable: true })
  t.same(nullableForSerializer({ anyOf: [{ type: 'null' }, { $ref: 'Person' }], description: 'd' }), { description: 'd', $ref: 'Person', nullable: true })
  t.same(nullableForSerializer({ anyOf: [{ enum: ['a', 'b'] }, { type: 'null' }] }), { enum: ['a', 'b'], type: 'string', nullable: true })
  t.same(nullableForSerializer({ type: 'object', properties: { x: { anyOf: [{ type: 'integer' }, { type: 'null' }] } } }),
    { type: 'object', properties: { x: { type: 'integer', nullable: true } } }, 'nested')
  const kept = [
    { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] },
    { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'integer' }] }, { type: 'null' }] },
    { anyOf: [{ enum: [1, 2] }, { type: 'null' }] },
    { anyOf: [{ type: 'string' }, { type: 'null', maxLength: 1 }] }
  ]
  for (const schema of kept) t.same(nullableForSerializer(schema), schema, JSON.stringify(schema))
})

t.test('a schema compiled once is compiled once for every app, but not for other shared schemas', async (t) => {
  const schema = { type: 'object', properties: { thing: { $ref: 'Thing' } } }
  const route = { schema, method: 'GET', url: '/thing', httpStatus: '200' }
  const shared = (type: string) => ({ Thing: { $id: 'Thing', type: 'object', properties: { value: { type } } } })
  const first = buildSerializer(shared('integer'), {})(route)
  t.equal(buildSerializer(shared('integer'), {})(route), first, 'a second app with the same shared schemas reuses the serializer')
  const other = buildSerializer(shared('string'), {})(route)
  t.not(other, first, 'other shared schemas compile anew')
  t.equal(first({ thing: { value: 7 } }), '{"thing":{"value":7}}')
  t.equal(other({ thing: { value: 7 } }), '{"thing":{"value":"7"}}', 'and write what theirs say')
  t.not(buildSerializer(shared('integer'), { rounding: 'ceil' })(route), first, 'so do other options')
})
