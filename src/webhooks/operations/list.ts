// GET /api/external/v1/webhooks/list
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { listWebhooks } from '../query.js'
import { toWebhook } from '../presenter.js'
import { ListWebhooksQuerySchema, WebhookListResponseSchema } from '../schemas.js'
import { done, ADMINS_ONLY, NOTHING, query } from '../common.js'

const listOperation: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/list', {
    schema: {
      operationId: 'listWebhooks',
      tags: ['webhooks'],
      summary: 'List webhook endpoints',
      description: `The company's endpoints, oldest first, never with a secret; a disabled one says why. ${ADMINS_ONLY}`,
      security: [{ bearerAuth: [] }],
      querystring: ListWebhooksQuerySchema,
      response: { 200: WebhookListResponseSchema, ...query, 404: NOTHING }
    }
  }, async (request) => ({ webhooks: done(await listWebhooks(fastify.db, request.caller.personId)).map(toWebhook) }))
}

export default listOperation
