// A fresh, migrated database for one test file, so files can run in parallel:
// a new database on DATABASE_URL's server when set, else a PostgreSQL container
// when Docker is there, else an in-memory PGlite.
//
// Migrating takes most of the time of making one (PGlite: its initdb and the
// migrations, seconds; PostgreSQL: a few hundred ms), and tests make hundreds:
// so each run migrates once per set of migrations and copies the result. On
// PostgreSQL the copy is `CREATE DATABASE … TEMPLATE` a migrated template
// database; on PGlite it starts from a tarball of a migrated data directory,
// kept in the temporary directory for the runs after. Tests of the embedded
// database itself start theirs empty from a tarball of one as initdb leaves it.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { appendFile, link, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { PGlite, type PGliteOptions } from '@electric-sql/pglite'
import type { LogConfig } from 'kysely'
import pg from 'pg'
import { UnpackSync } from 'tar'
import { loadConfig } from '../src/config.js'
import { createDb, dbOptions, type Db, type DbOptions } from '../src/db/index.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { pruneUnused } from './cache.js'
import { transpiledTree } from './transpiled.js'

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

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * What a migrated database is made of: the migrations, the code that applies them
 * and installs the job engine's schema, and the versions of pg-boss (its schema)
 * and PGlite (its data files). A copy is used only while all of these are the same.
 */
async function migrationsKey (): Promise<string> {
  const hash = createHash('sha256')
  const migrations = (await readdir(path.join(root, 'migrations'))).sort().map((name) => `migrations/${name}`)
  for (const file of [...migrations, 'src/db/migrate.ts', 'src/db/jobs.ts',
    'node_modules/pg-boss/package.json', 'node_modules/@electric-sql/pglite/package.json']) {
    const content = await readFile(path.join(root, file)).catch(() => 'missing')
    hash.update(`${file}\0${content.length}\0`).update(content)
  }
  return hash.digest('hex').slice(0, 16)
}

let key: Promise<string> | undefined

/**
 * The cursor key the migration drew, drawn again: a database copied from a
 * migrated one would otherwise share its key with every other copy, where freshly
 * migrated ones each have their own.
 */
async function newSigningKeys (db: Db): Promise<void> {
  await db.updateTable('signing_keys').set({ key: randomBytes(32) }).where('name', '=', 'cursors').execute()
}

// The data directories' tarballs, one file a kind and key, made by whichever process needs one first.
const snapshots = path.join(os.tmpdir(), `projects-api-test-${process.getuid?.() ?? 'user'}`)

/** What a snapshot holds: a data directory as initdb leaves it, or one migrated as the server migrates it. */
type SnapshotKind = 'initdb' | 'migrated'

/** The data directory of `kind`, made in `dataDir` (a directory with no database yet). */
async function makeDataDir (kind: SnapshotKind, dataDir: string): Promise<void> {
  const db = await createDb({ ...databaseOptions(), dataDir })
  try {
    if (kind === 'migrated') await migrateToLatest(db)
  } finally {
    await db.destroy()
  }
}

/**
 * Makes the data directory of `kind` on disk, through createDb as the server
 * would, and writes its tarball to `file`: linked into place once whole, so that
 * a process reading it never sees part of one, and one made at the same time by
 * another process is taken as it is.
 */
async function writeSnapshot (kind: SnapshotKind, file: string): Promise<void> {
  const work = await mkdtemp(path.join(snapshots, 'building-'))
  try {
    const dataDir = path.join(work, 'pgdata')
    await makeDataDir(kind, dataDir)
    const pglite = await PGlite.create(dataDir)
    const tarball = await pglite.dumpDataDir('none')
    await pglite.close()
    const written = path.join(work, 'pgdata.tar')
    await writeFile(written, Buffer.from(await tarball.arrayBuffer()))
    await link(written, file).catch((error: NodeJS.ErrnoException) => { if (error.code !== 'EEXIST') throw error })
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  await pruneUnused(snapshots, file, /^(pglite-|building-)/)
}

const made = new Map<SnapshotKind, Promise<Buffer>>()

/** The tarball of `kind`'s data directory, made on first use by this set of migrations. */
function snapshotOf (kind: SnapshotKind): Promise<Buffer> {
  let snapshot = made.get(kind)
  if (snapshot !== undefined) return snapshot
  snapshot = (async () => {
    await mkdir(snapshots, { recursive: true, mode: 0o700 })
    // A database is started from what lies there: only from this user's own directory.
    const { uid, mode } = await stat(snapshots)
    if (process.getuid !== undefined && (uid !== process.getuid() || (mode & 0o022) !== 0)) throw new Error(`${snapshots} is not this user's alone: remove it`)
    const file = path.join(snapshots, `pglite-${kind}-${await (key ??= migrationsKey())}.tar`)
    // Read whole now, so that a process pruning it later cannot take it from under
    // this one; touched, so that it is not pruned while runs still use it.
    const tarball = await readFile(file).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error
      await writeSnapshot(kind, file)
      return await readFile(file)
    })
    const now = new Date()
    await utimes(file, now, now).catch(() => {})
    // Shared memory: each database's thread gets the bytes without a copy (PGlite copies out what it unpacks).
    const shared = Buffer.from(new SharedArrayBuffer(tarball.length))
    tarball.copy(shared)
    return shared
  })()
  snapshot.catch(() => { made.delete(kind) })
  made.set(kind, snapshot)
  return snapshot
}

