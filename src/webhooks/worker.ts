// The delivery workers of one process: pg-boss workers on the delivery queue, as
// many as WEBHOOKS_WORKER_CONCURRENCY, each making one attempt at a time. Any
// number of processes may run them on one database: pg-boss hands each job to
// one worker (SELECT … FOR UPDATE SKIP LOCKED), and a job left active by a
// process that died is run again after the queue's expiry (crash recovery). A
// delivery that crash recovery gave up on is swept back (sweep.ts), at start and
// every SWEEP_INTERVAL_MS.
import type { FastifyBaseLogger } from 'fastify'
import type PgBoss from 'pg-boss'
import type { Db } from '../db/index.js'
import { DELIVERY_QUEUE, deliveryQueuePolicy, jobEngine, jobEngineDb, onJobsQueued, type DeliveryJob, type JobEngineDb } from '../db/jobs.js'
import { isUuid } from '../ids.js'
import type { Config } from '../config.js'
import { Deliverer, deliverySettings, type DeliverySettings } from './deliver.js'
import { SWEEP_INTERVAL_MS, sweepStrandedDeliveries } from './sweep.js'

/** Why `npm run worker` does not start on the embedded database. */
export const EMBEDDED_REFUSAL = 'a webhook worker needs DATABASE_URL (PostgreSQL). The embedded database can be opened by one process only, ' +
  'so with it the API process delivers webhooks itself (WEBHOOKS_WORKER=true, the default): run the server alone.'

/**
 * The workers of a process take turns looking for a job they were not told of, one
 * at least this long after the last (a tenth of a second: at most ten looks a
 * second, evenly spread, whatever the concurrency); a busy worker looks again as
 * soon as it is done. With the default concurrency of 10, each idle worker looks
 * about every second. What `npm run worker` does: its jobs are queued elsewhere.
 */
export const POLLING_TURN_MS = 100

/**
 * The API process's turn: it is told of the jobs its own statements queue and of
 * the retries its attempts schedule, and fetches them then, so it looks for others
 * (a job queued by another process, one a crashed worker left to expire) once a
 * second. Ten looks a second on an empty queue would cost the embedded database's
 * one thread several per cent of its time, idle or busy.
 */
export const TOLD_TURN_MS = 1000

/** Retries scheduled here that a worker is woken for at their time; past that many, the turns find them. */
const MAX_RETRY_WAKES = 1000

/** What a stop keeps, after the grace for attempts under way, to hand the rest back. */
const HANDBACK_MS = 1000

