// Webhooks: a company's endpoints, and one delivery per event and endpoint. A
// delivery row is written by the very statement that makes the change (the
// outbox), together with the job that sends it; it then records every attempt.
import { type Kysely, sql } from 'kysely'

export async function up (db: Kysely<any>): Promise<void> {
  await db.schema.createTable('webhooks')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('company_id', 'uuid', (c) => c.notNull().references('companies.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', sql`text[]`, (c) => c.notNull().check(sql`cardinality(events) > 0`))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    // Signing secrets, `whsec_` and base64: the API shows a secret once, at creation or rotation.
    .addColumn('secret', 'text', (c) => c.notNull())
    // The secret a rotation replaced still signs (a second signature) until this time.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'timestamptz')
    .addColumn('created_by', 'uuid', (c) => c.references('people.id').onDelete('set null'))
    .addColumn('inserted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('webhooks_disabled', sql`enabled OR disabled_reason IS NOT NULL`)
    .addCheckConstraint('webhooks_previous_secret', sql`(previous_secret IS NULL) = (previous_secret_expires_at IS NULL)`)
    .execute()
  await db.schema.createIndex('webhooks_company_id_idx').on('webhooks').columns(['company_id', 'inserted_at']).execute()

  await db.schema.createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('webhook_id', 'uuid', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    // The event is the activity the change recorded: its id is the message id (`webhook-id`).
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('activities.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    // What the body is made from (ids as stored): the same body on every attempt.
    .addColumn('payload', 'jsonb', (c) => c.notNull().check(sql`jsonb_typeof(payload) = 'object'`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending')
      .check(sql`status IN ('pending', 'delivered', 'failed', 'canceled')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0).check(sql`attempts >= 0`))
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_duration_ms', 'integer')
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('inserted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('webhook_deliveries_event', ['webhook_id', 'event_id'])
    .execute()
  await db.schema.createIndex('webhook_deliveries_latest_idx').on('webhook_deliveries')
    .columns(['webhook_id', 'inserted_at', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_event_id_idx').on('webhook_deliveries').column('event_id').execute()
}

export async function down (db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute()
  await db.schema.dropTable('webhooks').execute()
}
