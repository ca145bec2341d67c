// The process's metrics (prom-client), in one registry that the metrics server
// (server.ts) writes out in Prometheus's text format: the process's defaults,
// the requests by route template, the MCP tool calls, the rejections, the
// webhook attempts, and gauges read at scrape time (the database pool, the
// webhook backlog). A label only ever holds a value from a fixed set or a route
// template of the app: never a URL, a token, an id, an e-mail or a name.
import client from 'prom-client'
import { sql } from 'kysely'
import { embeddedDatabase, poolOf, type Db } from '../db/index.js'

export const registry = new client.Registry()
client.collectDefaultMetrics({ register: registry })
// Three of the defaults are gauges named like counters, which `promtool check metrics` refuses;
// each is the sum of a series kept beside it (nodejs_active_handles{type} and the like).
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
  registry.removeSingleMetric(name)
}

const registers = [registry]

/** Latency buckets, seconds: from a cached read to a request near its statement timeout. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const httpRequests = new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  registers
})

const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request\'s arrival to its answer, by method, route template and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: BUCKETS,
  registers
})

const mcpToolCalls = new client.Counter({
  name: 'mcp_tool_calls_total',
  help: 'MCP tool calls, by tool and outcome (success, tool_error: the operation refused, invalid_arguments, exception)',
  labelNames: ['tool', 'outcome'] as const,
  registers
})

const rateLimitRejections = new client.Counter({
  name: 'rate_limit_rejections_total',
  help: 'Requests refused with 429, by budget (requests: per token or address; auth_failures: failed authentications per address)',
  labelNames: ['limit'] as const,
  registers
})

const authFailures = new client.Counter({
  name: 'auth_failures_total',
  help: 'Requests refused by authentication, by reason (missing, empty, invalid, revoked, expired, suspended, ambiguous, read_only)',
  labelNames: ['reason'] as const,
  registers
})

const webhookAttempts = new client.Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts recorded by this process, by outcome (delivered, retried: failed with a retry scheduled, failed: given up)',
  labelNames: ['outcome'] as const,
  registers
})

/** The methods a request may be labelled with; any other is `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** The route label of a request that matched no route: its URL is never a label. */
export const UNMATCHED_ROUTE = 'unmatched'

/** Counts an answered request; `route` is the route template (undefined when none matched). */
export function observeRequest (method: string, route: string | undefined, statusCode: number, elapsedMs: number): void {
  const labels = { method: METHODS.has(method) ? method : 'other', route: route ?? UNMATCHED_ROUTE, status_code: String(statusCode) }
  httpRequests.inc(labels)
  httpDuration.observe(labels, elapsedMs / 1000)
}

export type ToolOutcome = 'success' | 'tool_error' | 'invalid_arguments' | 'exception'

/** Counts a call of a tool of the catalog (an unknown tool's name, which the client chose, is never a label). */
export function countToolCall (tool: string, outcome: ToolOutcome): void {
  mcpToolCalls.inc({ tool, outcome })
}

export function countRateLimited (limit: 'requests' | 'auth_failures'): void {
  rateLimitRejections.inc({ limit })
}

export type AuthFailureReason = 'missing' | 'empty' | 'invalid' | 'revoked' | 'expired' | 'suspended' | 'ambiguous' | 'read_only'

export function countAuthFailure (reason: AuthFailureReason): void {
  authFailures.inc({ reason })
}

export function countWebhookAttempt (outcome: 'delivered' | 'retry' | 'failed'): void {
  webhookAttempts.inc({ outcome: outcome === 'retry' ? 'retried' : outcome })
}

/** The database the gauges read at scrape time: the last one watched. */
let watched: Db | null = null

/** Reads the pool and backlog gauges from `db` from now on; the function returned stops it. */
export function watchDatabase (db: Db): () => void {
  watched = db
  return () => { if (watched === db) watched = null }
}

/** The pool's counts: pg's Pool, or the embedded database's one connection. */
function poolCounts (db: Db): { max: number, total: number, idle: number, waiting: number } | null {
  const pool = poolOf(db)
  if (pool !== null) return { max: pool.options.max, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }
  const embedded = embeddedDatabase(db)
  if (embedded === null) return null
  const inFlight = embedded.inFlight()
  return { max: 1, total: 1, idle: inFlight === 0 ? 1 : 0, waiting: Math.max(0, inFlight - 1) }
}

function poolGauge (name: string, help: string, field: 'max' | 'total' | 'idle' | 'waiting') {
  return new client.Gauge({
    name,
    help,
    registers,
    collect () {
      const counts = watched === null ? null : poolCounts(watched)
      if (counts === null) this.reset()
      else this.set(counts[field])
    }
  })
}

poolGauge('db_pool_max_connections', 'Connections the database pool may open (DB_POOL_SIZE; 1 on the embedded database)', 'max')
poolGauge('db_pool_connections', 'Connections the database pool holds open, busy or idle', 'total')
poolGauge('db_pool_idle_connections', 'Open connections of the pool not in use', 'idle')
poolGauge('db_pool_waiting_clients', 'Queries waiting for a connection of the pool (on the embedded database: statements queued behind the one running)', 'waiting')

interface Backlog { pending: number, oldestAgeSeconds: number }

/** The backlog, read once per scrape by the first gauge collected and shared with the second. */
let backlog: Promise<Backlog | null> | null = null
/** The last backlog read, given again while the pool has no connection to spare. */
let lastBacklog: Backlog | null = null

async function readBacklog (): Promise<Backlog | null> {
  if (watched === null) return null
  // A scrape never queues for a connection: a saturated pool is what it must show, not worsen.
  // (The embedded database queues every statement behind the one running: nothing to spare there.)
  const pool = poolOf(watched)
  if (pool !== null && pool.idleCount === 0 && pool.totalCount >= pool.options.max) return lastBacklog
  // The pending deliveries are few (webhook_deliveries_pending_idx holds only them).
  const row = await sql<{ pending: string, age: number | null }>`
    SELECT count(*) AS pending, extract(epoch FROM now() - min(inserted_at))::float8 AS age
    FROM webhook_deliveries WHERE status = 'pending'`.execute(watched).then((r) => r.rows[0], () => undefined)
  lastBacklog = row === undefined ? null : { pending: Number(row.pending), oldestAgeSeconds: Math.max(0, row.age ?? 0) }
  return lastBacklog
}

function sharedBacklog (): Promise<Backlog | null> {
  backlog ??= readBacklog().finally(() => { setImmediate(() => { backlog = null }) })
  return backlog
}

new client.Gauge({
  name: 'webhook_deliveries_pending',
  help: 'Webhook deliveries not yet delivered or given up on (in the database: all processes\' alike)',
  registers,
  async collect () {
    const read = await sharedBacklog()
    if (read === null) this.reset()
    else this.set(read.pending)
  }
})

new client.Gauge({
  name: 'webhook_oldest_pending_delivery_age_seconds',
  help: 'Age of the oldest pending webhook delivery (0 when none is pending)',
  registers,
  async collect () {
    const read = await sharedBacklog()
    if (read === null) this.reset()
    else this.set(read.oldestAgeSeconds)
  }
})
