// Transport basics for a JSON API: helmet's headers, no caching of answers that
// depend on who asks, and the request id handed back so a client can quote it.
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'

export default fp(async (fastify) => {
  await fastify.register(helmet, { global: true })
  fastify.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
    // Routes that may be cached (the static docs) say so themselves.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
  })
}, { name: 'security' })
