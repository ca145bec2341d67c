// notifications/list reads one person's notifications, read ones too, newest first.
// The index of unread notifications cannot serve it, so without this one every
// page read the whole table, slower with every notification anyone received.
import type { Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('notifications_person_id_inserted_at_idx').on('notifications')
    .columns(['person_id', 'inserted_at desc', 'id desc']).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('notifications_person_id_inserted_at_idx').execute()
}
