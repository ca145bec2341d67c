// The Model Context Protocol endpoint: POST /mcp, Streamable HTTP (stateless), with
// the API's own tokens. Each request gets a server and a transport of its own from
// the official SDK (McpServer, StreamableHTTPServerTransport); Fastify has parsed
// and checked the body, then hands the raw request and response and the parsed
// message to the transport (reply.hijack()). GET and DELETE, which a stateless
// server does not serve, are the app's 405 with Allow: POST.
//
// Authentication is the API's onRequest hook, before the body is read: a bad
// token is 401 and its WWW-Authenticate names this resource's metadata document
// (RFC 9728, GET /.well-known/oauth-protected-resource). Read-only tokens pass:
// the write tools' operations refuse them. A body that is not JSON is a JSON-RPC
// parse error with its 4xx; a message that is not JSON-RPC the transport's 400.
//
// Registered before the resources, so that it sees their routes (onRoute) and
// builds each tool from the schemas of the route it runs (catalog.ts).
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import { toApiError } from '../http/errors.js'
import { buildCatalog, type Tool } from './catalog.js'
import { callTool, operationRunner } from './call.js'
import { TOOLS } from './tools.js'

const METADATA_PATH = '/.well-known/oauth-protected-resource'
const SERVER_INFO = { name: 'projects-api', title: 'Projects API', version: '0.1.0' }
const INSTRUCTIONS = 'Projects of a company, as the API token\'s person sees them: read them with list_projects, get_project, ' +
  'search and fetch; change them with the update_ tools (a write token is needed). Ids are the ones the tools return.'

/** The origin the client called (behind a trusted proxy, the one it was called at). */
const originOf = (request: FastifyRequest) => `${request.protocol}://${request.host.replace(/[^A-Za-z0-9.:[\]-]/g, '')}`

/** The MCP server of one request, its tools running as that request's caller. */
function serverFor (fastify: FastifyInstance, request: FastifyRequest, tools: Tool[]): McpServer {
  const mcp = new McpServer(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS })
  // Tools are served through the SDK's protocol server: McpServer's own registerTool
  // takes Zod schemas, and these tools' schemas are the routes' JSON Schemas.
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((tool) => tool.definition) }))
  mcp.server.setRequestHandler(CallToolRequestSchema, async (message) => {
    const tool = tools.find((t) => t.spec.name === message.params.name)
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${message.params.name}`)
    return await callTool(tool, message.params.arguments ?? {}, { run: operationRunner(fastify, request), origin: originOf(request) })
  })
  return mcp
}

/** Hands the request to a fresh server and transport; the reply is theirs from here on. */
async function serve (fastify: FastifyInstance, request: FastifyRequest, reply: FastifyReply, tools: Tool[]): Promise<void> {
  const mcp = serverFor(fastify, request, tools)
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  reply.raw.on('close', () => { void mcp.close() })
  await mcp.connect(transport)
  // The headers the app's hooks set so far (security, rate limit), and those its onSend would.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value)
  reply.raw.setHeader('x-request-id', request.id)
  reply.raw.setHeader('cache-control', 'no-store')
  reply.hijack()
  try {
    await transport.handleRequest(request.raw, reply.raw, request.body)
  } catch (error) {
    request.log.error({ err: error }, 'mcp request failed')
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/json' })
      reply.raw.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InternalError, message: 'internal error' } }))
    }
  }
}

/** The JSON-RPC answer to a body that could not be read as JSON (after authentication: 400, 413, 415). */
function jsonRpcBodyError (status: number, message: string) {
  return { jsonrpc: '2.0', id: null, error: { code: status === 400 ? ErrorCode.ParseError : ErrorCode.InvalidRequest, message } }
}

export default fp(async (fastify) => {
  const routes = new Map<string, FastifySchema>()
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.set(`${method} ${route.url}`, route.schema ?? {})
  })
  let tools: Tool[] = []
  fastify.addHook('onReady', async () => { tools = buildCatalog(TOOLS, routes) })

  const metadata = async (request: FastifyRequest) => ({
    resource: `${originOf(request)}/mcp`,
    resource_name: 'Projects API (MCP)',
    bearer_methods_supported: ['header'],
    resource_documentation: `${originOf(request)}/docs`
  })
  fastify.get(METADATA_PATH, { schema: { hide: true } }, metadata)
  fastify.get(`${METADATA_PATH}/mcp`, { schema: { hide: true } }, metadata)

  await fastify.register(async (scope) => {
    // Once the token is good, a body that cannot be read is answered in JSON-RPC;
    // anything else (401, 429…) leaves through the app's handler, in its envelope.
    scope.setErrorHandler(async (error, request, reply) => {
      const apiError = toApiError(error as Parameters<typeof toApiError>[0], fastify.initialConfig.bodyLimit)
      if (request.caller === null || ![400, 413, 415].includes(apiError.statusCode)) throw error
      request.log.info({ code: apiError.code, statusCode: apiError.statusCode }, 'mcp: unreadable body')
      return reply.code(apiError.statusCode).send(jsonRpcBodyError(apiError.statusCode, apiError.message))
    })
    scope.addHook('onSend', async (request, reply) => {
      if (reply.statusCode !== 401) return
      const challenge = String(reply.getHeader('www-authenticate') ?? 'Bearer').replace(/^Bearer\s*,?\s*/i, '')
      const resourceMetadata = `resource_metadata="${originOf(request)}${METADATA_PATH}"`
      reply.header('www-authenticate', `Bearer ${resourceMetadata}${challenge === '' ? '' : `, ${challenge}`}`)
    })
    scope.post('/mcp', {
      schema: { hide: true },
      config: { readOnlyTokens: true },
      onRequest: fastify.authenticate
    }, async (request, reply) => { await serve(fastify, request, reply, tools) })
  })
}, { name: 'mcp', dependencies: ['auth', 'errors'] })
