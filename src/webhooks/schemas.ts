// webhooks/*: a company's webhook endpoints and their deliveries.
import Type, { type Static } from 'typebox'
import { DIGITS, Id, Nullable, Shared, Timestamp } from '../schemas/common.js'
import { WEBHOOK_URL_MAX_LENGTH } from '../webhooks/targets.js'

const strict = { additionalProperties: false } as const

export const WEBHOOK_EVENTS = ['project.renamed', 'project.description_changed',
  'project.created', 'project.start_date_changed', 'project.due_date_changed', 'project.goal_changed',
  'project.moved', 'project.deleted',
  'project.champion_changed', 'project.reviewer_changed',
  'project.contributor_added', 'project.contributor_updated', 'project.contributor_removed',
  'project.paused', 'project.resumed', 'project.closed'] as const
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500
/** Deliveries webhooks/list_deliveries answers when none is asked for, and the most. */
export const DELIVERY_PAGE = { default: 50, max: 100 } as const

const EventSchema = Type.Enum([...WEBHOOK_EVENTS], { description: 'An event type' })

const EXAMPLE_WEBHOOK = {
  id: '4Yl7gDnh0qBbq8qkqWfSgS',
  url: 'https://hooks.example.com/projects',
  events: ['project.renamed', 'project.description_changed'],
  description: 'Team chat',
  enabled: true,
  disabled_reason: null,
  inserted_at: '2026-11-24T15:02:11.512Z'
}
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

export const WebhookSchema = Type.Object({
  id: Id,
  url: Type.String({ description: 'Where events are POSTed' }),
  events: Type.Array(EventSchema, { description: 'The event types it receives' }),
  description: Type.String({ description: 'What it is for' }),
  enabled: Type.Boolean({ description: 'false once the endpoint answered 410 Gone, or kept failing for a whole retry schedule' }),
  disabled_reason: Nullable(Type.String({ description: 'Why it was disabled' })),
  inserted_at: Timestamp
}, { ...strict, $id: 'Webhook', description: "An endpoint of the person's company that receives signed events", examples: [EXAMPLE_WEBHOOK] })

export type Webhook = Static<typeof WebhookSchema>

const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description: 'The signing secret (Standard Webhooks): shown this once; keep it where the receiver verifies signatures',
  examples: [EXAMPLE_SECRET]
})

export const CreateWebhookBodySchema = Type.Object({
  url: Type.String({
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    description: 'An https URL on a public address (not loopback, private, link-local or otherwise reserved)',
    examples: ['https://hooks.example.com/projects']
  }),
  events: Type.Optional(Type.Array(EventSchema, {
    minItems: 1, uniqueItems: true, description: 'Event types to receive; default: all of them', examples: [['project.renamed']]
  })),
  description: Type.Optional(Type.String({ maxLength: WEBHOOK_DESCRIPTION_MAX_LENGTH, description: 'What it is for (default empty)', examples: ['Team chat'] }))
}, { ...strict, examples: [{ url: 'https://hooks.example.com/projects', description: 'Team chat' }] })

export const WebhookWithSecretResponseSchema = Type.Object({
  webhook: Shared(WebhookSchema),
  secret: Secret
}, { ...strict, description: 'The endpoint and its signing secret, shown this once', examples: [{ webhook: EXAMPLE_WEBHOOK, secret: EXAMPLE_SECRET }] })

export const ListWebhooksQuerySchema = Type.Object({}, strict)

export const WebhookListResponseSchema = Type.Object({
  webhooks: Type.Array(Shared(WebhookSchema), { description: 'Oldest first' })
}, { ...strict, description: "The company's endpoints (never a secret)", examples: [{ webhooks: [EXAMPLE_WEBHOOK] }] })

export const WebhookIdBodySchema = Type.Object({
  id: Type.String({ description: 'A webhook of the company', examples: ['4Yl7gDnh0qBbq8qkqWfSgS'] })
}, { ...strict, examples: [{ id: '4Yl7gDnh0qBbq8qkqWfSgS' }] })

export const DeletedResponseSchema = Type.Object({}, { ...strict, description: 'Deleted', examples: [{}] })

export const ListDeliveriesQuerySchema = Type.Object({
  webhook_id: Type.String({ description: 'A webhook of the company', examples: ['4Yl7gDnh0qBbq8qkqWfSgS'] }),
  limit: Type.Optional(Type.String({ pattern: DIGITS, description: `Deliveries to answer, 1 to ${DELIVERY_PAGE.max} (default ${DELIVERY_PAGE.default})`, examples: ['20'] }))
}, strict)

export const DeliverySchema = Type.Object({
  id: Id,
  event_id: Type.String({ description: 'The event (the message id a receiver gets as `webhook-id`)' }),
  event_type: EventSchema,
  status: Type.Enum(['pending', 'delivered', 'failed', 'canceled'], {
    description: 'pending: attempts go on; delivered: a 2xx answered; failed: every attempt failed; canceled: the endpoint was disabled first'
  }),
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made so far' }),
  last_status_code: Nullable(Type.Integer({ description: "The last attempt's HTTP status" })),
  last_error: Nullable(Type.String({ description: 'Why the last attempt failed, when it got no HTTP answer or a non-2xx one' })),
  last_duration_ms: Nullable(Type.Integer({ description: 'How long the last attempt took' })),
  last_attempt_at: Nullable(Timestamp),
  next_attempt_at: Nullable(Timestamp),
  delivered_at: Nullable(Timestamp),
  inserted_at: Timestamp
}, { ...strict, $id: 'WebhookDelivery', description: 'One event on its way to one endpoint' })

export const DeliveryListResponseSchema = Type.Object({
  deliveries: Type.Array(Shared(DeliverySchema), { description: 'Newest first' }),
  stranded: Type.Integer({
    minimum: 0,
    description: "The endpoint's pending deliveries (of all, not only this page) that no job will attempt again " +
      '(their job ended without recording an outcome: a worker crashed mid-attempt each time it was retried); ' +
      'the delivering processes take them up at start and every minute'
  })
}, {
  ...strict,
  description: "An endpoint's latest deliveries",
  examples: [{
    deliveries: [{
      id: '2BZ1kDkrR3xoXyT6yN4h5s',
      event_id: '6Q9Tgb1lXpDq2wYt0pVdKa',
      event_type: 'project.renamed',
      status: 'pending',
      attempts: 1,
      last_status_code: 503,
      last_error: 'the endpoint answered 503',
      last_duration_ms: 41,
      last_attempt_at: '2026-11-24T15:02:11.730Z',
      next_attempt_at: '2026-11-24T15:02:16.730Z',
      delivered_at: null,
      inserted_at: '2026-11-24T15:02:11.512Z'
    }],
    stranded: 0
  }]
})

export type Delivery = Static<typeof DeliverySchema>
