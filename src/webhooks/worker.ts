// The delivery workers of one process: pg-boss workers on the delivery queue, as
// many as WEBHOOKS_WORKER_CONCURRENCY, each making one attempt at a time. Any
// number of processes may run them on one database: pg-boss hands each job to
// one worker (SELECT … FOR UPDATE SKIP LOCKED), and a job left active by a
// process that died is run again after the queue's expiry (crash recovery).
import type { FastifyBaseLogger } from 'fastify'
import type PgBoss from 'pg-boss'
import type { Db } from '../db/index.js'
import { DELIVERY_QUEUE, deliveryQueuePolicy, jobEngine, jobEngineDb, type DeliveryJob, type JobEngineDb } from '../db/jobs.js'
import { isUuid } from '../ids.js'
import { Deliverer, type DeliverySettings } from './deliver.js'

/** Why `npm run worker` does not start on the embedded database. */
export const EMBEDDED_REFUSAL = 'a webhook worker needs DATABASE_URL (PostgreSQL). The embedded database can be opened by one process only, ' +
  'so with it the API process delivers webhooks itself (WEBHOOKS_WORKER=true, the default): run the server alone.'

/**
 * The workers of a process take turns looking for a job, one at least this long
 * after the last (a tenth of a second: at most ten looks a second, evenly spread,
 * whatever the concurrency); a busy worker looks again as soon as it is done. With
 * the default concurrency of 10, each idle worker looks about every second.
 */
export const POLLING_TURN_MS = 100

/** What a stop keeps, after the grace for attempts under way, to hand the rest back. */
const HANDBACK_MS = 1000

export interface WorkerOptions {
  settings: DeliverySettings
  /** WEBHOOKS_WORKER_CONCURRENCY. */
  concurrency: number
  /** WEBHOOKS_JOB_EXPIRY_SECONDS: set on the queue, for the jobs made from now on. */
  jobExpirySeconds: number
  log: FastifyBaseLogger
}

export interface DeliveryWorker {
  /**
   * Takes no more jobs, lets the attempts under way finish until shortly before
   * `deadline` (epoch ms), then hands back the jobs of those still running
   * (failed in pg-boss, so that they run again) and cuts their requests short.
   * Resolves once nothing of the worker uses the database any more.
   */
  stop: (deadline: number) => Promise<void>
}

/**
 * The deadline for a worker's stop in a shutdown of SHUTDOWN_TIMEOUT_MS starting
 * now: the shutdown's, less a moment (up to a second) to close the database after.
 */
export function shutdownDeadline (shutdownTimeoutMs: number, now: number = Date.now()): number {
  return now + shutdownTimeoutMs - Math.min(1000, Math.floor(shutdownTimeoutMs / 4))
}

/** pg-boss's expiry check runs this often: a dead process's job waits at most the expiry and this. */
export function maintenanceIntervalSeconds (jobExpirySeconds: number): number {
  return Math.max(1, Math.min(30, Math.floor(jobExpirySeconds / 4)))
}

function deliveryJob (data: unknown): DeliveryJob | null {
  const job = data as Partial<DeliveryJob> | null
  if (typeof job?.delivery_id !== 'string' || !isUuid(job.delivery_id)) return null
  if (typeof job.attempt !== 'number' || !Number.isInteger(job.attempt) || job.attempt < 1) return null
  return { delivery_id: job.delivery_id, attempt: job.attempt }
}

/** Errors repeat once a second per worker while the database is away: one line per ERROR_LOG_MS, with the count left out. */
const ERROR_LOG_MS = 10_000

function throttled (write: (err: Error, suppressed: number) => void): (err: Error) => void {
  let last = 0
  let suppressed = 0
  return (err) => {
    const now = Date.now()
    if (now - last < ERROR_LOG_MS) {
      suppressed++
      return
    }
    write(err, suppressed)
    last = now
    suppressed = 0
  }
}

/**
 * pg-boss's connection for a worker. It counts the statements under way, so that
 * a stop can wait for the last of them. Once the worker runs it forgives failures:
 * pg-boss marks a job done or failed without waiting for it, and a statement that
 * failed there (the database away for a moment) would be an unhandled rejection,
 * which takes the process down. Forgiven, the job stays active, expires and runs
 * again; its attempt, already recorded, then finds nothing to do.
 */
