// /api/external/v1/webhooks/*: a company's webhook endpoints, for its admins only.
// Anyone else gets 403 whatever the id (they may not learn which exist); an id of
// another company's endpoint is the same 404 as an unknown one. One file per operation.
import type { FastifyPluginAsync } from 'fastify'
import createOperation from './operations/create.js'
import listOperation from './operations/list.js'
import deleteOperation from './operations/delete.js'
import rotateSecretOperation from './operations/rotate-secret.js'
import listDeliveriesOperation from './operations/list-deliveries.js'

const webhooks: FastifyPluginAsync<{ allowPrivateTargets: boolean }> = async (fastify, { allowPrivateTargets }) => {
  fastify.addHook('onRequest', fastify.authenticate)
  await fastify.register(createOperation, { allowPrivateTargets })
  await fastify.register(listOperation)
  await fastify.register(deleteOperation)
  await fastify.register(rotateSecretOperation)
  await fastify.register(listDeliveriesOperation)
}

export default webhooks
