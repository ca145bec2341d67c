// /health/live and /health/ready: for orchestrators and load balancers. No token,
// no rate limit, and each costs at most one short query.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { sql } from 'kysely'
import { ApiError } from '../../errors.js'
import { ErrorRef } from '../../schemas/common.js'
import { expectedMigrations } from '../../db/migrate.js'

/** A readiness probe that waits longer than this has its answer already: not ready. */
const READY_TIMEOUT_MS = 2000

const LiveSchema = Type.Object({ status: Type.Literal('live') }, { description: 'The process is up', examples: [{ status: 'live' }] })
const ReadySchema = Type.Object({
  status: Type.Literal('ready'),
  migration: Type.String({ description: 'The newest migration applied' })
}, {
  description: 'The database answers and has every migration of this build',
  examples: [{ status: 'ready', migration: '20261122000000_initial' }]
})

function notReady (message: string): ApiError {
  return new ApiError(503, 'unavailable', message, undefined, { 'retry-after': '1' })
}

const health: FastifyPluginAsyncTypebox = async (fastify) => {
  // Known once at start: the migrations this build ships with.
  const latest = (await expectedMigrations()).at(-1) ?? null

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
      summary: 'The database is reachable and its schema is current',
      description: 'Readiness probe: one short query, answered within 2 s. 503 while the database is unreachable ' +
        'or not migrated to this build\'s newest migration. No token, no rate limit.',
      tags: ['health'],
      security: [],
      response: {
        200: ReadySchema,
        500: ErrorRef,
        503: Type.Ref('Error', {
          description: 'Not ready: the database is unreachable, too slow or not migrated to this build',
          examples: [notReady('the database is unavailable').body()]
        })
      }
    }
  }, async () => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(notReady('the database did not answer in time')), READY_TIMEOUT_MS)
    })
    try {
      const applied = await Promise.race([
        sql<{ name: string }>`SELECT max(name) AS name FROM kysely_migration`.execute(fastify.db),
        timeout
      ])
      const migration = applied.rows[0]?.name ?? null
      if (migration !== latest) throw notReady(`the database schema is at ${migration ?? 'nothing'}, not ${latest ?? 'nothing'}; run the migrations`)
      return { status: 'ready' as const, migration }
    } catch (error) {
      if (error instanceof ApiError) throw error
      // A missing migration table (42P01) is a database not yet migrated.
      if ((error as { code?: string }).code === '42P01') throw notReady('the database has not been migrated; run the migrations')
      fastify.log.warn({ err: error }, 'readiness check failed')
      throw notReady('the database is unavailable')
    } finally {
      clearTimeout(timer)
    }
  })
}

export default health
