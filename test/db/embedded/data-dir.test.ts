// The embedded database's files belong to one process: a second opener gets a clear
// error instead of silently losing writes, and a lock left by a dead process is taken
// over. They belong to one user too: the directory is owner-only (0700) and nothing
// under it is writable by anyone else, whatever the umask and however it was left.
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from '../../tap.js'
import { createDb } from '../../../src/db/index.js'
import { migrateToLatest } from '../../../src/db/migrate.js'
import { databaseOptions } from '../../database.js'

const dataDir = await mkdtemp(path.join(tmpdir(), 'embedded-test-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))
const lock = path.join(dataDir, 'projects-api.lock')

t.test('a second opener is refused while the first holds the files', async (t) => {
  const first = await createDb(databaseOptions({ DATA_DIR: dataDir }))
  t.ok(existsSync(lock))
  await t.rejects(createDb(databaseOptions({ DATA_DIR: dataDir })), { message: /is in use by process \d+; stop that process first, or set DATABASE_URL/ })
  await first.destroy()
  t.notOk(existsSync(lock), 'closing releases the lock')

  const again = await createDb(databaseOptions({ DATA_DIR: dataDir }))
  t.ok(existsSync(lock), 'and the files open again')
  await again.destroy()
})

t.test('a lock left by a process that is gone is taken over', async (t) => {
  const gone = spawnSync(process.execPath, ['-e', '']).pid
  await writeFile(lock, String(gone))
  const db = await createDb(databaseOptions({ DATA_DIR: dataDir }))
  await db.destroy()
  t.notOk(existsSync(lock))
})

const mode = (file: string) => statSync(file).mode & 0o777
const octal = (bits: number) => bits.toString(8).padStart(4, '0')

/** Every file and directory under `dir` (symbolic links not followed), with its permission bits. */
function modesUnder (dir: string): Array<{ file: string, bits: number, isDirectory: boolean }> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    const own = { file, bits: lstatSync(file).mode & 0o777, isDirectory: entry.isDirectory() }
    return entry.isDirectory() ? [own, ...modesUnder(file)] : [own]
  })
}

/** The directory 0700 and no file or directory under it writable by group or others. */
function expectPrivate (t: Tap, dir: string) {
  t.equal(octal(mode(dir)), '0700', 'the directory is owner-only')
  const modes = modesUnder(dir)
  t.ok(modes.length > 100, `${modes.length} files and directories checked`)
  const open = modes.filter(({ bits }) => (bits & 0o022) !== 0).map(({ file, bits }) => `${octal(bits)} ${path.relative(dir, file)}`)
  t.same(open, [], 'nothing under it is writable by group or others')
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]
const unix = process.platform !== 'win32' || 'POSIX permissions'

t.test('a new data directory is private: 0700, the lock file 0600, no file writable by others, even with umask 000', { skip: unix !== true && unix }, async (t) => {
  const dir = path.join(dataDir, 'fresh', 'data')
  const umask = process.umask(0)
  t.teardown(() => { process.umask(umask) })
  const db = await createDb(databaseOptions({ DATA_DIR: dir }))
  t.equal(octal(mode(path.join(dir, 'projects-api.lock'))), '0600', 'the lock file is owner-only')
  await migrateToLatest(db) // the tables' files too
  expectPrivate(t, dir)
  await db.destroy()
  expectPrivate(t, dir)
  t.equal(octal(mode(path.dirname(dir))), '0777', 'its parents are left to the umask')
})

t.test('an existing directory open to others, and files left open by an earlier start, are made private', { skip: unix !== true && unix }, async (t) => {
  const dir = path.join(dataDir, 'existing')
  await mkdir(dir)
  await chmod(dir, 0o755)
  const first = await createDb(databaseOptions({ DATA_DIR: dir }))
  t.equal(octal(mode(dir)), '0700', 'a directory of mine left 0755 is made owner-only')
  await first.destroy()
  // As an earlier version left them: the directory 0755, PGlite's files 0666 and 0777.
  await chmod(dir, 0o755)
  for (const { file, isDirectory } of modesUnder(dir)) await chmod(file, isDirectory ? 0o777 : 0o666)

  const db = await createDb(databaseOptions({ DATA_DIR: dir }))
  expectPrivate(t, dir)
  await db.destroy()
})

t.test("a directory of another user's that is open to others is refused, its files untouched", {
  skip: unix !== true ? unix : process.getuid?.() !== 0 && 'needs root, to give the directory to another user'
}, async (t) => {
  const dir = path.join(dataDir, 'foreign')
  await mkdir(dir)
  await chown(dir, 65534, 65534)
  await chmod(dir, 0o777)
  await t.rejects(createDb(databaseOptions({ DATA_DIR: dir })), {
    message: `the embedded database directory ${dir} is open to other users (mode 0777) and belongs to another user (uid 65534): ` +
      'make it owner-only (chmod 700) as its owner, or set DATA_DIR to a directory of your own'
  })
  t.equal(octal(mode(dir)), '0777', 'left as it was')
  t.same(readdirSync(dir), [], 'nothing written into it')
})
