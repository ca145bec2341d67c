// /health/live and /health/ready: for orchestrators and load balancers. No token,
// no rate limit, and each costs at most one short query.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type from 'typebox'
import { ApiError, unavailable } from '../errors.js'
import { ErrorRef, ErrorSchema, Shared } from '../schemas/common.js'
import { expectedMigrations } from '../db/migrate.js'
import { readiness } from '../db/readiness.js'

/** A readiness probe that waits longer than this has its answer already: not ready. */
const READY_TIMEOUT_MS = 2000

const LiveSchema = Type.Object({ status: Type.Literal('live') }, { description: 'The process is up', examples: [{ status: 'live' }] })
const ReadySchema = Type.Object({
  status: Type.Literal('ready'),
  migration: Type.String({ description: 'The newest migration applied' }),
  rate_limit: Type.Enum(['off', 'local', 'shared', 'degraded'], {
    description: 'Where the rate limits are counted: `off` (none set), `local` (in this instance), `shared` (in Redis, ' +
      'REDIS_URL), or `degraded` (Redis is unreachable: requests are let through without a limit until it is back; ' +
      'the instance still serves, so it stays ready)'
  })
}, {
  description: 'The database answers, takes writes, grants what this service needs and has every migration of this build',
  examples: [{ status: 'ready', migration: '20261122000000_initial', rate_limit: 'shared' }]
})

/**
 * The readiness probe: the database's state, or the 503 it is, each change of
 * reason logged once (a probe every few seconds would otherwise repeat it).
 */
function readinessProbe (fastify: FastifyInstance, latest: string | null): () => Promise<{ status: 'ready', migration: string }> {
  /** The database's state, or the 503 it is (logged once per change of reason). */
  async function ready (): Promise<{ status: 'ready', migration: string }> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(unavailable('the database did not answer in time')), READY_TIMEOUT_MS)
    })
    const [error, state] = await fastify.to(Promise.race([readiness(fastify.db), timeout]))
    clearTimeout(timer)
    if (error) {
      if (error instanceof ApiError) {
        report(error.message)
        throw error
      }
      const code = (error as { code?: unknown }).code
      // A missing migration table (42P01) is a database not yet migrated.
      const answer = code === '42P01'
        ? unavailable('the database has not been migrated; run the migrations')
        : unavailable('the database is unavailable')
      report(code === '42P01' ? answer.message : `the database is unavailable (${typeof code === 'string' ? code : 'no code'})`, error)
      throw answer
    }
    // A database with no migration applied is never ready, whatever this build ships.
    if (state.migration === null || state.migration !== latest) {
      const schema = `the database schema is at ${state.migration ?? 'nothing'}, not ${latest ?? 'nothing'}; run the migrations`
      report(schema)
      throw unavailable(schema)
    }
    // Why the service cannot serve is the operator's to read, in the log: the
    // prober is told only that it cannot.
    const unusable = state.readOnly
      ? 'the database is read-only (a standby, or default_transaction_read_only): mutations fail'
      : state.missing.length > 0 ? `the database role lacks ${state.missing.join(', ')}` : null
    report(unusable)
    if (unusable !== null) throw unavailable('the database is unavailable')
    return { status: 'ready' as const, migration: state.migration }
  }

  // The reason last logged: a probe every few seconds logs each change of state once.
  let lastReason: string | null = null
  function report (reason: string | null, cause?: unknown): void {
    if (reason === lastReason) return
    lastReason = reason
    if (reason === null) fastify.log.info('ready')
    else fastify.log.warn(cause === undefined ? {} : { err: cause }, `not ready: ${reason}`)
  }
  return ready
}

const health: FastifyPluginAsyncTypebox = async (fastify) => {
  // Known once at start: the migrations this build ships with.
  const ready = readinessProbe(fastify, (await expectedMigrations()).at(-1) ?? null)

  fastify.get('/live', {
    config: { rateLimit: false },
    schema: {
      operationId: 'checkLiveness',
      summary: 'The process is up',
      description: 'Liveness probe: answers without touching the database. No token, no rate limit.',
      tags: ['health'],
      security: [],
      response: { 200: LiveSchema, 500: ErrorRef }
    }
  }, async () => ({ status: 'live' as const }))

  fastify.get('/ready', {
    config: { rateLimit: false },
    schema: {
      operationId: 'checkReadiness',
      summary: 'The database is reachable, writable, current and usable by this service',
      description: 'Readiness probe: one short query, answered within 2 s. 503 while the database is unreachable, ' +
        'read-only (a standby after a failover: reads still work, mutations are 503), missing a privilege this ' +
        'service needs on one of its tables, or not migrated to this build\'s newest migration. The answer does ' +
        'not name a read-only database or a missing privilege; the server logs each reason at warn, once when it ' +
        'starts. `rate_limit` says where the rate limits are counted, and `degraded` while Redis is unreachable ' +
        '(requests are then let through without a limit). No token, no rate limit.',
      tags: ['health'],
      security: [],
      response: {
        200: ReadySchema,
        500: ErrorRef,
        503: Shared(ErrorSchema, {
          description: 'Not ready: the database is unreachable, too slow, read-only, lacks a privilege or is not migrated to this build',
          examples: [unavailable('the database is unavailable').body()]
        })
      }
    }
  }, async () => ({ ...await ready(), rate_limit: fastify.rateLimitState() }))

}

export default health
