// The trace a delivery belongs to: the W3C `traceparent` of the request whose
// change queued it, when that request was traced (src/tracing/). The delivery's
// attempts are spans of that trace, so an operator (and a receiver that traces)
// follows a change from its request to every endpoint it reached. Null when
// tracing was off.
import type { Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('trace_parent', 'text').execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('trace_parent').execute()
}
