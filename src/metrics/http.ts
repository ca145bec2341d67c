// The API's part of the metrics: every answered request counted by its route
// template (request.routeOptions.url, never the URL sent), method and status,
// and the database the scrape-time gauges read. An MCP tool's inner request
// (http/dispatch.ts) is not counted again: its call is, as a tool call.
import fp from 'fastify-plugin'
import type { Db } from '../db/index.js'
import { isDispatched } from '../http/dispatch.js'
import { observeRequest, watchDatabase } from './registry.js'

export default fp<{ db: Db }>(async (fastify, { db }) => {
  const unwatch = watchDatabase(db)
  fastify.addHook('onClose', async () => { unwatch() })
  fastify.addHook('onResponse', async (request, reply) => {
    if (isDispatched(request)) return
    observeRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime)
  })
}, { name: 'metrics' })
