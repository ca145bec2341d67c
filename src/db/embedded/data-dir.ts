// The embedded database's data directory: its owner's alone, like PostgreSQL's own,
// and used by one process at a time.
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'

function processAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

// The embedded database holds every token digest, and DATA_DIR/demo.json the demo's
// tokens in clear: like PostgreSQL's own data directory, it is its owner's alone.
const PRIVATE_DIR = 0o700
const GROUP_OTHER = 0o077

/**
 * Creates the data directory owner-only (0700), or makes an existing one so if it
 * belongs to this process's user. One that belongs to another user and is open to
 * others is refused: it cannot be made private from here.
 */
function privateDataDir (dataDir: string): void {
  // The parents as the umask says; the directory itself private from its first moment.
  mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true })
  try {
    mkdirSync(dataDir, { mode: PRIVATE_DIR })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const stats = statSync(dataDir)
  if (!stats.isDirectory()) throw new Error(`DATA_DIR ${dataDir} is not a directory`)
  // Windows has no such modes (chmod only sets read-only there).
  if (process.platform === 'win32' || (stats.mode & GROUP_OTHER) === 0) return
  if (stats.uid !== process.getuid?.()) {
    throw new Error(`the embedded database directory ${dataDir} is open to other users ` +
      `(mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')}) and belongs to another user (uid ${stats.uid}): ` +
      'make it owner-only (chmod 700) as its owner, or set DATA_DIR to a directory of your own')
  }
  chmodSync(dataDir, PRIVATE_DIR)
}

/**
 * PGlite writes the files of a new database open to everyone (0666 and 0777),
 * whatever the umask: takes the group's and others' bits off every file and
 * directory under the data directory that this user owns. Symbolic links are
 * neither followed nor changed.
 */
export function privateFiles (dir: string): void {
  if (process.platform === 'win32') return
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue
    const file = path.join(dir, entry.name)
    const stats = lstatSync(file)
    if ((stats.mode & GROUP_OTHER) !== 0 && stats.uid === process.getuid?.()) chmodSync(file, stats.mode & 0o700)
    if (entry.isDirectory()) privateFiles(file)
  }
}

/**
 * PGlite is one process's database: a second process writing the same files loses
 * data. A lock file with the owner's pid turns that into a clear error.
 */
export function lockDataDir (dataDir: string): () => void {
  privateDataDir(dataDir)
  const lock = path.join(dataDir, 'projects-api.lock')
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error
      const owner = Number(readFileSync(lock, 'utf8'))
      if (Number.isInteger(owner) && owner > 0 && (owner === process.pid || processAlive(owner))) {
        throw new Error(`the embedded database in ${dataDir} is in use by process ${owner}; ` +
          'stop that process first, or set DATABASE_URL to use PostgreSQL')
      }
      rmSync(lock, { force: true }) // left behind by a process that is gone
    }
  }
  let released = false
  const release = () => {
    if (released) return
    released = true
    process.off('exit', release)
    rmSync(lock, { force: true })
  }
  process.on('exit', release)
  return release
}
