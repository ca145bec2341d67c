// A project's aggregate reads its subscription list twice: each subscription in
// order (inserted_at, id), and each contributor's subscription to tell whether
// they are subscribed. A list's rows are written one change at a time, so they lie
// scattered over the table's pages: through the unique index (list, person) each
// read visited a page per subscription and sorted them. This index holds every
// column those reads take, in the list's order: both become index-only scans of
// one leaf page, with no sort.
import { sql, type Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX subscriptions_list_order_idx ON subscriptions (subscription_list_id, inserted_at, id) INCLUDE (person_id, type, canceled)`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('subscriptions_list_order_idx').execute()
}
