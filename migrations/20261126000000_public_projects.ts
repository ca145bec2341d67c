// projects/list looks for the projects a person can see among those of their
// company, of their spaces, those they contribute to, and the public ones of any
// company, instead of judging every project in the database. The first three have
// their indexes; this one finds the public projects.
import { sql, type Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('projects_public_idx').on('projects')
    .column('id').where(sql.ref('public_access'), '>', 0).execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('projects_public_idx').execute()
}
