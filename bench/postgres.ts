// The bench's own statements to PostgreSQL outside the servers: creating and
// dropping databases, VACUUM, CHECKPOINT, a round trip's time. Each on a
// connection of its own.
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

/** `url` with its database replaced by `database`. */
export function withDatabase (url: string, database: string): string {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/** The database anew (empty); PostgreSQL's version. */
export async function recreateDatabase (url: string, database: string): Promise<string> {
  return await connected(url, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${database}`)
    const { rows } = await client.query<{ version: string }>('SELECT version()')
    return rows[0]!.version.replace(/ on .*$/, '')
  })
}

export async function dropDatabase (url: string, database: string): Promise<void> {
  await connected(url, async (client) => { await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`) })
}

/**
 * VACUUM of a database, as autovacuum would keep it between runs: every rename and
 * description change leaves dead rows (and dead TOAST chunks of the old description)
 * that later runs would read past, and PostgreSQL may run with autovacuum off.
 */
export async function vacuum (url: string): Promise<void> {
  await connected(url, async (client) => { await client.query('VACUUM') })
}

/** Why PostgreSQL refused the bench's CHECKPOINT, once it has (the bench then goes on without). */
let checkpointRefused: string | null = null

/**
 * A CHECKPOINT of the PostgreSQL server right before each turn, so that each begins
 * in the same state of the write-ahead log: the first change of a page after a
 * checkpoint writes the whole page to the log, and a checkpoint set off by an
 * earlier turn's changes would otherwise fall in whichever turn comes next. Needs a
 * superuser or pg_checkpoint; refused, the bench says so once and goes on.
 */
export async function checkpoint (url: string, say: (line: string) => void): Promise<void> {
  if (checkpointRefused !== null) return
  try {
    await connected(url, async (client) => { await client.query('CHECKPOINT') })
  } catch (error) {
    checkpointRefused = (error as Error).message
    say(`CHECKPOINT refused (${checkpointRefused}): turns may begin in different states of the write-ahead log`)
  }
}

/** The round trip of `SELECT 1` on one connection, median of 200, in ms. */
export async function roundTripMs (url: string): Promise<number> {
  return await connected(url, async (client) => {
    const times: number[] = []
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now()
      await client.query('SELECT 1')
      times.push(performance.now() - t0)
    }
    return times.sort((a, b) => a - b)[100]!
  })
}
