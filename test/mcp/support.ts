// The MCP side of the tests: the SDK's own client over real HTTP, with an API token.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FastifyInstance } from 'fastify'

interface Teardown { teardown: (fn: () => unknown) => void }

/** A connected MCP client sending `Authorization: Bearer <token>`; closed at the test's end. */
export async function mcpClient (t: Teardown, url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'projects-api-tests', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } }
  })
  await client.connect(transport)
  t.teardown(() => client.close())
  return client
}

export interface ToolAnswer { isError: boolean, body: Record<string, unknown>, text: string }

/** Calls a tool: whether it failed, its structured content, and its text block. */
export async function call (client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const result = await client.callTool({ name, arguments: args })
  const content = result.content as Array<{ type: string, text: string }>
  return { isError: result.isError === true, body: result.structuredContent as Record<string, unknown>, text: content[0]!.text }
}

/** The same operation over the HTTP API: its status and body. */
export async function http (app: FastifyInstance, token: string, method: 'GET' | 'POST', url: string, input: Record<string, unknown> = {}) {
  const response = await app.inject({
    method,
    url: `/api/external/v1/${url}`,
    headers: { authorization: `Bearer ${token}` },
    ...(method === 'GET' ? { query: input as Record<string, string> } : { payload: input })
  })
  return { status: response.statusCode, body: response.json<Record<string, unknown>>() }
}
