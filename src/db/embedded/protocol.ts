// What crosses between the thread serving HTTP and the database thread. Only
// structured-clonable values cross, so errors travel as their fields and are rebuilt
// on the other side: the error handler must see a SQLSTATE in `code`, as it does
// from `pg`, whichever database answered. JSON columns cross as text, parsed on
// arrival: copying a string between threads costs a fraction of copying the objects
// parsed from it, and the thread serving HTTP has time to spare.
import type { PGliteOptions, Results } from '@electric-sql/pglite'

/** When the database thread does its upkeep on its own (upkeep.ts); null: the default. */
export interface UpkeepTiming {
  /** How often it looks for tables to vacuum or analyze: PostgreSQL's autovacuum_naptime (60 s) by default. */
  upkeepIntervalMs: number | null
  /** How long it must have had no statement to run before a pass it began takes a turn: 100 ms by default. */
  upkeepQuietMs: number | null
  /** How long such a pass waits for that quiet before it takes its turns between statements anyway: one interval by default. */
  upkeepMaxWaitMs: number | null
}

/** What the database thread is started with. */
export interface ThreadOptions extends UpkeepTiming {
  /** Where PGlite keeps its files; null keeps it in memory. */
  dataDir: string | null
  /** Lines for postgresql.conf (tests: a smaller max_wal_size, say); none by default. */
  settings: string[]
  /** A tarball of a data directory (PGlite's dumpDataDir) to start from instead of an empty one: tests start each database migrated. */
  loadDataDir?: Uint8Array
  /** PGlite's WebAssembly, compiled already: tests compile it once for all their databases. */
  wasmModule?: PGliteOptions['pgliteWasmModule']
}

/** What one pass of the embedded database's upkeep did (upkeep.ts): tables by schema-qualified name. */
export interface UpkeepReport {
  vacuumed: string[]
  analyzed: string[]
  /** Tables whose VACUUM or ANALYZE failed (dropped meanwhile, say), with why; the pass went on. */
  failed: Array<{ table: string, error: string }>
  /** Whether it made a checkpoint (one was due, by the checkpointer's rules). */
  checkpointed: boolean
}

/**
 * A statement for the database thread; `session` tells whose transaction it
 * belongs to. A query with a `name` is parsed once and then bound by name (named.ts).
 */
export type ToThread =
  | { id: number, session: number, kind: 'query', sql: string, params: unknown[], name?: string }
  | { id: number, session: number, kind: 'exec', sql: string }
  | { id: number, session: number, kind: 'release' }
  | { id: number, session: number, kind: 'upkeep' }
  | { id: number, session: number, kind: 'close' }

/** An error as it crosses threads: its name, message and PostgreSQL's fields (`code` the SQLSTATE). */
export interface ThreadError {
  name: string
  message: string
  fields: Record<string, string | number>
}

export type FromThread =
  | { started: true }
  | { started: false, error: ThreadError }
  | { id: number, ok: true, value: unknown, inTransaction: boolean }
  | { id: number, ok: false, error: ThreadError, inTransaction: boolean }

/** How the database thread answers: through its port, or straight to a test. */
export type Send = (message: FromThread) => void

/** One statement's result as it crosses from the database thread: `json` and `jsonArrays` name the columns still to parse. */
export interface StatementResult {
  rows: unknown[]
  command?: string
  rowCount?: number
  json?: string[]
  jsonArrays?: string[]
}

// Dates stay `YYYY-MM-DD` strings: turning them into a Date would shift them by the
// process time zone.
const DATE_OID = 1082
const JSON_OIDS = new Set([114, 3802])
const JSON_ARRAY_OIDS = new Set([199, 3807])
const asText = (value: string) => value

/** PGlite's parsers for the types that cross as their text: dates, and JSON to be parsed on arrival. */
export const TEXT_PARSERS = Object.fromEntries([DATE_OID, ...JSON_OIDS].map((oid) => [oid, asText]))

/** A result as it crosses: its rows, and which of their columns hold JSON text (or arrays of it) to parse. */
export function crossing ({ rows, command, rowCount, fields }: Results): StatementResult {
  const json = fields.filter((field) => JSON_OIDS.has(field.dataTypeID)).map((field) => field.name)
  const jsonArrays = fields.filter((field) => JSON_ARRAY_OIDS.has(field.dataTypeID)).map((field) => field.name)
  return { rows, command, rowCount, ...(json.length > 0 ? { json } : {}), ...(jsonArrays.length > 0 ? { jsonArrays } : {}) }
}

type Row = Record<string, unknown>

function parseJsonArray (value: unknown): unknown {
  return Array.isArray(value) ? value.map(parseJsonArray) : typeof value === 'string' ? JSON.parse(value) : value
}

/** The result as PGlite's query() gives it: JSON columns parsed. */
export function parsed (result: StatementResult): StatementResult {
  const { json = [], jsonArrays = [] } = result
  if (json.length === 0 && jsonArrays.length === 0) return result
  for (const row of result.rows as Row[]) {
    for (const name of json) {
      const value = row[name]
      if (typeof value === 'string') row[name] = JSON.parse(value)
    }
    for (const name of jsonArrays) row[name] = parseJsonArray(row[name])
  }
  return result
}

// What a PostgreSQL error carries besides its message (pg-protocol's DatabaseError).
// The statement and its values are left behind: they may hold a token digest.
const ERROR_FIELDS = ['severity', 'code', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery',
  'where', 'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine'] as const

/** An error as it leaves the database thread. */
export function describe (error: unknown): ThreadError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} }
  const fields: Record<string, string | number> = {}
  for (const field of ERROR_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[field]
    if (typeof value === 'string' || typeof value === 'number') fields[field] = value
  }
  return { name: error.name, message: error.message, fields }
}

/** What a statement sent once the database is closing gets, as from PostgreSQL shutting down (admin_shutdown). */
export const CLOSED: ThreadError = { name: 'Error', message: 'the embedded database is closed', fields: { code: '57P01' } }

/** An error PGlite raised, as it arrives: `code` is the SQLSTATE, as on errors from `pg`. */
export class EmbeddedDatabaseError extends Error {
  code?: string
  detail?: string
  constraint?: string

  constructor (error: ThreadError) {
    super(error.message)
    Object.assign(this, error.fields)
    this.name = error.name
  }
}
