// Stranded deliveries put back on their way. A delivery is stranded when it is
// pending, its endpoint enabled, and no job will make its next attempt: the job
// engine spent the job's retries on a worker that crashed mid-attempt each time
// (or the job ended some other way without recording an outcome). Nothing would
// pick it up again, and its event would be lost. Every delivering process sweeps
// once when its workers start and every SWEEP_INTERVAL_MS: the lost attempt is
// recorded as one (no outcome known), and the next is queued after the retry
// schedule's wait for it, or the delivery fails when the schedule is spent. So a
// delivery that crashes its worker every time costs at most its retry schedule,
// and each stranding shows in its record and in webhooks/list_deliveries.
import type { FastifyBaseLogger } from 'fastify'
import { findStranded, sweepStranded, type SweptDelivery } from './deliveries.js'
import type { Db } from '../db/index.js'
import { shortId } from '../ids.js'
import { retryDelayMs } from './schedule.js'

/** How often a delivering process sweeps (and once as its workers start). */
export const SWEEP_INTERVAL_MS = 60_000

/** Stranded deliveries taken up per statement; a sweep takes batches until none is left. */
export const SWEEP_BATCH = 500

/** The error recorded for a lost attempt. */
export const LOST_ATTEMPT = 'no outcome recorded: the job of this attempt ended without one (its worker stopped mid-attempt, ' +
  'each time the job engine retried it)'

/** Ids named in a sweep's log line, at most. */
const LOGGED_IDS = 20

export interface SweepResult {
  /** The stranded deliveries swept, with their state after it. */
  swept: SweptDelivery[]
  requeued: number
  failed: number
}

/** Sweeps the stranded deliveries, `schedule` being WEBHOOKS_RETRY_SCHEDULE; logs a warning when it found any. */
export async function sweepStrandedDeliveries (db: Db, schedule: readonly number[], log: FastifyBaseLogger): Promise<SweepResult> {
  const swept: SweptDelivery[] = []
  for (;;) {
    const found = await findStranded(db, SWEEP_BATCH)
    const verdicts = found.map((d) => ({ deliveryId: d.id, attempts: d.attempts, retryInMs: retryDelayMs(schedule, d.attempts + 1, null) }))
    const done = await sweepStranded(db, verdicts, LOST_ATTEMPT)
    swept.push(...done)
    // A batch left whole to others (another process swept it first) would be found again: stop there.
    if (found.length < SWEEP_BATCH || done.length === 0) break
  }
  const failed = swept.filter((d) => d.status === 'failed').length
  const result = { swept, requeued: swept.length - failed, failed }
  if (swept.length > 0) {
    log.warn({ requeued: result.requeued, failed, delivery_ids: swept.slice(0, LOGGED_IDS).map((d) => shortId(d.id)) },
      'webhook deliveries stranded (no job would attempt them again): their lost attempts recorded, the next queued or, with no retry left, failed')
  }
  return result
}
