// POST /api/external/v1/webhooks/rotate_secret
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { rotateWebhookSecret } from '../query.js'
import { toWebhook } from '../presenter.js'
import { WebhookIdBodySchema, WebhookWithSecretResponseSchema } from '../schemas.js'
import { newWebhookSecret } from '../secrets.js'
import { invalidExample } from '../../http/responses.js'
import { done, webhookId, ADMINS_ONLY, mutation } from '../common.js'

const rotateSecretOperation: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/rotate_secret', {
    schema: {
      operationId: 'rotateWebhookSecret',
      tags: ['webhooks'],
      summary: "Rotate a webhook endpoint's secret",
      description: 'Gives the endpoint a new signing secret, shown this once. For 24 hours every request is signed ' +
        'with both (two `v1,` signatures), so the receiver can switch without losing an event; a secret rotated ' +
        `away before that stops at once. ${ADMINS_ONLY} Needs a write token.`,
      security: [{ bearerAuth: [] }],
      body: WebhookIdBodySchema,
      response: { 200: WebhookWithSecretResponseSchema, ...mutation, 400: invalidExample('/id', 'must not be blank') }
    }
  }, async (request) => {
    const secret = newWebhookSecret()
    const webhook = done(await rotateWebhookSecret(fastify.db, request.caller.personId, webhookId(request.body.id, '/id'), secret))
    return { webhook: toWebhook(webhook), secret }
  })
}

export default rotateSecretOperation
