// Hands the Kysely instance to the routes. Whoever created it closes it.
import fp from 'fastify-plugin'
import type { Db } from '../db/index.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
  }
}

export default fp<{ db: Db }>(async (fastify, { db }) => {
  fastify.decorate('db', db)
}, { name: 'db' })
