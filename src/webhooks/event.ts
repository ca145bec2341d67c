// A webhook event's request body, from the payload its change stored: the same
// public ids the API answers with, keys in a fixed order, so every attempt of a
// delivery sends the same bytes (and each endpoint of a change the same body).
import { shortId, sluggedId } from '../ids.js'
import type { WebhookEvent } from '../db/types.js'

/** An event with a change of type C: what is stored (C as stored) and what is sent. */
interface Event<C> {
  type: WebhookEvent
  timestamp: string
  data: {
    project: { id: string, name: string }
    company: { id: string, name: string }
    actor: { id: string, full_name: string }
    change: C
  }
}

/** What a change's statement stores (src/db/project-mutations.ts): ids as stored. */
export type StoredEvent = Event<Record<string, unknown>>

export type EventChange =
  | { old_name: string, new_name: string }
  /** The new description; null with `description_omitted` when it is over 64 KiB. */
  | { description: string | null, description_omitted: boolean, description_bytes: number }
  /** Every other event's change, stored as it is sent (its ids already public). */
  | Record<string, unknown>

/** The request body sent to every endpoint, on every attempt. */
export type EventBody = Event<EventChange>

/** The `webhook-id` of an event: its public id, the same on every attempt and every endpoint. */
export function eventMessageId (eventId: string): string {
  return shortId(eventId)
}

function change (type: WebhookEvent, stored: Record<string, unknown>): EventChange {
  if (type === 'project.renamed') {
    return { old_name: String(stored.old_name), new_name: String(stored.new_name) }
  }
  if (type !== 'project.description_changed') return stored
  const description = stored.description
  return {
    description: typeof description === 'string' ? description : null,
    description_omitted: stored.description_omitted === true,
    description_bytes: Number(stored.description_bytes)
  }
}

/** The event as its receivers get it. */
export function toEventBody (stored: StoredEvent): EventBody {
  const { project, company, actor } = stored.data
  return {
    type: stored.type,
    timestamp: new Date(stored.timestamp).toISOString(),
    data: {
      // The project's id as the API gives it after the change: slugged by its new name.
      project: { id: sluggedId(project.id, project.name), name: project.name },
      company: { id: shortId(company.id), name: company.name },
      actor: { id: shortId(actor.id), full_name: actor.full_name },
      change: change(stored.type, stored.data.change)
    }
  }
}

/** The request body: the event as JSON text. */
export function eventBodyText (stored: StoredEvent): string {
  return JSON.stringify(toEventBody(stored))
}
