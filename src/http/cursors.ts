// The codec of page cursors, keyed by the database's own signing key. The key is
// read once, when the app is ready; should the database be away then, it is read
// by the first request that needs it.
import fp from 'fastify-plugin'
import { CursorCodec } from './cursor.js'
import { signingKey } from '../db/signing-keys.js'

declare module 'fastify' {
  interface FastifyInstance {
    cursors: () => Promise<CursorCodec>
  }
}

export default fp(async (fastify) => {
  let codec: Promise<CursorCodec> | undefined
  const load = () => {
    codec ??= signingKey(fastify.db, 'cursors').then((key) => new CursorCodec(key))
    // A failed read is not kept: the next request tries again.
    codec.catch(() => { codec = undefined })
    return codec
  }
  fastify.decorate('cursors', load)
  fastify.addHook('onReady', async () => { await load().catch(() => {}) })
}, { name: 'cursors', dependencies: ['db'] })
