// POST /api/external/v1/webhooks/create
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createWebhook, WEBHOOKS_PER_COMPANY } from '../query.js'
import { invalidInput } from '../../errors.js'
import { toWebhook } from '../presenter.js'
import { CreateWebhookBodySchema, WEBHOOK_EVENTS, WebhookWithSecretResponseSchema } from '../schemas.js'
import { checkWebhookUrl, TargetRefused } from '../targets.js'
import { newWebhookSecret } from '../secrets.js'
import { invalidExample } from '../../http/responses.js'
import { wellFormed } from '../../http/input.js'
import { done, ADMINS_ONLY, NOTHING, mutation } from '../common.js'

const createOperation: FastifyPluginAsyncTypebox<{ allowPrivateTargets: boolean }> = async (fastify, { allowPrivateTargets }) => {
  const policy = { allowPrivate: allowPrivateTargets }
  fastify.post('/create', {
    schema: {
      operationId: 'createWebhook',
      tags: ['webhooks'],
      summary: 'Create a webhook endpoint',
      description: 'Registers an endpoint that receives the company\'s events, signed per Standard Webhooks ' +
        '(`webhook-id`, `webhook-timestamp`, `webhook-signature`). `events` defaults to all of ' +
        `${WEBHOOK_EVENTS.map((e) => `\`${e}\``).join(' and ')}. The URL must be https on a public address: ` +
        'loopback, private, link-local, unique-local, carrier-grade NAT, multicast and reserved addresses are ' +
        'refused (400), for an IP in the URL and for every address its name resolves to now; each delivery checks ' +
        'again. A host is judged as DNS reads it: in lower case, international names in their ASCII form, without ' +
        'one trailing dot (`localhost.` is localhost). Port 0 is refused. The answer holds the signing secret, shown this once. At most ' +
        `${WEBHOOKS_PER_COMPANY} per company. ${ADMINS_ONLY} Needs a write token.`,
      security: [{ bearerAuth: [] }],
      body: CreateWebhookBodySchema,
      response: { 200: WebhookWithSecretResponseSchema, ...mutation, 404: NOTHING, 400: invalidExample('/url', 'must be an https URL') }
    }
  }, async (request) => {
    const { body } = request
    // Stored as sent: well-formed Unicode, as every stored string (http/input.ts).
    const description = wellFormed(body.description ?? '', '/description')
    let url: URL
    try {
      url = await checkWebhookUrl(body.url, policy)
    } catch (error) {
      if (error instanceof TargetRefused) throw invalidInput('/url', error.message)
      throw error
    }
    const secret = newWebhookSecret()
    const webhook = done(await createWebhook(fastify.db, request.caller.personId, {
      url: url.href,
      events: body.events ?? [...WEBHOOK_EVENTS],
      description,
      secret
    }))
    return { webhook: toWebhook(webhook), secret }
  })
}

export default createOperation
