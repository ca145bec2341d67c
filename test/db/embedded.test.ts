// The embedded database's files belong to one process: a second opener gets a clear
// error instead of silently losing writes, and a lock left by a dead process is taken over.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { createDb } from '../../src/db/index.js'

t.setTimeout(120_000)

const dataDir = await mkdtemp(path.join(tmpdir(), 'embedded-test-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))
const lock = path.join(dataDir, 'projects-api.lock')

t.test('a second opener is refused while the first holds the files', async (t) => {
  const first = await createDb({ dataDir })
  t.ok(existsSync(lock))
  await t.rejects(createDb({ dataDir }), { message: /is in use by process \d+; stop that process first, or set DATABASE_URL/ })
  await first.destroy()
  t.notOk(existsSync(lock), 'closing releases the lock')

  const again = await createDb({ dataDir })
  t.ok(existsSync(lock), 'and the files open again')
  await again.destroy()
})

t.test('a lock left by a process that is gone is taken over', async (t) => {
  const gone = spawnSync(process.execPath, ['-e', '']).pid
  await writeFile(lock, String(gone))
  const db = await createDb({ dataDir })
  await db.destroy()
  t.notOk(existsSync(lock))
})
