// When a failed delivery is tried again: the configured schedule
// (WEBHOOKS_RETRY_SCHEDULE), jittered so that the retries of many deliveries that
// failed together (an endpoint that was down) do not all arrive at once, and
// never sooner than the endpoint's own Retry-After asks, up to a bound.

/** A Retry-After is waited for up to this long: the longest step of the default schedule. */
export const MAX_RETRY_AFTER_MS = 10 * 60 * 60 * 1000

/** Each wait is the schedule's step times a factor in [1 - JITTER, 1 + JITTER), rounded to the millisecond. */
export const JITTER = 0.2

/**
 * The wait before the attempt after `attempt` (1-based) failed, in milliseconds;
 * null when the schedule has no step left: the delivery has failed.
 */
export function retryDelayMs (schedule: readonly number[], attempt: number, retryAfterMs: number | null, random: () => number = Math.random): number | null {
  const step = schedule[attempt - 1]
  if (step === undefined) return null
  const jittered = step * 1000 * (1 - JITTER + 2 * JITTER * random())
  const asked = retryAfterMs === null ? 0 : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS)
  return Math.round(Math.max(jittered, asked))
}

/**
 * A Retry-After header's wait in milliseconds: delay-seconds or an HTTP date
 * (RFC 9110, 10.2.3); null when there is none or it is neither.
 */
export function parseRetryAfter (value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // An HTTP date names its weekday; a bare number of any other form is not one.
  if (!/^[A-Za-z]{3},/.test(text)) return null
  const at = Date.parse(text)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}
