// GET /api/external/v1/webhooks/list_deliveries
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { listDeliveries } from '../query.js'
import { toDelivery } from '../presenter.js'
import { DELIVERY_PAGE, DeliveryListResponseSchema, ListDeliveriesQuerySchema } from '../schemas.js'
import { invalidExample } from '../../http/responses.js'
import { pageParameter } from '../../http/paging.js'
import { done, webhookId, ADMINS_ONLY, query } from '../common.js'

const listDeliveriesOperation: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/list_deliveries', {
    schema: {
      operationId: 'listWebhookDeliveries',
      tags: ['webhooks'],
      summary: "List a webhook endpoint's deliveries",
      description: 'The endpoint\'s latest deliveries, newest first: the event (its id is the `webhook-id` the receiver ' +
        'got) and type, the status, attempts, the last attempt\'s status code or error and duration, the next ' +
        'attempt and when it was delivered. `stranded` counts the endpoint\'s pending deliveries (of all, not only ' +
        'this page) that no job will attempt again, as when a worker crashed mid-attempt each time the job engine ' +
        'retried: each delivering process takes them up at start and every minute, records the lost attempt and ' +
        'queues the next (or fails the delivery when its retries are spent). ' +
        `\`limit\` 1 to ${DELIVERY_PAGE.max} (default ${DELIVERY_PAGE.default}). ${ADMINS_ONLY}`,
      security: [{ bearerAuth: [] }],
      querystring: ListDeliveriesQuerySchema,
      response: { 200: DeliveryListResponseSchema, ...query, 400: invalidExample('/webhook_id', 'must not be blank') }
    }
  }, async (request) => {
    const id = webhookId(request.query.webhook_id, '/webhook_id')
    const limit = pageParameter(request.query.limit, '/limit', DELIVERY_PAGE)
    const { deliveries, stranded } = done(await listDeliveries(fastify.db, request.caller.personId, id, limit))
    return { deliveries: deliveries.map(toDelivery), stranded }
  })
}

export default listDeliveriesOperation
