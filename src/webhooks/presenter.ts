// A webhook endpoint and a delivery as webhooks/* show them: public ids, never a secret.
import type { DeliveryRow, WebhookRow } from './query.js'
import { shortId } from '../ids.js'
import type { Delivery, Webhook } from './schemas.js'
import { iso, isoOrNull } from '../projects/presenter.js'

export function toWebhook (row: WebhookRow): Webhook {
  return {
    id: shortId(row.id),
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    inserted_at: iso(row.inserted_at)
  }
}

export function toDelivery (row: DeliveryRow): Delivery {
  return {
    id: shortId(row.id),
    event_id: shortId(row.event_id),
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_duration_ms: row.last_duration_ms,
    last_attempt_at: isoOrNull(row.last_attempt_at),
    next_attempt_at: isoOrNull(row.next_attempt_at),
    delivered_at: isoOrNull(row.delivered_at),
    inserted_at: iso(row.inserted_at)
  }
}
