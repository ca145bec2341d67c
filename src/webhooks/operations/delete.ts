// POST /api/external/v1/webhooks/delete
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { deleteWebhook } from '../query.js'
import { DeletedResponseSchema, WebhookIdBodySchema } from '../schemas.js'
import { invalidExample } from '../../http/responses.js'
import { done, webhookId, ADMINS_ONLY, mutation } from '../common.js'

const deleteOperation: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/delete', {
    schema: {
      operationId: 'deleteWebhook',
      tags: ['webhooks'],
      summary: 'Delete a webhook endpoint',
      description: 'Deletes an endpoint and its deliveries; no further attempt is made. An unknown id, or one of ' +
        `another company's, is 404. ${ADMINS_ONLY} Needs a write token.`,
      security: [{ bearerAuth: [] }],
      body: WebhookIdBodySchema,
      response: { 200: DeletedResponseSchema, ...mutation, 400: invalidExample('/id', 'must not be blank') }
    }
  }, async (request) => {
    done(await deleteWebhook(fastify.db, request.caller.personId, webhookId(request.body.id, '/id')))
    return {}
  })
}

export default deleteOperation
