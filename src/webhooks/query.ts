// A company's webhook endpoints, managed by its admins: each operation is one
// statement that checks that its person is an admin (of the company the endpoint
// is of), and does its work only then, so `admin` in the answer says which it was.
import { sql, type Kysely } from 'kysely'
import { jsonArrayFrom } from 'kysely/helpers/postgres'
import { liveJobOf } from './deliveries.js'
import type { Database, WebhookEvent } from '../db/types.js'

/** Endpoints one company may have: every change writes one delivery per endpoint. */
export const WEBHOOKS_PER_COMPANY = 20

/** A rotated secret keeps signing, as a second signature, this long. */
export const PREVIOUS_SECRET_HOURS = 24

const WEBHOOK_COLUMNS = ['w.id', 'w.url', 'w.events', 'w.description', 'w.enabled', 'w.disabled_reason', 'w.disabled_at', 'w.inserted_at'] as const

/** The caller, if an admin who is not suspended: the one check every operation here makes. */
function admin (db: Kysely<Database>, personId: string) {
  return db.selectFrom('people as me')
    .where('me.id', '=', personId)
    .where('me.is_admin', '=', true)
    .where('me.suspended_at', 'is', null)
    .select(['me.id', 'me.company_id'])
}

const CREATE = (db: Kysely<Database>, personId: string, v: { url: string, events: WebhookEvent[], description: string, secret: string }) => db
  .with('me', () => admin(db, personId))
  .with('room', (qb) => qb.selectFrom('me')
    .where((eb) => eb(eb.selectFrom('webhooks as w').whereRef('w.company_id', '=', 'me.company_id').select(sql<number>`count(*)::int`.as('n')), '<', WEBHOOKS_PER_COMPANY))
    .select(['me.id', 'me.company_id']))
  .with('made', (qb) => qb.insertInto('webhooks')
    .columns(['company_id', 'url', 'events', 'description', 'secret', 'created_by'])
    .expression((eb) => eb.selectFrom('room').select([
      'room.company_id', sql<string>`${v.url}::text`.as('url'), sql<WebhookEvent[]>`${v.events}::text[]`.as('events'),
      sql<string>`${v.description}::text`.as('description'), sql<string>`${v.secret}::text`.as('secret'), 'room.id'
    ]))
    .returningAll())
  .selectNoFrom((eb) => [
    eb.exists(eb.selectFrom('me').select(sql.lit(1).as('one'))).as('admin'),
    eb.exists(eb.selectFrom('room').select(sql.lit(1).as('one'))).as('room'),
    jsonArrayFrom(eb.selectFrom('made as w').select(WEBHOOK_COLUMNS)).as('webhooks')
  ])

type RowOf<Q extends (...args: any[]) => { executeTakeFirstOrThrow: () => Promise<unknown> }> = Awaited<ReturnType<ReturnType<Q>['executeTakeFirstOrThrow']>>

export type WebhookRow = RowOf<typeof LIST>['webhooks'][number]

export type Managed<T> = { outcome: 'forbidden' } | { outcome: 'not_found' } | { outcome: 'full' } | { outcome: 'done', value: T }

export async function createWebhook (db: Kysely<Database>, personId: string, input: {
  url: string, events: WebhookEvent[], description: string, secret: string
}): Promise<Managed<WebhookRow>> {
  const row = await CREATE(db, personId, input).executeTakeFirstOrThrow()
  if (row.admin !== true) return { outcome: 'forbidden' }
  const [made] = row.webhooks
  if (made === undefined) return { outcome: 'full' }
  return { outcome: 'done', value: made }
}

const LIST = (db: Kysely<Database>, personId: string) => db
  .with('me', () => admin(db, personId))
  .selectNoFrom((eb) => [
    eb.exists(eb.selectFrom('me').select(sql.lit(1).as('one'))).as('admin'),
    jsonArrayFrom(eb.selectFrom('webhooks as w')
      .innerJoin('me', 'me.company_id', 'w.company_id')
      .select(WEBHOOK_COLUMNS)
      .orderBy('w.inserted_at').orderBy('w.id')).as('webhooks')
  ])

/** The company's endpoints, oldest first. */
export async function listWebhooks (db: Kysely<Database>, personId: string): Promise<Managed<WebhookRow[]>> {
  const row = await LIST(db, personId).executeTakeFirstOrThrow()
  if (row.admin !== true) return { outcome: 'forbidden' }
  return { outcome: 'done', value: row.webhooks }
}

