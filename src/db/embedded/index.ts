// The one door into the embedded database (PGlite in a worker thread): the rest of
// the service opens and closes it and talks to it through Kysely, and need know
// nothing of what lies behind, in this folder: the thread's entry (thread.ts), the
// order it runs statements in (queue.ts), the messages between the threads
// (protocol.ts), its upkeep (upkeep.ts, upkeep-rules.ts) and its data directory
// (data-dir.ts).
export { EmbeddedDatabase, type EmbeddedOptions } from './database.js'
export { EmbeddedDialect, type EmbeddedDialectConfig } from './dialect.js'
export {
  EmbeddedDatabaseError,
  type FromThread, type StatementResult, type ThreadError, type ThreadOptions, type ToThread, type UpkeepReport, type UpkeepTiming
} from './protocol.js'
