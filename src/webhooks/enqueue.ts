// A change's webhook event, made into one delivery per enabled endpoint of the
// company that takes its type, each with the job that carries its first attempt
// (the outbox: db/jobs.ts), in the change's transaction, with the change's trace.
import { sql, type Transaction } from 'kysely'
import { queueDeliveries } from '../db/jobs.js'
import type { Database, WebhookEvent } from '../db/types.js'
import { activeTraceParent } from '../tracing/context.js'

export interface EventToQueue {
  companyId: string
  /** The activity the event tells of: its id is the event's. */
  eventId: string
  type: WebhookEvent
  /** What the delivery stores and webhooks/event.ts sends. */
  payload: Record<string, unknown>
}

/** Queues the event for every endpoint that takes it; how many deliveries were queued. */
export async function enqueueEvent (trx: Transaction<Database>, event: EventToQueue): Promise<number> {
  const rows = await trx
    .with('deliveries', (qb) => qb.insertInto('webhook_deliveries')
      .columns(['webhook_id', 'event_id', 'event_type', 'payload', 'next_attempt_at', 'trace_parent'])
      .expression((eb) => eb.selectFrom('webhooks as w')
        .where('w.company_id', '=', event.companyId)
        .where('w.enabled', '=', true)
        .where(sql<boolean>`${event.type} = ANY(w.events)`)
        .select([
          'w.id as webhook_id',
          sql<string>`${event.eventId}::uuid`.as('event_id'),
          sql<WebhookEvent>`${event.type}`.as('event_type'),
          sql<string>`${JSON.stringify(event.payload)}::jsonb`.as('payload'),
          sql<Date>`now()`.as('next_attempt_at'),
          // The change's request, when traced: the attempts are spans of its trace.
          sql<string | null>`${activeTraceParent()}::text`.as('trace_parent')
        ]))
      .returning(['webhook_deliveries.id as delivery_id', sql.lit(1).as('attempt'), sql<Date>`now()`.as('start_after')]))
    .with('jobs', (qb) => queueDeliveries(qb, 'deliveries'))
    .selectFrom('deliveries')
    .select(sql<number>`count(*)::int`.as('queued'))
    .executeTakeFirstOrThrow()
  return rows.queued
}
