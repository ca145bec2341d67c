// PGlite opened as the database thread runs it, in one place so that a test can
// open it the same way in its own thread: the same parsers (what crosses as text,
// protocol.ts), the same settings.
import { PGlite } from '@electric-sql/pglite'
import { TEXT_PARSERS, type ThreadOptions } from './protocol.js'

export async function openPGlite ({ dataDir, settings, loadDataDir }: Pick<ThreadOptions, 'dataDir' | 'settings' | 'loadDataDir'>): Promise<PGlite> {
  return await PGlite.create(dataDir ?? 'memory://', {
    parsers: TEXT_PARSERS,
    ...(settings.length > 0 ? { postgresqlconf: settings } : {}),
    ...(loadDataDir !== undefined ? { loadDataDir } : {})
  })
}
