// The two statements of a delivery attempt (src/webhooks/deliver.ts): the one that
// finds what to send, and the one that records how it went. Both go by the attempt
// number a job carries: a job whose attempt was already made (a duplicate, or one
// run again after its worker was taken for dead) finds nothing and records nothing.
// And the two of the sweep (src/webhooks/sweep.ts): the pending deliveries no job
// will attempt again, and the record of their lost attempts.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { DELIVERY_QUEUE, queueDeliveries } from '../db/jobs.js'
import type { Database } from '../db/types.js'

const FIND = (db: Kysely<Database>, v: { deliveryId: string, attempt: number }) => db
  .selectFrom('webhook_deliveries as d')
  .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
  .where('d.id', '=', sql<string>`${v.deliveryId}::uuid`)
  .where('d.status', '=', 'pending')
  .where('d.attempts', '=', sql<number>`${v.attempt}::int - 1`)
  .where('w.enabled', '=', true)
  .select([
    'd.id', 'd.webhook_id', 'd.event_id', 'd.event_type', 'd.payload', 'd.trace_parent', 'w.url', 'w.secret',
    // A rotated secret signs too, as a second signature, until it expires.
    sql<string | null>`CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END`.as('previous_secret')
  ])

export type PendingDelivery = NonNullable<Awaited<ReturnType<ReturnType<typeof FIND>['executeTakeFirst']>>>

/**
 * The delivery a job's attempt is for, with its endpoint: only while the delivery
 * is pending with exactly the attempts before this one made, and its endpoint
 * enabled. Otherwise null: the job has nothing to do.
 */
export async function findPendingDelivery (db: Kysely<Database>, deliveryId: string, attempt: number): Promise<PendingDelivery | null> {
  return await FIND(db, { deliveryId, attempt }).executeTakeFirst() ?? null
}

/** How an attempt ended, for the record. */
export interface AttemptRecord {
  deliveryId: string
  attempt: number
  statusCode: number | null
  error: string | null
  durationMs: number
  /**
   * `delivered`; `retry` in `retryInMs`; or `failed` for good, which disables the
   * endpoint with `disableReason`: at once when it is `gone` (410), and when the
   * schedule is `exhausted` only if none of its deliveries got through since this
   * one was made.
   */
  outcome: 'delivered' | 'retry' | 'failed'
  retryInMs: number | null
  disable: 'gone' | 'exhausted' | null
  disableReason: string | null
}

