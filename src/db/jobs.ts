// The job engine, pg-boss, on this service's own database and connections: its
// schema is installed with the migrations, and a job is a row its queue table
// holds, so a statement that records a change can make the job that carries the
// change on in the same transaction (the outbox). pg-boss is pinned to one version
// (package.json): the columns below are that version's.
import { CompiledQuery, sql, type QueryCreator } from 'kysely'
import PgBoss from 'pg-boss'
import { embeddedDatabase, type Db } from './index.js'
import type { Database } from './types.js'

export const JOB_SCHEMA = 'pgboss'

/** The queue of webhook deliveries: one job per attempt (src/webhooks/worker.ts). */
export const DELIVERY_QUEUE = 'webhook-delivery'

/**
 * A job left active by a worker that died (or hung past every timeout) is failed
 * after this long and run again: a delivery attempt takes at most 10 s to answer.
 */
export const DELIVERY_JOB_EXPIRY_SECONDS = 60
/** Runs of one job after an expiry (a crash mid-attempt), 30 s apart, doubling. */
export const DELIVERY_JOB_RETRIES = 5
const DELIVERY_JOB_RETRY_DELAY_SECONDS = 30

/** pg-boss's database interface over the app's own connections (pool or embedded). */
export function jobEngineDb (db: Db): { executeSql: (text: string, values?: unknown[]) => Promise<{ rows: any[] }> } {
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

/** pg-boss on the app's database; `start()` it to work, or only to install. */
export function jobEngine (db: Db, options: { supervise: boolean, maintenanceIntervalSeconds?: number }): PgBoss {
  return new PgBoss({
    db: jobEngineDb(db),
    schema: JOB_SCHEMA,
    supervise: options.supervise,
    schedule: false,
    maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30
  } as PgBoss.ConstructorOptions)
}

/** Installs (or upgrades) pg-boss's schema and the queues this service uses. */
export async function installJobEngine (db: Db): Promise<void> {
  const boss = jobEngine(db, { supervise: false })
  boss.on('error', () => {})
  await boss.start()
  try {
    await boss.createQueue(DELIVERY_QUEUE, {
      name: DELIVERY_QUEUE,
      policy: 'standard',
      retryLimit: DELIVERY_JOB_RETRIES,
      retryDelay: DELIVERY_JOB_RETRY_DELAY_SECONDS,
      retryBackoff: true,
      expireInSeconds: DELIVERY_JOB_EXPIRY_SECONDS
    })
  } finally {
    await boss.stop({ graceful: false, close: false })
  }
}

/** What a delivery job carries: the delivery and which attempt of it this is. */
export interface DeliveryJob { delivery_id: string, attempt: number }

/**
 * Queues a delivery job for each row of `from` (a CTE of the statement with the
 * columns delivery_id, attempt and start_after): the row pg-boss's own `send`
 * would insert, so that a statement queues its jobs with whatever else it writes.
 */
export function queueDeliveries<DB extends Database> (qb: QueryCreator<DB>, from: string) {
  // The statement's own CTEs widen its database type; the job table is the same in any.
  return (qb as unknown as QueryCreator<Database>).insertInto('pgboss.job')
    .columns(['name', 'data', 'start_after', 'expire_in', 'retry_limit', 'retry_delay', 'retry_backoff', 'keep_until', 'policy'])
    .expression(sql`SELECT ${sql.lit(DELIVERY_QUEUE)}, jsonb_build_object('delivery_id', r.delivery_id, 'attempt', r.attempt),
      r.start_after, ${sql.lit(`${DELIVERY_JOB_EXPIRY_SECONDS} seconds`)}::interval,
      ${sql.lit(DELIVERY_JOB_RETRIES)}, ${sql.lit(DELIVERY_JOB_RETRY_DELAY_SECONDS)}, true,
      r.start_after + interval '14 days', 'standard'
      FROM ${sql.table(from)} AS r`)
}
