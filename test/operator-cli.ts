// The operator CLI in the tests: a database of a test file's own for its commands,
// and two ways to run a command line: in this process (`main` with the file's
// variables, its stdout and stderr captured, on the file's database held open),
// which is fast, and as a child process exactly as an operator runs it
// (`node --import=tsx src/cli.ts ...`, opening the database itself), which proves
// the entry point, the exit code and the streams. The database is a fresh one on
// DATABASE_URL's server, else PGlite files in a temporary directory, which one
// process opens at a time: held open by this one between child processes, and let
// go while one runs.
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { main } from '../src/cli/index.js'
import { createDb, type Db } from '../src/db/index.js'
import { createTestDatabase, databaseOptions } from './database.js'

interface Teardown { teardown: (fn: () => unknown) => void }

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const exec = promisify(execFile)

export interface Run { code: number, stdout: string, stderr: string }

export interface CliDatabase {
  /** Whether it is on a PostgreSQL server (else PGlite files). */
  server: boolean
  /** The command lines' variables: the database, and no DEBUG. */
  env: NodeJS.ProcessEnv
  /** A command line run in this process. */
  cli: (...args: string[]) => Promise<Run>
  /** A command line run as a child process. */
  spawn: (...args: string[]) => Promise<Run>
  /** Command lines side by side. */
  cliAll: (lines: string[][]) => Promise<Run[]>
  /** The test's own look at the database, between command lines. */
  withDb: <T>(fn: (db: Db) => Promise<T>) => Promise<T>
  /** The database the command lines run on, held open until a child process runs or the file ends. */
  open: () => Promise<Db>
}

/** A database for a file's command lines, dropped or deleted at the file's end. */
export async function cliDatabase (t: Teardown, name: string): Promise<CliDatabase> {
  const server = process.env.DATABASE_URL ? await createTestDatabase() : undefined
  const dataDir = server ? undefined : await mkdtemp(path.join(tmpdir(), `${name}-`))
  // The PGlite files, opened as a command line opens them, when a command line or the test needs them.
  let files: Promise<Db> | undefined
  const open = async () => server?.db ?? await (files ??= createDb(databaseOptions({ DATA_DIR: dataDir })))
  const letGo = async () => {
    const db = files
    files = undefined
    await (await db)?.destroy()
  }
  t.teardown(async () => {
    await letGo()
    await server?.close()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })
  // An empty DATABASE_URL counts as unset, which selects the PGlite files.
  const env: NodeJS.ProcessEnv = { ...process.env, DEBUG: '', DATABASE_URL: server?.url ?? '', DATA_DIR: dataDir ?? '' }
  const cli = async (...args: string[]) => await runInProcess(args, env, await open())
  return {
    server: server !== undefined,
    env,
    cli,
    spawn: async (...args: string[]) => {
      await letGo()
      return await runChild(args, env)
    },
    cliAll: async (lines) => await Promise.all(lines.map((args) => cli(...args))),
    withDb: async (fn) => await fn(await open()),
    open
  }
}

/** `main` with these variables (on `db` when given), what it writes captured. */
export async function runInProcess (args: string[], env: NodeJS.ProcessEnv, db?: Db): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const code = await main(args, { env, db, streams: { stdout: (text) => { stdout += text }, stderr: (text) => { stderr += text } } })
  return { code, stdout, stderr }
}

/** The CLI as an operator runs it: a child process, its exit code and streams. */
export async function runChild (args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import=tsx', 'src/cli.ts', ...args], { cwd: ROOT, env })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code?: unknown, stdout?: string, stderr?: string }
    if (typeof e.code !== 'number') throw error
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}