const RECORD = (db: Kysely<Database>, v: AttemptRecord) => db
  .with('input', (qb) => qb.selectNoFrom([
    sql<string>`${v.deliveryId}::uuid`.as('delivery_id'),
    sql<number>`${v.attempt}::int`.as('attempt'),
    sql<string>`${v.outcome}::text`.as('outcome'),
    sql<string | null>`${v.disable}::text`.as('disable'),
    sql<string | null>`${v.disableReason}::text`.as('reason')
  ]))
  // Compare-and-set on the attempts made: of two runs of one attempt only one records.
  .with('recorded', (qb) => qb.updateTable('webhook_deliveries as d')
    .from('input as i')
    .whereRef('d.id', '=', 'i.delivery_id')
    .where('d.status', '=', 'pending')
    .where((eb) => eb('d.attempts', '=', sql<number>`i.attempt - 1`))
    .set({
      status: sql`CASE i.outcome WHEN 'retry' THEN 'pending' ELSE i.outcome END`,
      attempts: sql`i.attempt`,
      last_attempt_at: sql`now() - ${v.durationMs}::int * interval '1 millisecond'`,
      last_status_code: sql`${v.statusCode}::int`,
      last_error: sql`${v.error}::text`,
      last_duration_ms: sql`${v.durationMs}::int`,
      next_attempt_at: sql`CASE WHEN i.outcome = 'retry' THEN now() + ${v.retryInMs}::int * interval '1 millisecond' END`,
      delivered_at: sql`CASE WHEN i.outcome = 'delivered' THEN now() END`
    })
    .returning(['d.id', 'd.webhook_id', 'd.inserted_at', 'd.next_attempt_at', 'i.attempt', 'i.disable', 'i.reason']))
  // The next attempt's job, in the same statement: a retry recorded is a retry queued.
  .with('retry', (qb) => qb.selectFrom('recorded as r')
    .where('r.next_attempt_at', 'is not', null)
    .select(['r.id as delivery_id', sql<number>`r.attempt + 1`.as('attempt'), 'r.next_attempt_at as start_after']))
  .with('retry_jobs', (qb) => queueDeliveries(qb, 'retry'))
  .with('disabled', (qb) => qb.updateTable('webhooks as w')
    .from('recorded as r')
    .whereRef('w.id', '=', 'r.webhook_id')
    .where('r.reason', 'is not', null)
    .where('w.enabled', '=', true)
    .where((eb) => eb.or([
      eb('r.disable', '=', 'gone'),
      eb.not(eb.exists(eb.selectFrom('webhook_deliveries as x')
        .select(sql.lit(1).as('one'))
        .whereRef('x.webhook_id', '=', 'w.id')
        .whereRef('x.delivered_at', '>=', 'r.inserted_at')))
    ]))
    .set({ enabled: false, disabled_reason: sql`r.reason`, disabled_at: sql`now()` })
    .returning('w.id'))
  // A disabled endpoint is sent nothing more: its other deliveries waiting are canceled.
  .with('canceled', (qb) => qb.updateTable('webhook_deliveries as c')
    .from('disabled')
    .whereRef('c.webhook_id', '=', 'disabled.id')
    .where('c.status', '=', 'pending')
    .where('c.id', '<>', sql<string>`${v.deliveryId}::uuid`)
    .set({ status: 'canceled', next_attempt_at: null })
    .returning('c.id'))
  .selectNoFrom((eb) => [
    eb.selectFrom('recorded').select(sql<number>`count(*)::int`.as('n')).$asScalar().$notNull().as('recorded'),
    eb.selectFrom('recorded').select('recorded.next_attempt_at').$asScalar().as('next_attempt_at'),
    eb.selectFrom('disabled').select(sql<number>`count(*)::int`.as('n')).$asScalar().$notNull().as('disabled'),
    eb.selectFrom('canceled').select(sql<number>`count(*)::int`.as('n')).$asScalar().$notNull().as('canceled')
  ])

export type RecordedAttempt = NonNullable<Awaited<ReturnType<ReturnType<typeof RECORD>['executeTakeFirst']>>>

/**
 * Records an attempt, with what follows from it, in one statement: the delivery's
 * state and last attempt, the next attempt's job, the endpoint disabled and its
 * waiting deliveries canceled. `recorded` is 0 when another run of this attempt
 * recorded first.
 */
export async function recordAttempt (db: Kysely<Database>, record: AttemptRecord): Promise<RecordedAttempt> {
  return await RECORD(db, record).executeTakeFirstOrThrow()
}

/**
 * Whether the job that makes a pending delivery's next attempt (`delivery`: the
 * alias of its row) will still run: created, waiting for a retry, or active,
 * unless it is past its expiry with the job engine's retries spent (pg-boss fails
 * it at its next maintenance). Found through the job table's index on the
 * delivery id (db/jobs.ts).
 */
export function liveJobOf (delivery: string): RawBuilder<boolean> {
  const id = sql.ref(`${delivery}.id`)
  const attempts = sql.ref(`${delivery}.attempts`)
  return sql<boolean>`EXISTS (SELECT 1 FROM pgboss.job AS j
    WHERE j.name = ${sql.lit(DELIVERY_QUEUE)} AND j.data->>'delivery_id' = ${id}::text
      AND j.data->'attempt' = to_jsonb(${attempts} + 1)
      AND (j.state < 'active' OR (j.state = 'active' AND (j.retry_count < j.retry_limit OR j.started_on + j.expire_in > now()))))`
}

