// A row's default id, time-ordered (migrations/20261130000000_time_ordered_ids.ts),
// made by an expression the planner writes into the statement, not by a call.
//
// The default was time_ordered_uuid(uuid_send(gen_random_uuid())): a SQL function
// whose argument is volatile and used three times in its body, so PostgreSQL cannot
// write the body in place of the call (it would draw three UUIDs) and runs it as a
// function: before PostgreSQL 18 that parses, analyses and plans its body again at
// every statement that inserts such a row. Measured on PostgreSQL 15, 20,000 inserts
// of one row each: 48 to 79 µs an insert with that default, 8.4 µs with this one,
// 4.4 µs with gen_random_uuid() alone; under the bench's renames the call was 8.7 %
// of PostgreSQL's CPU (perf, sampling every backend).
//
// time_ordered_uuid() draws one UUID (version 4) and lays over its first 8 bytes
// the statement's time: its milliseconds in the first 48 bits, the version (7),
// then the fraction of the millisecond in 12 bits (RFC 9562, section 6.2, method 3,
// as PostgreSQL 18's uuidv7() does). The last 8 bytes stay as drawn: the variant
// (10) and 62 random bits. Its body is one expression of no argument, declared as
// volatile as it is, so it is inlined wherever it is used.
//
// time_ordered_uuid(random) stays: a description change gives it the random bits
// of each notification (db/project-mutations.ts), and it is inlined there already,
// its argument not being volatile.
import { sql, type Kysely } from 'kysely'

const TABLES = ['activities', 'notifications', 'webhook_deliveries'] as const

// The statement's time in 1/4096 ms: the milliseconds, then the 12 bits of their fraction.
const TICKS = 'floor(extract(epoch FROM statement_timestamp()) * 4096000)::int8'

export async function up (db: Kysely<any>): Promise<void> {
  // Bytes 1 to 8: the milliseconds (48 bits), 0111 (the version), the fraction (12 bits).
  await sql.raw(`CREATE FUNCTION time_ordered_uuid() RETURNS uuid
    LANGUAGE sql VOLATILE PARALLEL SAFE
    AS $$ SELECT encode(overlay(uuid_send(gen_random_uuid())
      PLACING int8send(((${TICKS} & -4096) << 4) | 28672 | (${TICKS} & 4095)) FROM 1 FOR 8), 'hex')::uuid $$`).execute(db)
  await sql`COMMENT ON FUNCTION time_ordered_uuid() IS
    'A UUID of version 7: the statement''s time in ms, the version, the fraction of the ms in 12 bits, then the variant and 62 random bits'`.execute(db)
  for (const table of TABLES) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN id SET DEFAULT time_ordered_uuid()`.execute(db)
  }
}

export async function down (db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`ALTER TABLE ${sql.table(table)} ALTER COLUMN id SET DEFAULT time_ordered_uuid(uuid_send(gen_random_uuid()))`.execute(db)
  }
  await sql`DROP FUNCTION time_ordered_uuid()`.execute(db)
}
