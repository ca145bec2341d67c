// The tools as MCP lists them, made from the routes they run: the input schema is
// the route's body (or query) schema, the output schema its 200 answer or the error
// envelope. JSON Schema as MCP clients take it: self-contained (the shared schemas
// referred to by $id are copied under $defs), without the OpenAPI document's
// examples and headers, and a query's `true`/`false` and digit strings typed as
// the booleans and integers an agent writes.
import type { FastifySchema } from 'fastify'
import type { TSchema } from 'typebox'
import { COMPONENTS } from '../components.js'
import { DAY_PATTERN, DIGITS, ErrorSchema } from '../schemas/common.js'
import type { Hints, ToolSpec } from './tools.js'

type Json = Record<string, unknown>

export interface Tool {
  spec: ToolSpec
  method: 'GET' | 'POST'
  url: string
  /** The MCP definition, as tools/list answers it. */
  definition: { name: string, title: string, description: string, inputSchema: Json, outputSchema: Json, annotations: Hints & { title: string } }
  /** Arguments sent as query strings: booleans and integers. */
  queryTypes: Record<string, 'boolean' | 'integer'>
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const DROPPED = new Set(['examples', 'headers', '$id'])

/** A copy of `schema` without annotations for OpenAPI, its `$ref`s pointing under `#/$defs`, each one found added to `defs`. */
function portable (schema: unknown, defs: Json): unknown {
  if (Array.isArray(schema)) return schema.map((item) => portable(item, defs))
  if (!isObject(schema)) return schema
  const copy: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.has(key)) continue
    if (key === 'properties' && isObject(value)) {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, portable(property, defs)]))
    } else if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) {
      copy[key] = `#/$defs/${value}`
      if (!(value in defs)) {
        defs[value] = {}
        defs[value] = portable(COMPONENTS[value], defs)
      }
    } else {
      copy[key] = portable(value, defs)
    }
  }
  return copy
}

/** The output schema: the operation's answer, or the error envelope a failed call carries. */
function outputSchema (answer: TSchema): Json {
  const defs: Json = {}
  const success = portable(answer, defs)
  const failure = portable(ErrorSchema, defs)
  return { type: 'object', anyOf: [success, failure], $defs: defs }
}

/** A query parameter as an argument: `true`/`false` a boolean, a digit string an integer. */
function argumentOf (property: Json): { schema: Json, type?: 'boolean' | 'integer' } {
  const { description } = property
  const described = description === undefined ? {} : { description }
  if (Array.isArray(property.enum) && property.enum.length === 2 && property.enum.includes('true') && property.enum.includes('false')) {
    return { schema: { type: 'boolean', ...described }, type: 'boolean' }
  }
  if (property.type === 'string' && property.pattern === DIGITS) return { schema: { type: 'integer', minimum: 0, ...described }, type: 'integer' }
  return { schema: property }
}

const MARKDOWN = { type: 'string', description: 'Markdown: headings, **bold**, *italic*, ~~strike~~, `code`, links, lists, quotes, code blocks; mention a person as @[Full Name](person_id)' }

const DAY = {
  anyOf: [{ type: 'string', pattern: DAY_PATTERN }, { type: 'null' }],
  description: 'A day, YYYY-MM-DD (for example 2026-07-01); left out or null: none'
}

/** The tool's input schema and its query arguments' types, from the route's body or query schema. */
function inputSchema (spec: ToolSpec, route: FastifySchema, method: 'GET' | 'POST'): { schema: Json, queryTypes: Tool['queryTypes'] } {
  if (spec.custom !== undefined) return { schema: portable(spec.custom.input, {}) as Json, queryTypes: {} }
  const source = portable(method === 'GET' ? route.querystring : route.body, {}) as Json
  const properties = isObject(source.properties) ? source.properties : {}
  const required = new Set(Array.isArray(source.required) ? source.required as string[] : [])
  const argumentName = Object.fromEntries(Object.entries(spec.renamed ?? {}).map(([argument, input]) => [input, argument]))
  const schema: Json = { type: 'object', properties: {}, required: [] as string[], additionalProperties: false }
  const queryTypes: Tool['queryTypes'] = {}
  for (const input of spec.inputs ?? Object.keys(properties)) {
    const property = properties[input]
    if (!isObject(property)) throw new Error(`tool ${spec.name}: ${spec.operation} has no input ${input}`)
    const name = argumentName[input] ?? input
    const argument: { schema: Json, type?: 'boolean' | 'integer' } =
      spec.markdown?.includes(name) === true ? { schema: MARKDOWN }
        : spec.days?.includes(name) === true ? { schema: DAY }
          : method === 'GET' ? argumentOf(property) : { schema: property }
    ;(schema.properties as Json)[name] = argument.schema
    if (argument.type !== undefined) queryTypes[name] = argument.type
    if (required.has(input) && spec.clearable?.includes(name) !== true) (schema.required as string[]).push(name)
  }
  return { schema, queryTypes }
}

/** Every tool of `specs`, from the schemas of the routes they run (by `METHOD /path`); a tool whose route is missing is a startup error. */
export function buildCatalog (specs: ToolSpec[], routes: ReadonlyMap<string, FastifySchema>): Tool[] {
  return specs.map((spec) => {
    const route = routes.get(spec.operation)
    if (route === undefined) throw new Error(`tool ${spec.name}: no route ${spec.operation}`)
    const [method, url] = spec.operation.split(' ') as ['GET' | 'POST', string]
    const { schema, queryTypes } = inputSchema(spec, route, method)
    const answer = spec.custom?.output ?? (route.response as Record<number, TSchema> | undefined)?.[200]
    if (answer === undefined) throw new Error(`tool ${spec.name}: ${spec.operation} has no 200 answer`)
    return {
      spec,
      method,
      url,
      queryTypes,
      definition: {
        name: spec.name,
        title: spec.title,
        description: spec.description,
        inputSchema: schema,
        outputSchema: outputSchema(answer),
        annotations: { title: spec.title, ...spec.hints }
      }
    }
  })
}