const DELETE = (db: Kysely<Database>, personId: string, v: { id: string }) => db
  .with('me', () => admin(db, personId))
  .with('gone', (qb) => qb.deleteFrom('webhooks')
    .using('me')
    .whereRef('webhooks.company_id', '=', 'me.company_id')
    .where('webhooks.id', '=', v.id)
    .returning('webhooks.id'))
  .selectNoFrom((eb) => [
    eb.exists(eb.selectFrom('me').select(sql.lit(1).as('one'))).as('admin'),
    eb.exists(eb.selectFrom('gone').select(sql.lit(1).as('one'))).as('deleted')
  ])

/** Deletes an endpoint of the person's company, with its deliveries: none is made after. */
export async function deleteWebhook (db: Kysely<Database>, personId: string, id: string): Promise<Managed<null>> {
  const row = await DELETE(db, personId, { id }).executeTakeFirstOrThrow()
  if (row.admin !== true) return { outcome: 'forbidden' }
  if (row.deleted !== true) return { outcome: 'not_found' }
  return { outcome: 'done', value: null }
}

const ROTATE = (db: Kysely<Database>, personId: string, v: { id: string, secret: string }) => db
  .with('me', () => admin(db, personId))
  .with('rotated', (qb) => qb.updateTable('webhooks as w')
    .from('me')
    .whereRef('w.company_id', '=', 'me.company_id')
    .where('w.id', '=', v.id)
    .set((eb) => ({
      previous_secret: eb.ref('w.secret'),
      previous_secret_expires_at: sql`now() + ${sql.lit(`${PREVIOUS_SECRET_HOURS} hours`)}::interval`,
      secret: sql`${v.secret}::text`
    }))
    .returningAll('w'))
  .selectNoFrom((eb) => [
    eb.exists(eb.selectFrom('me').select(sql.lit(1).as('one'))).as('admin'),
    jsonArrayFrom(eb.selectFrom('rotated as w').select(WEBHOOK_COLUMNS)).as('webhooks')
  ])

/**
 * Gives an endpoint a new secret; the one it replaces keeps signing, as a second
 * signature, for PREVIOUS_SECRET_HOURS (one rotated before that stops at once).
 */
export async function rotateWebhookSecret (db: Kysely<Database>, personId: string, id: string, secret: string): Promise<Managed<WebhookRow>> {
  const row = await ROTATE(db, personId, { id, secret }).executeTakeFirstOrThrow()
  if (row.admin !== true) return { outcome: 'forbidden' }
  const [rotated] = row.webhooks
  return rotated === undefined ? { outcome: 'not_found' } : { outcome: 'done', value: rotated }
}

const DELIVERIES = (db: Kysely<Database>, personId: string, v: { id: string, limit: number }) => db
  .with('me', () => admin(db, personId))
  .with('hook', (qb) => qb.selectFrom('webhooks as w')
    .innerJoin('me', 'me.company_id', 'w.company_id')
    .where('w.id', '=', v.id)
    .select(['w.id', 'w.enabled']))
  .selectNoFrom((eb) => [
    eb.exists(eb.selectFrom('me').select(sql.lit(1).as('one'))).as('admin'),
    eb.exists(eb.selectFrom('hook').select(sql.lit(1).as('one'))).as('found'),
    // Pending, of an enabled endpoint, and no job will attempt them again: what the sweep takes up (src/webhooks/sweep.ts).
    eb.selectFrom('webhook_deliveries as d')
      .innerJoin('hook', 'hook.id', 'd.webhook_id')
      .where('hook.enabled', '=', true)
      .where('d.status', '=', 'pending')
      .where((eb) => eb.not(liveJobOf('d')))
      .select(sql<number>`count(*)::int`.as('n')).$asScalar().$notNull().as('stranded'),
    jsonArrayFrom(eb.selectFrom('webhook_deliveries as d')
      .innerJoin('hook', 'hook.id', 'd.webhook_id')
      .select([
        'd.id', 'd.event_id', 'd.event_type', 'd.status', 'd.attempts', 'd.last_status_code', 'd.last_error',
        'd.last_duration_ms', 'd.last_attempt_at', 'd.next_attempt_at', 'd.delivered_at', 'd.inserted_at'
      ])
      .orderBy('d.inserted_at', 'desc').orderBy('d.id', 'desc')
      .limit(v.limit)).as('deliveries')
  ])

export type DeliveryRow = RowOf<typeof DELIVERIES>['deliveries'][number]

/** An endpoint's latest deliveries, newest first, and how many of all its deliveries are stranded. */
export async function listDeliveries (db: Kysely<Database>, personId: string, id: string, limit: number): Promise<Managed<{ deliveries: DeliveryRow[], stranded: number }>> {
  const row = await DELIVERIES(db, personId, { id, limit }).executeTakeFirstOrThrow()
  if (row.admin !== true) return { outcome: 'forbidden' }
  if (row.found !== true) return { outcome: 'not_found' }
  return { outcome: 'done', value: { deliveries: row.deliveries, stranded: row.stranded } }
}
