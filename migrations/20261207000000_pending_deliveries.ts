// The pending deliveries of an endpoint, found without reading every delivery it
// ever had: the sweep for stranded deliveries (src/webhooks/sweep.ts) reads all
// of them every few minutes, and webhooks/list_deliveries counts an endpoint's
// stranded ones on every call. A delivery is pending for seconds (its first
// attempt) or for the hours its retries take, so the index holds few rows.
import { sql, type Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_pending_idx').on('webhook_deliveries')
    .column('webhook_id').where(sql.ref('status'), '=', 'pending').execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_pending_idx').execute()
}
