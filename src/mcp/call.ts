// One tools/call: the arguments checked against the tool's input schema, turned
// into the operation's input (renamed, Markdown converted, query values as text),
// the operation run over HTTP inside the app as the caller (`fastify.inject` with
// their Authorization header and the request id: the same hooks, checks, activity,
// notifications, webhooks and logs as any call), and its answer handed back:
// structuredContent is the HTTP answer's body, success or error envelope, and the
// text block its JSON. An error is a tool error (isError) with the API's code.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { TSchema } from 'typebox'
import { ApiError, invalidInput } from '../errors.js'
import type { ErrorBody, ErrorDetail } from '../schemas/common.js'
import { dispatchHeaders } from '../http/dispatch.js'
import { propertyDetails } from '../schemas/validation.js'
import { dayLabel } from '../projects/rules.js'
import type { Tool } from './catalog.js'
import type { Operation, ToolContext } from './tools.js'
import { countToolCall } from '../metrics/registry.js'

type Json = Record<string, unknown>

/** The first reason `args` do not fit the tool's input schema, naming the argument. */
function checkArguments (tool: Tool, args: Json): void {
  const { properties = {}, required } = tool.definition.inputSchema as { properties?: Record<string, TSchema>, required?: string[] }
  const [refused] = propertyDetails({ properties, required }, args)
  if (refused !== undefined) throw invalidInput(refused.path, refused.message)
  const unknown = Object.keys(args).find((name) => !Object.hasOwn(properties, name))
  if (unknown !== undefined) throw invalidInput(`/${unknown}`, 'is not allowed')
}

/** The operation's input for the tool's arguments. */
async function operationInput (tool: Tool, args: Json): Promise<Json> {
  const input: Json = {}
  const cleared = (tool.spec.clearable ?? []).filter((name) => !(name in args))
  for (const [name, value] of [...Object.entries(args), ...cleared.map((name) => [name, null] as const)]) {
    let sent = value
    if (tool.spec.days?.includes(name) === true && typeof value === 'string') {
      sent = { date: value, date_type: 'day', value: dayLabel(value) }
    } else if (tool.spec.markdown?.includes(name) === true) {
      // Loaded by the first call that needs it: markdown-it and prosemirror are large.
      const { markdownToRichText } = await import('../projects/markdown-in.js')
      sent = markdownToRichText(value as string)
    } else if (tool.queryTypes[name] !== undefined) {
      sent = String(value)
    }
    input[tool.spec.renamed?.[name] ?? name] = sent
  }
  return input
}

/**
 * The error envelope with the operation's input names turned back into the tool's
 * argument names, and what is said of a day's contextual date said of the day.
 */
function inArgumentNames (tool: Tool, body: ErrorBody): ErrorBody {
  const renamed = Object.entries(tool.spec.renamed ?? {})
  const days = tool.spec.days ?? []
  if (body.details === undefined || renamed.length + days.length === 0) return body
  const rename = (path: string) => {
    for (const day of days) if (path.startsWith(`/${day}/`)) return `/${day}`
    for (const [argument, input] of renamed) {
      if (path === `/${input}` || path.startsWith(`/${input}/`)) return `/${argument}${path.slice(input.length + 1)}`
    }
    return path
  }
  const details: ErrorDetail[] = body.details.map((d) => ({ ...d, path: rename(d.path) }))
  const message = details.map((d) => `${d.path.slice(1).replaceAll('/', '.')} ${d.message}`).join('; ')
  return { ...body, message, details }
}

/** Runs operations as the caller of `request`: the 200 answer's body, or the ApiError of any other. */
export function operationRunner (fastify: FastifyInstance, request: FastifyRequest): ToolContext['run'] {
  return async (operation: Operation, input: Json) => {
    const [method, url] = operation.split(' ') as ['GET' | 'POST', string]
    const response = await fastify.inject({
      method,
      url,
      headers: {
        authorization: request.headers.authorization ?? '',
        'x-request-id': request.id,
        ...dispatchHeaders(),
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {})
      },
      ...(method === 'GET' ? { query: input as Record<string, string> } : { payload: JSON.stringify(input) })
    })
    const body = response.json<Json>()
    if (response.statusCode === 200) return body
    const error = body as unknown as ErrorBody
    throw new ApiError(response.statusCode, error.code, error.message, error.details)
  }
}

function result (body: object, isError: boolean): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body as Json, ...(isError ? { isError } : {}) }
}

/** The result of calling `tool` with `args` as the caller of `context`, counted by outcome. */
export async function callTool (tool: Tool, args: Json, context: ToolContext): Promise<CallToolResult> {
  try {
    checkArguments(tool, args)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    countToolCall(tool.spec.name, 'invalid_arguments')
    return result(error.body(), true)
  }
  try {
    const custom = tool.spec.custom
    const body = custom !== undefined
      ? await custom.call(args, context)
      : await context.run(tool.spec.operation, await operationInput(tool, args))
    countToolCall(tool.spec.name, 'success')
    return result(body, false)
  } catch (error) {
    countToolCall(tool.spec.name, error instanceof ApiError ? 'tool_error' : 'exception')
    if (!(error instanceof ApiError)) throw error
    return result(inArgumentNames(tool, error.body()), true)
  }
}