/**
 * A data directory as initdb leaves it, for `loadDataDir`: an empty embedded
 * database in under a second, where PGlite's initdb takes seconds.
 */
export function initdbSnapshot (): Promise<Buffer> {
  return snapshotOf('initdb')
}

function databaseUrl (serverUrl: string, name: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

const templates = new Map<string, Promise<string>>()

/**
 * The name of a migrated template database on the server, made by whichever
 * process needs it first while it holds an advisory lock (the others wait for it,
 * then find it). It counts as made once marked a template, the last step: one
 * left unmarked by a process that died is made again.
 */
function migratedTemplate (serverUrl: string): Promise<string> {
  let template = templates.get(serverUrl)
  if (template === undefined) {
    template = (async () => {
      const name = `test_template_${await (key ??= migrationsKey())}`
      const made = async (c: pg.Client) =>
        (await c.query<{ done: boolean }>('SELECT datistemplate AS done FROM pg_database WHERE datname = $1', [name])).rows[0]?.done === true
      await withAdmin(serverUrl, async (c) => {
        if (await made(c)) return
        // Released with the session, should this process die while it holds it.
        await c.query("SELECT pg_advisory_lock(hashtext('projects-api test template'))")
        if (await made(c)) return
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
        await c.query(`CREATE DATABASE ${name}`)
        const db = await createDb(databaseOptions({ DATABASE_URL: databaseUrl(serverUrl, name) }))
        try {
          await migrateToLatest(db)
        } finally {
          await db.destroy()
        }
        await c.query(`ALTER DATABASE ${name} IS_TEMPLATE true`)
      })
      return name
    })()
    template.catch(() => templates.delete(serverUrl))
    templates.set(serverUrl, template)
  }
  return template
}

/**
 * The embedded database's settings in tests: PostgreSQL's 128 MB of shared buffers
 * are laid out in PGlite's memory at each start (half a second of a database's
 * second); a test's few rows need a few pages, and a page missed is read from
 * memory.
 */
const EMBEDDED_SETTINGS = ['shared_buffers = 8MB']

type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>
/** WebAssembly's global, which the project's types (no DOM) do not name. */
const { WebAssembly } = globalThis as unknown as { WebAssembly: { compile: (bytes: Uint8Array) => Promise<WasmModule> } }
let wasm: Promise<WasmModule> | undefined

/** PGlite's WebAssembly, compiled once for every database of the process (a fifth of a second each). */
async function compiledPGlite (): Promise<WasmModule> {
  return await WebAssembly.compile(await readFile(fileURLToPath(import.meta.resolve('@electric-sql/pglite/pglite.wasm'))))
}

/**
 * The embedded database's thread as JavaScript (test/transpiled.ts): from source,
 * each thread would load tsx and start its hooks' own thread.
 */
async function embeddedThread (): Promise<URL> {
  return pathToFileURL(path.join(await transpiledTree(), 'src/db/embedded/thread.js'))
}

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
    const db = await createDb({ ...databaseOptions(), dataDir: null }, {
      log: options.log,
      embedded: { loadDataDir: await snapshotOf('migrated'), settings: EMBEDDED_SETTINGS, thread: await embeddedThread(), wasmModule: await (wasm ??= compiledPGlite()) }
    })
    await newSigningKeys(db)
    return { db, url: undefined, close: () => db.destroy() }
  }

  const template = await migratedTemplate(serverUrl)
  const name = `test_${process.pid}_${randomBytes(4).toString('hex')}`
  await withAdmin(serverUrl, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`))
  const url = databaseUrl(serverUrl, name)
  const db = await createDb(databaseOptions({ DATABASE_URL: url }), { log: options.log })
  await newSigningKeys(db)
  return {
    db,
    url,
    close: async () => {
      await db.destroy()
      await withAdmin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      await stop?.()
    }
  }
}

/**
 * Writes the migrated data directory into `dataDir` (created if missing, with no
 * database yet) as files, without opening it: a server started there finds its
 * tables and no company, as after `migrate`, and the tests' settings in its
 * postgresql.conf.
 */
export async function writeMigratedDataDir (dataDir: string): Promise<void> {
  const tarball = await snapshotOf('migrated')
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  // PGlite names the entries from the root of its file system (`/base/...`): tar
  // takes them as relative and says so (TAR_ENTRY_INFO); anything else is a failure.
  const problems: string[] = []
  new UnpackSync({ cwd: dataDir, onwarn: (code, message) => { if (code !== 'TAR_ENTRY_INFO') problems.push(`${code}: ${message}`) } }).end(tarball)
  if (problems.length > 0) throw new Error(`the migrated snapshot did not unpack into ${dataDir}: ${problems.join('; ')}`)
  // The tests' settings, for whatever opens the directory (a server, a command line).
  await appendFile(path.join(dataDir, 'postgresql.conf'), `\n${EMBEDDED_SETTINGS.join('\n')}\n`)
}

/**
 * The embedded database in `dataDir` (a directory with no database yet), as
 * createDb opens it there, migrated: started from the same migrated data
 * directory as createTestDatabase's. Whoever calls it destroys it.
 */
export async function createMigratedDb (dataDir: string): Promise<Db> {
  await writeMigratedDataDir(dataDir)
  const db = await createDb(databaseOptions({ DATA_DIR: dataDir }))
  try {
    await newSigningKeys(db)
  } catch (error) {
    await db.destroy()
    throw error
  }
  return db
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
