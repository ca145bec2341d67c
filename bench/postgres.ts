// The bench's own statements to PostgreSQL outside any app database: creating and
// dropping databases, VACUUM, pg_stat_statements. Each on a connection of its own.
import pg from 'pg'

/** `work` on a connection of its own to `url`, closed afterwards. */
export async function connected<T> (url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * Whether PostgreSQL loads pg_stat_statements (shared_preload_libraries; loading it
 * needs a restart, which the bench never does): null when it does, the extension
 * then installed in the client's database; else why its figures cannot be read.
 */
export async function statementStatsMissing (client: pg.Client): Promise<string | null> {
  const { rows: [preload] } = await client.query<{ v: string }>("SELECT current_setting('shared_preload_libraries') AS v")
  if (!preload!.v.split(',').map((l) => l.trim()).includes('pg_stat_statements')) {
    return `pg_stat_statements is not loaded (shared_preload_libraries = '${preload!.v}'); loading it needs a restart of PostgreSQL, which the bench does not do`
  }
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  return null
}
