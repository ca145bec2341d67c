// How answers are written: fast-json-stringify from the route's response schema
// (Fastify's own compiler), given each nullable field in a form it writes without
// validating. A union with null (Nullable(), `anyOf: [X, {type: null}]` in the
// document) makes fast-json-stringify run Ajv on every value to choose a branch:
// for a project that meant validating its champion, goal, last check-in and whole
// subscription list, formats included, on every answer. The same field as X with
// `nullable: true` is written after one `=== null` check. Only the serializer sees
// this form: validation and the OpenAPI document keep the schemas as written.
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import { COMPONENTS } from './components.js'
import type { Static } from 'typebox'
import { NotificationListResponseSchema } from '../notifications/schemas.js'
import { ProjectSchema, type Project } from '../projects/schemas.js'

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

/** Fastify's `schemaController.compilersFactory.buildSerializer`, with the nullable form above. */
export const buildSerializer: SerializerSelector.SerializerFactory = (externalSchemas, serializerOpts) => {
  const shared = isObject(externalSchemas)
    ? Object.fromEntries(Object.entries(externalSchemas).map(([id, schema]) => [id, nullableForSerializer(schema)]))
    : externalSchemas
  const compile = SerializerSelector()(shared, serializerOpts)
  return (route) => compile({ ...route, schema: nullableForSerializer(route.schema) })
}

/**
 * A writer for answers of this schema that the app writes itself (and may keep,
 * plugins/answers.ts): the same compiler, shared schemas and nullable form as the
 * routes', so the bytes are those Fastify writes.
 */
function writer<T> (schema: unknown): (value: T) => string {
  return buildSerializer(COMPONENTS, {})({ schema, method: 'GET', url: '/', httpStatus: '200' }) as (value: T) => string
}

/** A Project on its own, as inside `{"project": …}` and `{"projects": […]}`. */
export const writeProject = writer<Project>({ $ref: 'Project' })

/**
 * The fields of a Project that are its reader's own and consecutive in its schema,
 * in that order: written into a project's kept bytes for each reader
 * (presenters/project.ts).
 */
export const READER_FIELDS = ['my_role', 'notifications', 'permissions'] as const

/** The field that follows READER_FIELDS in a written Project. */
export const AFTER_READER_FIELDS = (() => {
  const fields = Object.keys(ProjectSchema.properties)
  const first = fields.indexOf(READER_FIELDS[0])
  if (first < 0 || READER_FIELDS.some((field, i) => fields[first + i] !== field)) throw new Error('READER_FIELDS are not consecutive in the Project schema')
  return fields[first + READER_FIELDS.length]!
})()

/** An object of READER_FIELDS alone, each written as writeProject writes it: `{"my_role":…,"notifications":…,"permissions":…}`. */
export const writeReaderFields = writer<Pick<Project, typeof READER_FIELDS[number]>>({
  type: 'object',
  properties: Object.fromEntries(READER_FIELDS.map((field) => [field, ProjectSchema.properties[field]])),
  required: [...READER_FIELDS],
  additionalProperties: false
})

/** notifications/list's answer. */
export const writeNotificationPage = writer<Static<typeof NotificationListResponseSchema>>(NotificationListResponseSchema)

/**
 * The fields of a Project that its children make (db/project-aggregate.ts,
 * KEPT_COLUMNS: contributors, goal, key resources, last check-in, milestones,
 * subscription list, retrospective, task statuses), written the same whatever the
 * project's own columns and whoever reads it: presenters/project.ts keeps them
 * written by the text they are made from.
 */
export const CHILDREN_FIELDS = [
  'champion', 'reviewer', 'contributors', 'goal', 'key_resources', 'last_check_in', 'milestones', 'next_milestone',
  'milestones_ordering_state', 'potential_subscribers', 'subscription_list', 'retrospective', 'task_statuses'
] as const satisfies ReadonlyArray<keyof Project>

export type ChildrenField = typeof CHILDREN_FIELDS[number]

/** Consecutive fields of a Project, all of them its children's or none. */
export interface ProjectRun {
  readonly children: boolean
  readonly fields: ReadonlyArray<keyof Project>
  /** The run's fields of `project` as writeProject writes them between its braces: `"a":…,"b":…`. */
  readonly write: (project: Partial<Project>) => string
}

/**
 * The Project's fields in the schema's order, cut into runs of its children's
 * fields and of the others. Every field is required, so writeProject writes each
 * one: the runs, joined by commas inside braces, are its very bytes.
 */
export const PROJECT_RUNS: readonly ProjectRun[] = (() => {
  const fields = Object.keys(ProjectSchema.properties) as Array<keyof Project>
  const required = new Set<string>(ProjectSchema.required)
  if (fields.some((field) => !required.has(field))) throw new Error('a Project field is optional: its runs would not join into writeProject\'s bytes')
  const children = new Set<string>(CHILDREN_FIELDS)
  if (CHILDREN_FIELDS.some((field) => !fields.includes(field))) throw new Error('CHILDREN_FIELDS names a field the Project schema does not have')
  const runs: Array<{ children: boolean, fields: Array<keyof Project> }> = []
  for (const field of fields) {
    const last = runs.at(-1)
    if (last !== undefined && last.children === children.has(field)) last.fields.push(field)
    else runs.push({ children: children.has(field), fields: [field] })
  }
  return runs.map((run) => {
    const write = writer<Partial<Project>>({
      type: 'object',
      properties: Object.fromEntries(run.fields.map((field) => [field, ProjectSchema.properties[field]])),
      required: run.fields,
      additionalProperties: false
    })
    return { ...run, write: (project: Partial<Project>) => write(project).slice(1, -1) }
  })
})()
