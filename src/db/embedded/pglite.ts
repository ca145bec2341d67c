// PGlite opened as the database thread runs it, in one place so that a test can
// open it the same way in its own thread: the same parsers (what crosses as text,
// protocol.ts), the same settings, the same plan cache mode as on PostgreSQL.
import { PGlite } from '@electric-sql/pglite'
import { TEXT_PARSERS, type ThreadOptions } from './protocol.js'
import { PLAN_CACHE_MODE } from '../statement-names.js'

export async function openPGlite ({ dataDir, settings }: Pick<ThreadOptions, 'dataDir' | 'settings'>): Promise<PGlite> {
  const pglite = await PGlite.create(dataDir ?? 'memory://', {
    parsers: TEXT_PARSERS,
    ...(settings.length > 0 ? { postgresqlconf: settings } : {})
  })
  // The session's setting, for the whole life of its one connection.
  await pglite.exec(`SET plan_cache_mode = ${PLAN_CACHE_MODE}`)
  return pglite
}
