// Secret keys the service signs with (page cursors), made once by the database
// itself so that every instance on it shares them without configuration.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('signing_keys')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('key', 'bytea', (c) => c.notNull().check(sql`octet_length(key) >= 32`))
    .addColumn('inserted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  // gen_random_uuid() draws on the server's strong random source: two give 244 random bits.
  await sql`INSERT INTO signing_keys (name, key)
    VALUES ('cursors', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'))`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('signing_keys').execute()
}