const STRANDED = (db: Kysely<Database>, v: { limit: number }) => db
  .selectFrom('webhook_deliveries as d')
  .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
  .where('d.status', '=', 'pending')
  .where('w.enabled', '=', true)
  .where((eb) => eb.not(liveJobOf('d')))
  .select(['d.id', 'd.webhook_id', 'd.attempts'])
  .orderBy('d.id')
  .limit(v.limit)

export type StrandedDelivery = Awaited<ReturnType<ReturnType<typeof STRANDED>['execute']>>[number]

/**
 * Pending deliveries of enabled endpoints whose next attempt has no job that will
 * run (liveJobOf): stranded, as when the job engine spent a job's retries on a
 * worker that crashed mid-attempt each time. Oldest first, at most `limit`.
 */
export async function findStranded (db: Kysely<Database>, limit: number): Promise<StrandedDelivery[]> {
  return await STRANDED(db, { limit }).execute()
}

/** What becomes of a stranded delivery: its lost attempt recorded, and the next one queued after `retryInMs`, or none. */
export interface StrandedVerdict {
  deliveryId: string
  /** The attempts the delivery had when it was found stranded: the record is made only if it still has them. */
  attempts: number
  /** Null: the retry schedule has no step left, and the delivery fails. */
  retryInMs: number | null
}

const SWEEP = (db: Kysely<Database>, v: { deliveryIds: string[], attempts: number[], retryInMs: Array<number | null>, error: string }) => db
  // One row per verdict: set-returning functions in one select list go in step.
  .with('input', (qb) => qb.selectNoFrom([
    sql<string>`unnest(${v.deliveryIds}::uuid[])`.as('delivery_id'),
    sql<number>`unnest(${v.attempts}::int[])`.as('attempts'),
    sql<number | null>`unnest(${v.retryInMs}::int[])`.as('retry_in_ms')
  ]))
  // Compare-and-set on the attempts, and stranded still (its job may have run
  // meanwhile, or another process swept it): only then is the attempt taken for lost.
  .with('swept', (qb) => qb.updateTable('webhook_deliveries as d')
    .from('input as i')
    .whereRef('d.id', '=', 'i.delivery_id')
    .where('d.status', '=', 'pending')
    .whereRef('d.attempts', '=', 'i.attempts')
    .where((eb) => eb.not(liveJobOf('d')))
    .set({
      status: sql`CASE WHEN i.retry_in_ms IS NULL THEN 'failed' ELSE 'pending' END`,
      attempts: sql`i.attempts + 1`,
      last_attempt_at: sql`now()`,
      last_status_code: null,
      last_error: sql`${v.error}::text`,
      last_duration_ms: null,
      next_attempt_at: sql`now() + i.retry_in_ms * interval '1 millisecond'`
    })
    .returning(['d.id', 'd.attempts', 'd.next_attempt_at', 'd.status']))
  .with('retry', (qb) => qb.selectFrom('swept as s')
    .where('s.next_attempt_at', 'is not', null)
    .select(['s.id as delivery_id', sql<number>`s.attempts + 1`.as('attempt'), 's.next_attempt_at as start_after']))
  .with('retry_jobs', (qb) => queueDeliveries(qb, 'retry'))
  .selectFrom('swept')
  .select(['swept.id', 'swept.status', 'swept.next_attempt_at'])

export type SweptDelivery = Awaited<ReturnType<ReturnType<typeof SWEEP>['execute']>>[number]

/**
 * Records each stranded delivery's lost attempt in one statement (no outcome is
 * known: `error` says so) and queues the next attempt's job, or fails the delivery
 * when its retry schedule is spent. A delivery no longer stranded as it was found
 * is left alone.
 */
export async function sweepStranded (db: Kysely<Database>, verdicts: StrandedVerdict[], error: string): Promise<SweptDelivery[]> {
  if (verdicts.length === 0) return []
  return await SWEEP(db, {
    deliveryIds: verdicts.map((v) => v.deliveryId),
    attempts: verdicts.map((v) => v.attempts),
    retryInMs: verdicts.map((v) => v.retryInMs),
    error
  }).execute()
}