function engineConnection (engineDb: JobEngineDb, onError: (err: Error) => void) {
  const pending = new Set<Promise<unknown>>()
  let forgiving = false
  return {
    executeSql (text: string, values?: unknown[]) {
      const running = engineDb.executeSql(text, values)
      pending.add(running)
      running.then(() => pending.delete(running), () => pending.delete(running))
      if (!forgiving) return running
      return running.catch((err: Error) => {
        onError(err)
        // No rows at all: what pg-boss reads as no job fetched and none marked.
        return { rows: undefined as unknown as any[] }
      })
    },
    forgive () {
      forgiving = true
    },
    async idle () {
      while (pending.size > 0) await Promise.allSettled([...pending])
    }
  }
}

export async function startDeliveryWorker (db: Db, options: WorkerOptions): Promise<DeliveryWorker> {
  const { log } = options
  const logError = throttled((err: Error, suppressed: number) => log.error({ err, suppressed }, 'webhook job engine error'))
  const engineDb = engineConnection(jobEngineDb(db), logError)
  const boss = jobEngine(db, { supervise: true, maintenanceIntervalSeconds: maintenanceIntervalSeconds(options.jobExpirySeconds), engineDb })
  boss.on('error', logError)
  await boss.start()
  await boss.updateQueue(DELIVERY_QUEUE, deliveryQueuePolicy(options.jobExpirySeconds))
  engineDb.forgive()

  const deliverer = new Deliverer(db, options.settings, log)
  const shutdown = new AbortController()
  const running = new Set<Promise<unknown>>()
  let stopping = false

  /** One job's attempt (a job carries one), tracked so that a stop can wait for it. */
  const attempt = async (job: PgBoss.Job<unknown>) => {
    // A job fetched as the stop began is handed back untouched.
    if (stopping) throw new Error('the worker is stopping: the job is handed back')
    const data = deliveryJob(job.data)
    if (data === null) {
      log.error({ job_id: job.id, data: job.data }, 'webhook delivery job without a delivery id and attempt: dropped')
      return
    }
    const run = deliverer.attempt(data, shutdown.signal)
    running.add(run)
    try {
      await run
    } finally {
      running.delete(run)
    }
  }

  const ids: string[] = []
  const busy = new Set<number>()
  const handler = (index: number) => async (jobs: Array<PgBoss.Job<unknown>>) => {
    busy.add(index)
    try {
      for (const job of jobs) await attempt(job)
    } finally {
      busy.delete(index)
    }
    // More may be waiting: look again now rather than at the next turn.
    const id = ids[index]
    if (id !== undefined) boss.notifyWorker(id)
  }

  // The turns below wake the idle workers one at a time; each worker's own timer
  // (pg-boss's polling, twice as long as a round of turns) is only the fallback.
  // Left to their timers, workers that found the queue empty together would sleep
  // and wake together: one look a second, however many workers.
  const round = POLLING_TURN_MS * options.concurrency
  for (let i = 0; i < options.concurrency; i++) {
    ids.push(await boss.work(DELIVERY_QUEUE, { batchSize: 1, pollingIntervalSeconds: Math.max(1, (2 * round) / 1000) }, handler(i)))
  }
  let turn = 0
  const turns = setInterval(() => {
    for (let tried = 0; tried < ids.length; tried++) {
      turn = (turn + 1) % ids.length
      if (!busy.has(turn)) {
        boss.notifyWorker(ids[turn]!)
        return
      }
    }
  }, POLLING_TURN_MS)
  turns.unref()
  log.info({ concurrency: options.concurrency, job_expiry_seconds: options.jobExpirySeconds }, 'webhook delivery worker started')

  return {
    async stop (deadline) {
      stopping = true
      clearInterval(turns)
      const grace = Math.max(0, deadline - Date.now() - HANDBACK_MS)
      try {
        // Graceful: no more fetching, then waits for the handlers under way; past
        // the grace it fails the jobs still running, which puts them up for a retry.
        await boss.stop({ graceful: true, wait: true, close: false, timeout: grace })
      } catch (err) {
        log.error({ err }, 'webhook delivery worker: stopping the job engine failed')
      }
      const handedBack = running.size
      shutdown.abort()
      await Promise.allSettled([...running])
      // pg-boss completes or fails a job once its handler has returned (a few
      // promise steps later, within this turn of the event loop): let that land.
      await new Promise((resolve) => setImmediate(resolve))
      await engineDb.idle()
      await deliverer.close()
      log.info({ handed_back: handedBack }, 'webhook delivery worker stopped')
    }
  }
}
