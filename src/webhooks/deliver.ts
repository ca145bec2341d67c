// One attempt of a delivery, as a job asks for it: find the delivery (one
// statement), sign the event's body, send it, record the outcome and what
// follows from it (one statement), log it. Nothing is held open across the
// request: no transaction, no lock, no connection.
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import { findPendingDelivery, recordAttempt, type AttemptRecord, type PendingDelivery } from './deliveries.js'
import type { Db } from '../db/index.js'
import type { DeliveryJob } from '../db/jobs.js'
import { shortId } from '../ids.js'
import { eventBodyText, eventMessageId, type StoredEvent } from './event.js'
import { parseRetryAfter, retryDelayMs } from './schedule.js'
import { deliveryAgent, send, targetRefusal, type SendResult } from './send.js'
import { signatureHeaders } from './sign.js'
import type { TargetPolicy } from './targets.js'
import { countWebhookAttempt } from '../metrics/registry.js'

/** Said at every start while the setting is on: it lets webhooks reach the internal network. */
export const PRIVATE_TARGETS_WARNING = 'WEBHOOKS_ALLOW_PRIVATE_TARGETS is on: webhooks may target http URLs and loopback, private and link-local addresses (this machine, the internal network, cloud metadata). For development and tests only: never in production.'

export interface DeliverySettings {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets: boolean
  /** WEBHOOKS_ATTEMPT_TIMEOUT_MS: the whole attempt, connecting included. */
  attemptTimeoutMs: number
  /** WEBHOOKS_RETRY_SCHEDULE: seconds before each retry. */
  retrySchedule: readonly number[]
}

export function deliverySettings (config: Pick<Config, 'WEBHOOKS_ALLOW_PRIVATE_TARGETS' | 'WEBHOOKS_ATTEMPT_TIMEOUT_MS' | 'WEBHOOKS_RETRY_SCHEDULE'>): DeliverySettings {
  return {
    allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
    attemptTimeoutMs: config.WEBHOOKS_ATTEMPT_TIMEOUT_MS,
    retrySchedule: config.WEBHOOKS_RETRY_SCHEDULE
  }
}

/** What an attempt came to, as recorded. */
export interface AttemptResult {
  outcome: AttemptRecord['outcome']
  statusCode: number | null
  error: string | null
  durationMs: number
  /** False when another run of the same attempt recorded first. */
  recorded: boolean
  nextAttemptAt: Date | null
  /** Whether this attempt disabled the endpoint. */
  disabled: boolean
}

function lastOutcome (result: SendResult): string {
  return result.statusCode === null ? (result.error ?? 'no answer') : `HTTP ${result.statusCode}`
}

/** The outcome of an answer or a failure, and what follows from it. */
function judge (result: SendResult, attempt: number, schedule: readonly number[]): Omit<AttemptRecord, 'deliveryId' | 'attempt' | 'statusCode' | 'error' | 'durationMs'> {
  const code = result.statusCode
  if (code !== null && code >= 200 && code < 300) return { outcome: 'delivered', retryInMs: null, disable: null, disableReason: null }
  if (code === 410) return { outcome: 'failed', retryInMs: null, disable: 'gone', disableReason: 'the endpoint answered 410 Gone' }
  const wait = retryDelayMs(schedule, attempt, parseRetryAfter(result.retryAfter))
  if (wait !== null) return { outcome: 'retry', retryInMs: wait, disable: null, disableReason: null }
  return {
    outcome: 'failed',
    retryInMs: null,
    disable: 'exhausted',
    disableReason: `all ${attempt} attempts of a delivery failed, the last with ${lastOutcome(result)}`
  }
}

/** Makes delivery attempts; one per worker process, with its connection pool. */
export class Deliverer {
  private readonly agent
  private readonly policy: TargetPolicy

  constructor (private readonly db: Db, private readonly settings: DeliverySettings, private readonly log: FastifyBaseLogger) {
    this.policy = { allowPrivate: settings.allowPrivateTargets }
    this.agent = deliveryAgent(this.policy, settings.attemptTimeoutMs)
  }

  /**
   * Makes the job's attempt. Null when there is nothing to do (the attempt was
   * made, the delivery is no longer pending, its endpoint is disabled or gone).
   * Rejects with SendInterrupted when `signal` (a shutdown) cut the request short:
   * nothing is recorded, and the job runs again.
   */
  async attempt (job: DeliveryJob, signal?: AbortSignal): Promise<AttemptResult | null> {
    const delivery = await findPendingDelivery(this.db, job.delivery_id, job.attempt)
    if (delivery === null) {
      this.log.debug({ delivery_id: shortId(job.delivery_id), attempt: job.attempt }, 'webhook delivery: nothing to do for this job')
      return null
    }
    const result = await this.post(delivery, signal)
    const verdict = judge(result, job.attempt, this.settings.retrySchedule)
    const recorded = await recordAttempt(this.db, {
      deliveryId: delivery.id,
      attempt: job.attempt,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
      ...verdict
    })
    const outcome: AttemptResult = {
      outcome: verdict.outcome,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
      recorded: recorded.recorded > 0,
      nextAttemptAt: recorded.next_attempt_at === null ? null : new Date(recorded.next_attempt_at),
      disabled: recorded.disabled > 0
    }
    if (outcome.recorded) countWebhookAttempt(outcome.outcome)
    this.logAttempt(delivery, job.attempt, outcome, recorded.canceled, verdict.disableReason)
    return outcome
  }

  private async post (delivery: PendingDelivery, signal?: AbortSignal): Promise<SendResult> {
    let url: URL
    try {
      url = new URL(delivery.url)
    } catch {
      return { statusCode: null, retryAfter: null, error: 'refused: the target is not a URL', durationMs: 0 }
    }
    const refused = targetRefusal(url, this.policy)
    if (refused !== null) return { statusCode: null, retryAfter: null, error: `refused: ${refused}`, durationMs: 0 }
    const body = eventBodyText(delivery.payload as unknown as StoredEvent)
    const secrets = delivery.previous_secret === null ? [delivery.secret] : [delivery.secret, delivery.previous_secret]
    const headers = signatureHeaders(eventMessageId(delivery.event_id), body, secrets, new Date())
    return await send(this.agent, url, headers, body, { timeoutMs: this.settings.attemptTimeoutMs, signal, traceParent: delivery.trace_parent })
  }

  private logAttempt (delivery: PendingDelivery, attempt: number, result: AttemptResult, canceled: number, reason: string | null): void {
    const line = {
      webhook_id: shortId(delivery.webhook_id),
      event_id: eventMessageId(delivery.event_id),
      event_type: delivery.event_type,
      delivery_id: shortId(delivery.id),
      attempt,
      status_code: result.statusCode,
      error: result.error,
      duration_ms: result.durationMs,
      outcome: result.outcome,
      next_attempt_at: result.nextAttemptAt?.toISOString() ?? null
    }
    if (!result.recorded) {
      this.log.warn(line, 'webhook delivery attempt made, but another run of it recorded first')
    } else if (result.outcome === 'delivered') {
      this.log.info(line, 'webhook delivered')
    } else {
      this.log.warn(line, result.outcome === 'retry' ? 'webhook delivery attempt failed; retry scheduled' : 'webhook delivery failed')
    }
    if (result.disabled) {
      this.log.warn({ webhook_id: line.webhook_id, disabled_reason: reason, deliveries_canceled: canceled }, 'webhook disabled')
    }
  }

  async close (): Promise<void> {
    await this.agent.destroy()
  }
}
