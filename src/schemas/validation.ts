// What a value was refused for, as the service says it: a path and a message a
// person can act on, from the errors of a schema validator. The routes' input
// (Ajv's errors, in the error envelope's details), the MCP tools' arguments and
// the settings (TypeBox's, which report in Ajv's form) are all told in these words.
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { PATTERN_MEANING, type ErrorDetail } from './common.js'

/** One validator error, in Ajv's form. */
export interface SchemaError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
}

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', integer: 'an integer', null: 'null' }

/** One of the values a field may take, as a detail names it: `a string`, `null`, `"day"`. */
function alternatives (e: SchemaError): string[] {
  switch (e.keyword) {
    // Fastify's `nullable` makes a type list, which Ajv reports joined by commas.
    case 'type': return String(e.params.type).split(',').map((type) => ARTICLE[type] ?? `a ${type}`)
    case 'enum': return [`one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`]
    case 'const': return [JSON.stringify(e.params.allowedValue)]
    default: return []
  }
}

const either = (options: string[]) => options.length < 2 ? options.join('') : `${options.slice(0, -1).join(', ')} or ${options.at(-1)!}`

/** A bound as a detail says it: `at most 500 characters`, `at least 1 item`. */
function bound (limit: unknown, side: 'at most' | 'at least', unit: string): string {
  return `must hold ${side} ${String(limit)} ${unit}${limit === 1 ? '' : 's'}`
}

/** What the value must be, in the words the API's own checks use ("must be at most 255 characters"). */
function refusal (e: SchemaError): string {
  const { limit } = e.params
  switch (e.keyword) {
    case 'type': case 'enum': case 'const': return `must be ${either(alternatives(e))}`
    case 'pattern': {
      const meaning = PATTERN_MEANING[String(e.params.pattern)]
      return meaning === undefined ? e.message ?? 'is invalid' : `must be ${meaning}`
    }
    case 'maxLength': return `must be at most ${String(limit)} characters`
    case 'minLength': return limit === 1 ? 'must not be empty' : `must be at least ${String(limit)} characters`
    case 'maxItems': return bound(limit, 'at most', 'item')
    case 'minItems': return limit === 1 ? 'must not be empty' : bound(limit, 'at least', 'item')
    case 'uniqueItems': return `must not hold the same item twice (items ${String(e.params.j)} and ${String(e.params.i)} are the same)`
    case 'maximum': return `must be at most ${String(limit)}`
    case 'minimum': return `must be at least ${String(limit)}`
    default: return e.message ?? 'is invalid'
  }
}

function validationDetail (e: SchemaError): ErrorDetail {
  switch (e.keyword) {
    case 'required': {
      // Ajv names the field missing; TypeBox names all the required ones.
      const { missingProperty, requiredProperties } = e.params
      return typeof missingProperty === 'string'
        ? { path: `${e.instancePath}/${missingProperty}`, message: 'is required' }
        : { path: e.instancePath, message: `must have ${Array.isArray(requiredProperties) ? requiredProperties.join(', ') : String(requiredProperties)}` }
    }
    case 'additionalProperties': return { path: `${e.instancePath}/${String(e.params.additionalProperty)}`, message: 'is not allowed' }
    default: return { path: e.instancePath, message: refusal(e) }
  }
}

/** What one error refused at `path`; `kinds`, when it refused only the value's kind (its type, or its value being none of a list). */
interface Refusal { path: string, kinds: string[], detail: ErrorDetail }

const isUnder = (path: string, union: string) => path === union || path.startsWith(`${union}/`)

/**
 * Ajv's errors as details, each union (anyOf: a nullable field, a choice of
 * shapes) told as one thing to fix. Ajv lists what every branch refused, then
 * that none matched: `goal_id: 123` gets "must be a string", "must be null" and
 * "must match a schema in anyOf". Where a branch refused something inside the
 * value (a field of the object sent, a pattern of the string sent), that branch is
 * the one meant and its errors alone are kept; where every branch refused the
 * value's kind, they become one: "must be a string or null". Without allErrors a
 * failure ends validation, so what precedes a union's error under its path is
 * what its branches refused.
 */
export function validationDetails (errors: SchemaError[]): ErrorDetail[] {
  let refusals: Refusal[] = []
  for (const error of errors) {
    if (error.keyword !== 'anyOf') {
      refusals.push({ path: error.instancePath, kinds: alternatives(error), detail: validationDetail(error) })
      continue
    }
    const path = error.instancePath
    const branches = refusals.filter((r) => isUnder(r.path, path))
    refusals = refusals.filter((r) => !isUnder(r.path, path))
    const meant = branches.filter((r) => r.kinds.length === 0 || r.path !== path)
    const kinds = [...new Set(branches.flatMap((r) => r.kinds))]
    if (meant.length > 0) refusals.push(...meant)
    else if (kinds.length > 0) refusals.push({ path, kinds, detail: { path, message: `must be ${either(kinds)}` } })
    else refusals.push({ path, kinds, detail: validationDetail(error) })
  }
  return refusals.map((r) => r.detail)
}

/**
 * An object's properties, each checked on its own against its schema with
 * TypeBox, which reports eight errors a check at most: checked whole, a ninth bad
 * property, or the last branches of a union, would go unsaid. The first refusal of
 * each property, in the schema's order; one absent (or undefined) is refused only
 * when required.
 */
export function propertyDetails (schema: { properties: Record<string, TSchema>, required?: readonly string[] }, value: Record<string, unknown>): ErrorDetail[] {
  const required = new Set(schema.required ?? [])
  const details: ErrorDetail[] = []
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!Object.hasOwn(value, name) || value[name] === undefined) {
      if (required.has(name)) details.push({ path: `/${name}`, message: 'is required' })
      continue
    }
    const [detail] = validationDetails([...Value.Errors(property, value[name])] as SchemaError[])
    if (detail !== undefined) details.push({ path: `/${name}${detail.path}`, message: detail.message })
  }
  return details
}
