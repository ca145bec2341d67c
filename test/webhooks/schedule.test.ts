// The retry schedule without a database: each step jittered within ±20%, the
// schedule used up after its last step, a Retry-After waited for when longer
// (in seconds or as an HTTP date) and bounded, and anything else in it ignored.
import t from '../tap.js'
import { loadConfig } from '../../src/config.js'
import { JITTER, MAX_RETRY_AFTER_MS, parseRetryAfter, retryDelayMs } from '../../src/webhooks/schedule.js'

const DEFAULT = loadConfig({}).WEBHOOKS_RETRY_SCHEDULE

t.test("the default schedule is Svix's: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, about a day in all", async (t) => {
  t.same(DEFAULT, [5, 300, 1800, 7200, 18000, 36000, 36000])
  const day = DEFAULT.reduce((a, b) => a + b, 0) / 3600
  t.ok(day > 24 && day < 30, `${day.toFixed(1)} hours over eight attempts`)
})

t.test('each wait is its step, jittered by up to 20% either way; none after the last step', async (t) => {
  for (const [attempt, step] of DEFAULT.entries()) {
    t.equal(retryDelayMs(DEFAULT, attempt + 1, null, () => 0), Math.round(step * 1000 * (1 - JITTER)), `after attempt ${attempt + 1}: the shortest`)
    t.equal(retryDelayMs(DEFAULT, attempt + 1, null, () => 0.5), step * 1000, 'the middle')
    t.equal(retryDelayMs(DEFAULT, attempt + 1, null, () => 0.999999), Math.round(step * 1000 * (1 + JITTER * 0.999998)), 'the longest')
  }
  t.equal(retryDelayMs(DEFAULT, 8, null), null, 'after the eighth attempt the delivery has failed')
  t.equal(retryDelayMs([], 1, null), null, 'an empty schedule: one attempt')
  const waits = Array.from({ length: 1000 }, () => retryDelayMs([5], 1, null)!)
  // Rounded to the millisecond, a factor just under 1.2 can give 6000 itself.
  t.ok(waits.every((w) => Number.isInteger(w) && w >= 4000 && w <= 6000), 'random jitter stays within its bounds')
  t.ok(new Set(waits).size > 100, 'and spreads the retries')
})

t.test('a Retry-After is waited for when longer than the step, up to 10 hours; a shorter one changes nothing', async (t) => {
  const half = () => 0.5
  t.equal(retryDelayMs([5], 1, 120_000, half), 120_000)
  t.equal(retryDelayMs([5], 1, 1000, half), 5000, 'the schedule is the least wait')
  t.equal(retryDelayMs([5], 1, 365 * 86_400_000, half), MAX_RETRY_AFTER_MS, 'bounded')
  t.equal(MAX_RETRY_AFTER_MS, 36_000_000)
  t.equal(retryDelayMs([5], 2, 120_000, half), null, 'it does not add attempts')
})

t.test('Retry-After is read as delay-seconds or an HTTP date', async (t) => {
  const now = Date.parse('2026-11-24T12:00:00Z')
  t.equal(parseRetryAfter('120', now), 120_000)
  t.equal(parseRetryAfter(' 0 ', now), 0)
  t.equal(parseRetryAfter('Tue, 24 Nov 2026 12:01:30 GMT', now), 90_000)
  t.equal(parseRetryAfter('Tue, 24 Nov 2026 11:00:00 GMT', now), 0, 'a date past is no wait')
  for (const value of [undefined, null, '', '-5', '1.5', '1e3', 'soon', '2026-11-24T12:01:30Z', 'Tue, 99 Nov 2026 25:00:00 GMT']) {
    t.equal(parseRetryAfter(value, now), null, `${JSON.stringify(value)} is ignored`)
  }
})
