// A page of notifications/list names each notification's author: the author of the
// activity it tells of. Looked up through the activity, that cost every page two
// lookups a notification (the activity, then the person); the author kept on the
// notification costs one. Activities are never changed once recorded, so the copy
// stays their author's. A notification with an activity must have its author: an
// insert that forgot it fails instead of listing the notification without one.
// No foreign key of its own: the activity's holds the same person, and a fourth
// check on every notification a description change writes (a hundred at a time)
// would cost the change more than it protects.
import { sql, type Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notifications').addColumn('author_id', 'uuid').execute()
  await sql`UPDATE notifications n SET author_id = a.author_id FROM activities a WHERE a.id = n.activity_id`.execute(db)
  await db.schema.alterTable('notifications')
    .addCheckConstraint('notifications_author', sql`activity_id IS NULL OR author_id IS NOT NULL`).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notifications').dropColumn('author_id').execute()
}
