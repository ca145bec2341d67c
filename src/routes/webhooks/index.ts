// /api/external/v1/webhooks/*: a company's webhook endpoints, for its admins only.
// Anyone else gets 403 whatever the id (they may not learn which exist); an id of
// another company's endpoint is the same 404 as an unknown one.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, rotateWebhookSecret, WEBHOOKS_PER_COMPANY, type Managed } from '../../db/webhooks.js'
import { ApiError, invalidInput } from '../../errors.js'
import { decodeId } from '../../ids.js'
import { toDelivery, toWebhook } from '../../presenters/webhook.js'
import {
  CreateWebhookBodySchema, DELIVERY_PAGE, DeletedResponseSchema, DeliveryListResponseSchema, ListDeliveriesQuerySchema,
  ListWebhooksQuerySchema, WEBHOOK_EVENTS, WebhookIdBodySchema, WebhookListResponseSchema, WebhookWithSecretResponseSchema
} from '../../schemas/webhooks.js'
import { checkWebhookUrl, TargetRefused } from '../../webhooks/targets.js'
import { newWebhookSecret } from '../../webhooks/secrets.js'
import { invalidExample, mutationErrors, notFoundExample, nothingToFind, queryErrors } from '../../http/responses.js'
import { requireId, wellFormed } from '../../http/input.js'
import { pageParameter } from '../../http/paging.js'
import { ErrorSchema, Shared } from '../../schemas/common.js'

const forbidden = () => new ApiError(403, 'forbidden', "only the company's admins manage webhooks")
const notFound = () => new ApiError(404, 'not_found', 'webhook not found')

/** The value of a managed operation, or the error its outcome is. */
function done<T> (result: Managed<T>): T {
  switch (result.outcome) {
    case 'forbidden': throw forbidden()
    case 'not_found': throw notFound()
    case 'full': throw invalidInput('', `the company has ${WEBHOOKS_PER_COMPANY} webhooks already; delete one first`)
    case 'done': return result.value
  }
}

// An id that cannot be decoded names no webhook: it goes to the statement as the
// nil UUID, which matches none, so that the admin check still comes first.
const NO_ID = '00000000-0000-0000-0000-000000000000'

/** A webhook's id as a UUID (the nil UUID when it cannot be decoded). */
function webhookId (raw: string, path: string): string {
  return decodeId(requireId(raw, path)) ?? NO_ID
}

const ADMINS_ONLY = 'Company admins only: anyone else gets 403 `forbidden`.'

// This resource's 403 and 404, in the envelope, for the document.
const NOT_ADMIN = Shared(ErrorSchema, {
  description: "The person is not an admin of the company (`forbidden`), or a read-only token on a mutation (`read_only_token`).",
  examples: [forbidden().body()]
})
const NO_WEBHOOK = notFoundExample('webhook not found', "The webhook is unknown, its id cannot be decoded, or it is another company's: one body for all.")
const NOTHING = nothingToFind('it names no webhook')
const mutation = { ...mutationErrors, 403: NOT_ADMIN, 404: NO_WEBHOOK }
const query = { ...queryErrors, 403: NOT_ADMIN, 404: NO_WEBHOOK }


const webhooks: FastifyPluginAsyncTypebox<{ allowPrivateTargets: boolean }> = async (fastify, { allowPrivateTargets }) => {
  fastify.addHook('onRequest', fastify.authenticate)
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

export default webhooks
