// A company's general space: the company-wide space Operately creates with every
// company ("General"), which companies/get answers for include_general_space and
// which people added by the operator CLI join. Null for a company without one
// (the demo's); the space must be the company's own.
import { sql, type Kysely } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('companies')
    .addColumn('general_space_id', 'uuid')
    .execute()
  // Composite, so that the space is of this company; deleting the space clears only the column.
  await sql`ALTER TABLE companies ADD CONSTRAINT companies_general_space_fkey
    FOREIGN KEY (general_space_id, id) REFERENCES spaces (id, company_id) ON DELETE SET NULL (general_space_id)`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('companies').dropColumn('general_space_id').execute()
}
