// The job engine, pg-boss, on this service's own database and connections: its
// schema is installed with the migrations, and a job is a row its queue table
// holds, so a statement that records a change can make the job that carries the
// change on in the same transaction (the outbox). pg-boss is pinned to one version
// (package.json): the columns below are that version's.
import { EventEmitter } from 'node:events'
import { CompiledQuery, sql, type Kysely, type QueryCreator } from 'kysely'
import PgBoss from 'pg-boss'
import { embeddedDatabase, type Db } from './index.js'
import type { Database } from './types.js'

export const JOB_SCHEMA = 'pgboss'

/** The queue of webhook deliveries: one job per attempt (src/webhooks/worker.ts). */
export const DELIVERY_QUEUE = 'webhook-delivery'

/**
 * A job left active by a worker that died (or hung past every timeout) is failed
 * after this long and run again: a delivery attempt takes at most 10 s to answer.
 * The queue's setting (WEBHOOKS_JOB_EXPIRY_SECONDS, see deliveryQueuePolicy).
 */
export const DELIVERY_JOB_EXPIRY_SECONDS = 60
/** Runs of one job after an expiry (a crash mid-attempt), half the expiry apart, doubling. */
export const DELIVERY_JOB_RETRIES = 5

/**
 * The delivery queue's crash recovery for a job expiry: a job run again waits
 * about half the expiry first (pg-boss doubles it on each further run).
 */
export function deliveryQueuePolicy (expirySeconds: number) {
  return {
    name: DELIVERY_QUEUE,
    policy: 'standard' as const,
    retryLimit: DELIVERY_JOB_RETRIES,
    retryDelay: Math.ceil(expirySeconds / 2),
    retryBackoff: true,
    expireInSeconds: expirySeconds
  } satisfies PgBoss.Queue
}

/** pg-boss's database interface. */
export interface JobEngineDb { executeSql: (text: string, values?: unknown[]) => Promise<{ rows: any[] }> }

/** pg-boss's database interface over the app's own connections (pool or embedded). */
export function jobEngineDb (db: Db): JobEngineDb {
  const embedded = embeddedDatabase(db)
  return {
    async executeSql (text, values) {
      // pg-boss sends its schema as one script of many statements, without values:
      // PGlite runs such a script only through exec().
      if (embedded !== null && (values === undefined || values.length === 0)) {
        const results = await embedded.exec(text)
        return { rows: results.at(-1)?.rows ?? [] }
      }
      const { rows } = await db.executeQuery(CompiledQuery.raw(text, values ?? []))
      return { rows }
    }
  }
}

/**
 * pg-boss on the app's database; `start()` it to work, or only to install.
 * `engineDb` stands between pg-boss and the database (a worker counts the
 * statements pg-boss still has under way, to close only after them).
 */
export function jobEngine (db: Db, options: { supervise: boolean, maintenanceIntervalSeconds?: number, engineDb?: JobEngineDb }): PgBoss {
  return new PgBoss({
    db: options.engineDb ?? jobEngineDb(db),
    schema: JOB_SCHEMA,
    supervise: options.supervise,
    schedule: false,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30
  } as PgBoss.ConstructorOptions)
}

/**
 * This service's own index on the job table: a delivery's jobs by its id, so that
 * whether a pending delivery still has a job to run (db/deliveries.ts, liveJobOf)
 * is a lookup, not a scan of every job of the last hours. Delivery ids are time
 * ordered, so the index grows at its right edge, like the deliveries' own.
 */
export const DELIVERY_JOB_INDEX = 'webhook_delivery_job_idx'

/** Installs (or upgrades) pg-boss's schema, the queues this service uses and its index on their jobs. */
export async function installJobEngine (db: Db): Promise<void> {
  const boss = jobEngine(db, { supervise: false })
  boss.on('error', () => {})
  await boss.start()
  try {
    // Made once: a queue that exists keeps the policy the delivering processes set.
    await boss.createQueue(DELIVERY_QUEUE, deliveryQueuePolicy(DELIVERY_JOB_EXPIRY_SECONDS))
  } finally {
    await boss.stop({ graceful: false, close: false })
  }
  await installDeliveryJobIndex(db)
}

async function installDeliveryJobIndex (db: Db): Promise<void> {
  const exists = async (q: Kysely<Database>) => (await sql<{ found: string | null }>`
    SELECT to_regclass(${`${JOB_SCHEMA}.${DELIVERY_JOB_INDEX}`})::text AS found`.execute(q)).rows[0]?.found != null
  // Looked for first: creating it, even IF NOT EXISTS, locks the job table against writes.
  if (await exists(db)) return
  await db.transaction().execute(async (trx) => {
    // Processes starting together would both create it, and one would fail.
    await sql`SELECT pg_advisory_xact_lock(hashtext(${DELIVERY_JOB_INDEX}))`.execute(trx)
    if (await exists(trx)) return
    // On the partitioned table: PostgreSQL makes it on every queue's partition, and on those made later.
    await sql`CREATE INDEX ${sql.id(DELIVERY_JOB_INDEX)} ON ${sql.table(`${JOB_SCHEMA}.job`)}
      ((data->>'delivery_id')) WHERE name = ${sql.lit(DELIVERY_QUEUE)}`.execute(trx)
  })
}

/** What a delivery job carries: the delivery and which attempt of it this is. */
export interface DeliveryJob { delivery_id: string, attempt: number }

/**
 * Queues a delivery job for each row of `from` (a CTE of the statement with the
 * columns delivery_id, attempt and start_after): the row pg-boss's own `send`
 * would insert, with the expiry and retries the queue has (as `send` takes them),
 * so that a statement queues its jobs with whatever else it writes.
 */
export function queueDeliveries<DB extends Database> (qb: QueryCreator<DB>, from: string) {
  const fallback = deliveryQueuePolicy(DELIVERY_JOB_EXPIRY_SECONDS)
  // The statement's own CTEs widen its database type; the job table is the same in any.
  return (qb as unknown as QueryCreator<Database>).insertInto('pgboss.job')
    .columns(['name', 'data', 'start_after', 'expire_in', 'retry_limit', 'retry_delay', 'retry_backoff', 'keep_until', 'policy'])
    .expression(sql`SELECT ${sql.lit(DELIVERY_QUEUE)}, jsonb_build_object('delivery_id', r.delivery_id, 'attempt', r.attempt),
      r.start_after, coalesce(q.expire_seconds, ${sql.lit(fallback.expireInSeconds)}) * interval '1 second',
      coalesce(q.retry_limit, ${sql.lit(fallback.retryLimit)}), coalesce(q.retry_delay, ${sql.lit(fallback.retryDelay)}),
      coalesce(q.retry_backoff, true), r.start_after + interval '14 days', 'standard'
      FROM ${sql.table(from)} AS r LEFT JOIN ${sql.table('pgboss.queue')} AS q ON q.name = ${sql.lit(DELIVERY_QUEUE)}`)
}

// Jobs queued by this process, for this process's delivery workers: told at once,
// they fetch a job when it is queued instead of at their next look for one.
const queued = new EventEmitter()
queued.setMaxListeners(0)

/** Tells this process's delivery workers that a committed statement queued `count` delivery jobs. */
export function jobsQueued (count: number): void {
  if (count > 0) queued.emit('queued', count)
}

/** Calls `listener` with the count of each jobsQueued(); returns what stops it. */
export function onJobsQueued (listener: (count: number) => void): () => void {
  queued.on('queued', listener)
  return () => { queued.off('queued', listener) }
}
