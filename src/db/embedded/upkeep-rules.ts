// What the embedded database's upkeep is due to do, by the rules of the daemons
// PGlite lacks. PGlite runs PostgreSQL as a single process in single-user mode,
// which has no autovacuum: left alone, every update leaves the row it replaced
// behind for good (a description change, its old text in the TOAST table), tables
// and indexes only grow, the planner's statistics stay those of the day the data
// was loaded, and old transaction ids are never frozen. Nor has it a checkpointer,
// and a single-user backend never asks for a checkpoint itself: the write-ahead log
// grows for as long as the database is open (past a gigabyte in 150 s of
// description changes), and after a crash the next start replays all of it. The
// rules here are theirs, with PostgreSQL's own settings for them, so that an
// operator tunes them as on PostgreSQL; PGlite keeps the cumulative statistics
// autovacuum's rules read, as PostgreSQL does, for as long as the process lives.
// When the work is done is upkeep.ts's business.
import type { PGlite } from '@electric-sql/pglite'

/** What one table is due for. */
export interface UpkeepStep {
  /** Schema-qualified, quoted where it must be (format's %I). */
  table: string
  vacuum: boolean
  analyze: boolean
}

/**
 * The tables autovacuum would work on now, and what for (the rules of
 * PostgreSQL's "The Autovacuum Daemon", with its settings): VACUUM when the dead
 * rows of the table or of its TOAST table exceed autovacuum_vacuum_threshold +
 * autovacuum_vacuum_scale_factor × its rows, when the rows inserted since its
 * last vacuum exceed the insert threshold and scale factor (so that pages are
 * marked all-visible and frozen), or when its oldest transaction id is older than
 * autovacuum_freeze_max_age; ANALYZE when the rows changed since its last analyze
 * exceed autovacuum_analyze_threshold + autovacuum_analyze_scale_factor × its rows,
 * or when it was never analyzed nor vacuumed (its row count unknown): the
 * statistics that would have called for it may have gone with an earlier process.
 * Every table of every schema, the system catalogs included (autovacuum does them
 * too, and freezing needs every table); TOAST tables go with their own.
 */
const TABLES_DUE = `
WITH settings AS (
  SELECT current_setting('autovacuum_vacuum_threshold')::float8 AS vacuum_threshold,
    current_setting('autovacuum_vacuum_scale_factor')::float8 AS vacuum_scale,
    current_setting('autovacuum_vacuum_insert_threshold')::float8 AS insert_threshold,
    current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS insert_scale,
    current_setting('autovacuum_analyze_threshold')::float8 AS analyze_threshold,
    current_setting('autovacuum_analyze_scale_factor')::float8 AS analyze_scale,
    current_setting('autovacuum_freeze_max_age')::float8 AS freeze_max_age
), due AS (
  SELECT format('%I.%I', n.nspname, c.relname) AS "table",
    coalesce(s.n_dead_tup, 0) > vacuum_threshold + vacuum_scale * greatest(c.reltuples, 0)
      OR coalesce(s.n_ins_since_vacuum, 0) > insert_threshold + insert_scale * greatest(c.reltuples, 0)
      OR coalesce(ts.n_dead_tup, 0) > vacuum_threshold + vacuum_scale * greatest(tc.reltuples, 0)
      OR age(c.relfrozenxid) > freeze_max_age
      OR coalesce(age(tc.relfrozenxid) > freeze_max_age, false) AS vacuum,
    coalesce(s.n_mod_since_analyze, 0) > analyze_threshold + analyze_scale * greatest(c.reltuples, 0)
      OR c.reltuples < 0 AS "analyze"
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
  LEFT JOIN pg_class tc ON tc.oid = c.reltoastrelid
  LEFT JOIN pg_stat_all_tables ts ON ts.relid = tc.oid
  CROSS JOIN settings
  WHERE c.relkind IN ('r', 'm') AND c.relpersistence <> 't' AND n.nspname NOT IN ('pg_toast', 'information_schema')
)
SELECT "table", vacuum, "analyze" FROM due WHERE vacuum OR "analyze" ORDER BY "table"`

/** The tables due now, from statistics brought up to date first (this session's are flushed only now and then). */
export async function tablesDue (pglite: PGlite): Promise<UpkeepStep[]> {
  await pglite.query('SELECT pg_stat_force_next_flush()')
  return (await pglite.query<UpkeepStep>(TABLES_DUE)).rows
}

/** The command that does one table's upkeep. */
export function upkeepCommand ({ table, vacuum, analyze }: UpkeepStep): string {
  return vacuum ? `VACUUM ${analyze ? '(ANALYZE) ' : ''}${table}` : `ANALYZE ${table}`
}

/** How often autovacuum looks at a database: its autovacuum_naptime (60 s unless set), in ms. */
export async function naptimeMs (pglite: PGlite): Promise<number> {
  const { rows } = await pglite.query<{ ms: number }>(`SELECT extract(epoch FROM current_setting('autovacuum_naptime')::interval)::float8 * 1000 AS ms`)
  return rows[0]?.ms ?? 60_000
}

// Whether a checkpoint is due, by the checkpointer's rules ("WAL Configuration"
// in PostgreSQL's documentation), with its settings: once the log written since
// the last checkpoint's redo point reaches max_wal_size ÷ (1 +
// checkpoint_completion_target), in whole segments, at least one; or once
// checkpoint_timeout has passed since the last checkpoint, if anything was
// written since ($1: where the log ended right after it, as this process saw it;
// $2: the time now, in ms since 1970, from the upkeep's clock).
// PostgreSQL's checkpointer spreads the writes over the interval; a single-user
// backend writes them at once.
const CHECKPOINT_DUE = `
WITH settings AS (
  SELECT pg_size_bytes(current_setting('wal_segment_size'))::float8 AS segment,
    pg_size_bytes(current_setting('max_wal_size'))::float8 AS max_wal,
    current_setting('checkpoint_completion_target')::float8 AS target,
    current_setting('checkpoint_timeout')::interval AS timeout
)
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), c.redo_lsn) >= greatest(floor(max_wal / segment / (1 + target)), 1) * segment
    OR (to_timestamp($2::float8 / 1000) - c.checkpoint_time >= timeout AND pg_current_wal_insert_lsn() <> $1::pg_lsn) AS due
FROM pg_control_checkpoint() c CROSS JOIN settings`

/**
 * Whether a checkpoint is due at `epochMs` (ms since 1970); `since`: where the log
 * ended right after the last one this process knows of.
 */
export async function checkpointDue (pglite: PGlite, since: string, epochMs: number): Promise<boolean> {
  return (await pglite.query<{ due: boolean }>(CHECKPOINT_DUE, [since, epochMs])).rows[0]?.due === true
}

/** Where the log ends now (after a checkpoint, the point a later one on time compares with). */
export async function walEnd (pglite: PGlite): Promise<string> {
  return (await pglite.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn
}
