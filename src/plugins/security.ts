// The security headers of every answer: helmet's, and no caching of answers that
// depend on who asks. (Answers given before routing carry the same headers:
// plugins/transport.ts.)
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'

export default fp(async (fastify) => {
  await fastify.register(helmet, { global: true })
  fastify.addHook('onSend', async (_request, reply) => {
    // Routes that may be cached (the static docs) say so themselves.
    if (!reply.hasHeader('cache-control')) reply.cacheControl('no-store')
  })
}, { name: 'security' })
