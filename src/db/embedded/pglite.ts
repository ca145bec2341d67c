// PGlite opened as the database thread runs it, in one place so that a test can
// open it the same way in its own thread: the same parsers (what crosses as text,
// protocol.ts), the same settings.
import { PGlite } from '@electric-sql/pglite'
import { TEXT_PARSERS, type ThreadOptions } from './protocol.js'

export async function openPGlite ({ dataDir, settings, loadDataDir, wasmModule }: Pick<ThreadOptions, 'dataDir' | 'settings' | 'loadDataDir' | 'wasmModule'>): Promise<PGlite> {
  return await PGlite.create(dataDir ?? 'memory://', {
    parsers: TEXT_PARSERS,
    ...(wasmModule !== undefined ? { pgliteWasmModule: wasmModule } : {}),
    ...(settings.length > 0 ? { postgresqlconf: settings } : {}),
    ...(loadDataDir !== undefined ? { loadDataDir: tarball(loadDataDir) } : {})
  })
}

/**
 * A tarball's bytes as the Blob PGlite asks for, of which it reads only
 * `arrayBuffer()` and `type`: a Blob of Node's copies its bytes out through a
 * stream reader, a quarter of a second for a migrated data directory (42 MB).
 */
function tarball (bytes: Uint8Array): Blob {
  const buffer = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer
  return { type: 'application/x-tar', arrayBuffer: async () => buffer } as unknown as Blob
}
