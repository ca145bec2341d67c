// A fresh, migrated database for one test file, so files can run in parallel:
// a new database on DATABASE_URL's server when set, else a PostgreSQL container
// when Docker is there, else an in-memory PGlite.
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import type { LogConfig } from 'kysely'
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { createDb, dbOptions, type Db, type DbOptions } from '../src/db/index.js'
import { migrateToLatest } from '../src/db/migrate.js'

export interface TestDatabase {
  db: Db
  /** The URL of the database, or undefined for an embedded one. */
  url: string | undefined
  close: () => Promise<void>
}

async function withAdmin<T> (url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try { return await fn(client) } finally { await client.end() }
}

// Without a Docker socket there is no engine to ask: skip the slow failing start.
function dockerReachable (): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock') ||
    existsSync(`${process.env.HOME ?? ''}/.docker/run/docker.sock`) || existsSync(`${process.env.HOME ?? ''}/.testcontainers.properties`)
}

async function containerUrl (): Promise<{ url: string, stop: () => Promise<unknown> } | null> {
  if (!dockerReachable()) return null
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
    const container = await new PostgreSqlContainer('postgres:16-alpine').start()
    return { url: container.getConnectionUri(), stop: () => container.stop() }
  } catch {
    return null
  }
}

/**
 * The database options production takes from this environment: its pool, statement
 * and connection timeouts, unless the environment sets them. Nothing from the
 * process's own environment.
 */
export function databaseOptions (env: Record<string, string | undefined> = {}): DbOptions {
  return dbOptions(loadConfig(env))
}

let container: Promise<{ url: string, stop: () => Promise<unknown> } | null> | undefined

/** `log` is Kysely's: a test can watch every statement the app sends. */
export async function createTestDatabase (options: { log?: LogConfig } = {}): Promise<TestDatabase> {
  let serverUrl = process.env.DATABASE_URL
  let stop: (() => Promise<unknown>) | undefined
  if (!serverUrl && process.env.TEST_NO_CONTAINERS !== '1') {
    container ??= containerUrl()
    const started = await container
    if (started) { serverUrl = started.url; stop = started.stop }
  }

  if (!serverUrl) {
    const db = await createDb({ ...databaseOptions(), dataDir: null }, { log: options.log })
    await migrateToLatest(db)
    return { db, url: undefined, close: () => db.destroy() }
  }

  const name = `test_${process.pid}_${randomBytes(4).toString('hex')}`
  await withAdmin(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const db = await createDb(databaseOptions({ DATABASE_URL: url.toString() }), { log: options.log })
  await migrateToLatest(db)
  return {
    db,
    url: url.toString(),
    close: async () => {
      await db.destroy()
      await withAdmin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      await stop?.()
    }
  }
}

/**
 * A fresh database whose app pool is one connection, so that a session setting
 * (SET ROLE, default_transaction_read_only) holds for every request; every
 * statement goes to `log`. Closed at the test's end.
 */
export async function oneConnectionDatabase (t: { teardown: (fn: () => unknown) => void }, log: LogConfig): Promise<Db> {
  const database = await createTestDatabase({ log })
  t.teardown(() => database.close())
  if (database.url === undefined) return database.db
  const db = await createDb(databaseOptions({ DATABASE_URL: database.url, DB_POOL_SIZE: '1' }), { log })
  t.teardown(() => db.destroy())
  return db
}