export interface WorkerOptions {
  settings: DeliverySettings
  /** WEBHOOKS_WORKER_CONCURRENCY. */
  concurrency: number
  /** WEBHOOKS_JOB_EXPIRY_SECONDS: set on the queue, for the jobs made from now on. */
  jobExpirySeconds: number
  log: FastifyBaseLogger
  /**
   * How often an idle worker looks for a job it was not told of (one worker a turn):
   * POLLING_TURN_MS unless given; the API process gives TOLD_TURN_MS.
   */
  turnMs?: number
  /** How often stranded deliveries are swept (sweep.ts): SWEEP_INTERVAL_MS unless given. */
  sweepIntervalMs?: number
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

/**
 * The workers' options from the configuration. `told`: the process queues the jobs
 * it delivers (the API process), so it is told of them and looks for others once a
 * second (TOLD_TURN_MS); else (`npm run worker`) ten times a second.
 */
export function deliveryWorkerOptions (config: Pick<Config, 'WEBHOOKS_WORKER_CONCURRENCY' | 'WEBHOOKS_JOB_EXPIRY_SECONDS'> & Parameters<typeof deliverySettings>[0],
  log: FastifyBaseLogger, { told }: { told: boolean }): WorkerOptions {
  return {
    settings: deliverySettings(config),
    concurrency: config.WEBHOOKS_WORKER_CONCURRENCY,
    jobExpirySeconds: config.WEBHOOKS_JOB_EXPIRY_SECONDS,
    log,
    turnMs: told ? TOLD_TURN_MS : POLLING_TURN_MS
  }
}

/**
 * The workers' turns: each idle worker is woken in turn (pg-boss's own polling,
 * twice as long as a round of turns, is only the fallback: left to their timers,
 * workers that found the queue empty together would sleep and wake together).
 * A busy worker looks again as soon as it is done.
 */
function workerTurns (boss: PgBoss) {
  const ids: string[] = []
  const busy = new Set<number>()
  const retryWakes = new Set<NodeJS.Timeout>()
  let turn = 0
  let stopped = false
  const wake = (count: number) => {
    for (let tried = 0; tried < ids.length && count > 0; tried++) {
      turn = (turn + 1) % ids.length
      if (!busy.has(turn)) {
        boss.notifyWorker(ids[turn]!)
        count--
      }
    }
  }
  return {
    ids,
    wake,
    /** Worker `index`'s handler around `run`: busy while it runs, then it looks again. */
    handler: (index: number, run: (job: PgBoss.Job<unknown>) => Promise<void>) => async (jobs: Array<PgBoss.Job<unknown>>) => {
      busy.add(index)
      try {
        for (const job of jobs) await run(job)
      } finally {
        busy.delete(index)
      }
      const id = ids[index]
      if (id !== undefined) boss.notifyWorker(id)
    },
    /**
     * A retry this process scheduled: a worker is woken at its time (the database's
     * clock may run a little ahead: one woken early finds nothing, and the turns
     * find the job soon after).
     */
    wakeAt (at: Date) {
      if (stopped || retryWakes.size >= MAX_RETRY_WAKES) return
      const timer = setTimeout(() => {
        retryWakes.delete(timer)
        wake(1)
      }, Math.max(0, at.getTime() - Date.now()) + 10)
      timer.unref()
      retryWakes.add(timer)
    },
    stop () {
      stopped = true
      for (const timer of retryWakes) clearTimeout(timer)
      retryWakes.clear()
    }
  }
}

/** Stranded deliveries swept (sweep.ts) now and every interval, never two at once. */
async function startSweeps (db: Db, options: WorkerOptions, wakeAt: (at: Date) => void) {
  let sweeping: Promise<void> | null = null
  let stopped = false
  const sweep = () => {
    if (stopped || sweeping !== null) return
    sweeping = sweepStrandedDeliveries(db, options.settings.retrySchedule, options.log)
      .then(({ swept }) => { for (const delivery of swept) if (delivery.next_attempt_at !== null) wakeAt(new Date(delivery.next_attempt_at)) })
      .catch((err: unknown) => { options.log.error({ err }, 'webhook delivery worker: sweeping stranded deliveries failed; the next sweep tries again') })
      .finally(() => { sweeping = null })
  }
  sweep()
  await sweeping
  const sweeps = setInterval(sweep, options.sweepIntervalMs ?? SWEEP_INTERVAL_MS)
  sweeps.unref()
  return {
    async stop () {
      stopped = true
      clearInterval(sweeps)
      await sweeping
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
  const turns = workerTurns(boss)
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
      const result = await run
      if (result?.nextAttemptAt) turns.wakeAt(result.nextAttemptAt)
    } finally {
      running.delete(run)
    }
  }

  const turnMs = options.turnMs ?? POLLING_TURN_MS
  const round = turnMs * options.concurrency
  for (let i = 0; i < options.concurrency; i++) {
    turns.ids.push(await boss.work(DELIVERY_QUEUE, { batchSize: 1, pollingIntervalSeconds: Math.max(1, (2 * round) / 1000) }, turns.handler(i, attempt)))
  }
  const ticks = setInterval(() => turns.wake(1), turnMs)
  ticks.unref()
  // Jobs this process's statements queue are fetched as they are queued.
  const unlisten = onJobsQueued((count) => { if (!stopping) turns.wake(count) })
  const sweeps = await startSweeps(db, options, turns.wakeAt)
  log.info({ concurrency: options.concurrency, job_expiry_seconds: options.jobExpirySeconds }, 'webhook delivery worker started')

  return {
    async stop (deadline) {
      stopping = true
      clearInterval(ticks)
      unlisten()
      turns.stop()
      const stoppingSweeps = sweeps.stop()
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
      await stoppingSweeps
      await deliverer.close()
      log.info({ handed_back: handedBack }, 'webhook delivery worker stopped')
    }
  }
}
