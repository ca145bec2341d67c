// A notification about a project tells of one of its activities, and keeps that
// activity's project and author (project_id, author_id) so that a page of
// notifications/list looks up neither the activity nor more than the project and
// the person it names. One foreign key now holds all three to the activity, MATCH
// FULL: a notification names an activity with its project and its author, the
// activity's own, or none of the three. It replaces a key on the activity alone
// and one on the project alone, which checked the same activity and project a
// second time for every notification and did not check that the two agree, nor
// the author (a CHECK only asked that it be there).
//
// Each key is a trigger call for every row written: a description change with a
// hundred subscribers writes a hundred notifications, and the 300 calls of the
// three keys took a third of its statement (npm run bench:explain: 33 % on
// PostgreSQL, 38 % on the embedded database); two keys make 200.
//
// A project deleted takes its activities with it (activities.project_id), and
// their notifications with them (this key). A notification of a project but of no
// activity cannot be held by the key: none is written by the service (only a
// description change notifies, with its activity); the migration names any that
// a hand made, rather than guess what they tell of.
import { sql, type Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  const { rows: [unheld] } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications
    WHERE num_nulls(activity_id, project_id, author_id) NOT IN (0, 3)`.execute(db)
  if (unheld!.n > 0) {
    throw new Error(`${unheld!.n} notification(s) name a project or an author without an activity (or an activity without them): ` +
      'give each its activity, or delete it, then migrate again (migrations/20261129100000_notification_activities.ts)')
  }
  await sql`ALTER TABLE activities ADD CONSTRAINT activities_id_project_id_author_id_key UNIQUE (id, project_id, author_id)`.execute(db)
  await sql`ALTER TABLE notifications
    DROP CONSTRAINT notifications_activity_id_fkey,
    DROP CONSTRAINT notifications_project_id_fkey,
    DROP CONSTRAINT notifications_author,
    ADD CONSTRAINT notifications_activity_fkey FOREIGN KEY (activity_id, project_id, author_id)
      REFERENCES activities (id, project_id, author_id) MATCH FULL ON DELETE CASCADE`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE notifications
    DROP CONSTRAINT notifications_activity_fkey,
    ADD CONSTRAINT notifications_activity_id_fkey FOREIGN KEY (activity_id) REFERENCES activities (id) ON DELETE CASCADE,
    ADD CONSTRAINT notifications_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE,
    ADD CONSTRAINT notifications_author CHECK (activity_id IS NULL OR author_id IS NOT NULL)`.execute(db)
  await sql`ALTER TABLE activities DROP CONSTRAINT activities_id_project_id_author_id_key`.execute(db)
}
