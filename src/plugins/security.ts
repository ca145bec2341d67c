// Transport basics for a JSON API: helmet's headers, no caching of answers that
// depend on who asks, the request id handed back so a client can quote it, and
// connections closed behind the last answers of a shutdown.
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'

export default fp(async (fastify) => {
  await fastify.register(helmet, { global: true })
  // While shutting down, requests already on an open connection are still served
  // (the database closes after the server), and each answer asks the client to
  // reconnect, so no kept-alive connection holds the shutdown up to its deadline.
  let closing = false
  fastify.addHook('preClose', async () => { closing = true })
  fastify.addHook('onSend', async (request, reply) => {
    if (closing) reply.header('connection', 'close')
    reply.header('x-request-id', request.id)
    // Routes that may be cached (the static docs) say so themselves.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
  })
}, { name: 'security' })
