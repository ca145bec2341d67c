// Access to a space, as Operately gives it: each member of a space has a level of
// their own on it (Operately's space members' bindings), and the space gives the
// members of its company a level (its `company_permissions`, no access unless
// set). Company admins have full access to every space of their company
// (src/projects/space-access.ts). Creating a project needs edit access to its
// space, moving one view access to the target space.
//
// Members so far could edit in their spaces (they could create there in
// Operately's terms), so existing memberships keep edit access; a space gives its
// company no access until told otherwise, Operately's default. The columns take
// the access_level domain of the projects' levels (0, 10, 40, 70, 100).
import { sql, type Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE space_members ADD COLUMN access_level access_level NOT NULL DEFAULT 70`.execute(db)
  await sql`ALTER TABLE spaces ADD COLUMN company_access access_level NOT NULL DEFAULT 0`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE space_members DROP COLUMN access_level`.execute(db)
  await sql`ALTER TABLE spaces DROP COLUMN company_access`.execute(db)
}
