// A change's webhook event, made into one delivery per enabled endpoint of the
// company that takes its type, each with the job that carries its first attempt
// (the outbox: db/jobs.ts), in the change's transaction, with the change's trace.
import { sql, type Transaction } from 'kysely'
import { queueDeliveries } from '../db/jobs.js'
import { statement } from '../db/statements.js'
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

const queueEvent = statement(['companyId', 'eventId', 'type', 'payload', 'traceParent'],
  (db, { companyId, eventId, type, payload, traceParent }: { companyId: string, eventId: string, type: string, payload: string, traceParent: string | null }) => db
    .with('deliveries', (qb) => qb.insertInto('webhook_deliveries')
      .columns(['webhook_id', 'event_id', 'event_type', 'payload', 'next_attempt_at', 'trace_parent'])
      .expression((eb) => eb.selectFrom('webhooks as w')
        .where('w.company_id', '=', companyId)
        .where('w.enabled', '=', true)
        .where(sql<boolean>`${type} = ANY(w.events)`)
        .select([
          'w.id as webhook_id',
          sql<string>`${eventId}::uuid`.as('event_id'),
          sql<WebhookEvent>`${type}`.as('event_type'),
          sql<string>`${payload}::jsonb`.as('payload'),
          sql<Date>`now()`.as('next_attempt_at'),
          sql<string | null>`${traceParent}::text`.as('trace_parent')
        ]))
      .returning(['webhook_deliveries.id as delivery_id', sql.lit(1).as('attempt'), sql<Date>`now()`.as('start_after')]))
    .with('jobs', (qb) => queueDeliveries(qb, 'deliveries'))
    .selectFrom('deliveries')
    .select(sql<number>`count(*)::int`.as('queued')))

/** Queues the event for every endpoint that takes it; how many deliveries were queued. */
export async function enqueueEvent (trx: Transaction<Database>, event: EventToQueue): Promise<number> {
  const [row] = await queueEvent(trx, {
    companyId: event.companyId,
    eventId: event.eventId,
    type: event.type,
    payload: JSON.stringify(event.payload),
    // The change's request, when traced: the attempts are spans of its trace.
    traceParent: activeTraceParent() ?? null
  })
  return row!.queued
}
