// `npm start` as a new user meets it: the embedded database is created, migrated and
// loaded with the demo data on first start, the printed curl line works as printed,
// SIGTERM ends the process cleanly, and a restart keeps the data. With DATABASE_URL
// the server migrates but never seeds.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import t from './tap.js'
import { createDb } from '../src/db/index.js'
import { createTestDatabase, databaseOptions, writeMigratedDataDir } from './database.js'
import { waitFor } from './helper.js'
import { BUILT, FROM_SOURCE, freePort, launchServer, type ServerProcess } from './launch.js'

t.setTimeout(180_000)

const root = fileURLToPath(new URL('..', import.meta.url))

/** The server as a newcomer starts it, logging at info, once it is ready. */
async function start (t: Test, env: Record<string, string>, port: number, entry?: string[]): Promise<ServerProcess> {
  return await launchServer({ t, env: { LOG_LEVEL: 'info', ...env }, port, entry: entry ?? FROM_SOURCE })
}

/** Waits until the output matches (the hint is printed after the server listens); whether it did. */
async function printed (server: ServerProcess, pattern: RegExp | string): Promise<boolean> {
  return await waitFor(() => typeof pattern === 'string' ? server.output().includes(pattern) : pattern.test(server.output()), 10_000)
}

t.test('first start on the embedded database: demo data and a curl line that works', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'server-test-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const env = { DATABASE_URL: '', DATA_DIR: dataDir }

  const first = await start(t, env, port)
  const demoFile = path.join(dataDir, 'demo.json')
  t.ok(await printed(first, `Demo projects and a write and a read-only token for every demo person: ${demoFile}`),
    'the hint ends by naming the demo file')
  const output = first.output()
  const token = /Bearer (pat_[A-Za-z0-9_-]+)/.exec(output)?.[1]
  const body = /-d '(\{.*\})'/.exec(output)?.[1]
  const url = /curl -s -X POST (\S+)/.exec(output)?.[1]
  t.ok(token, 'a write token is printed')
  t.ok(body, 'a request body is printed')
  t.equal(url, `http://127.0.0.1:${port}/api/external/v1/projects/update_name`)

  const res = await fetch(url!, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body!
  })
  t.equal(res.status, 200)
  const { project } = await res.json() as { project: { name: string, id: string, my_role: string } }
  t.equal(project.name, 'Website Redesign 2.0')
  t.equal(project.my_role, 'champion')
  t.match(project.id, /^website-redesign-2-0-[0-9A-Za-z]{22}$/)

  // While the server holds the embedded database, every demo person's tokens are at hand.
  t.equal((await stat(demoFile)).mode & 0o777, 0o600, 'the demo file is readable by its owner only')
  const demo = JSON.parse(await readFile(demoFile, 'utf8')) as { projects: Record<string, string>, tokens: Record<string, { write: string, read_only: string }> }
  t.same(Object.keys(demo.tokens).sort(), ['alice@acme.test', 'bob@acme.test', 'carol@acme.test', 'dave@globex.test', 'erin@acme.test'])
  t.equal(demo.tokens['alice@acme.test']!.write, token, 'the printed token is the one in the file')
  const asBob = await fetch(`http://127.0.0.1:${port}/api/external/v1/projects/get?id=${demo.projects['Website Redesign']}`, {
    headers: { authorization: `Bearer ${demo.tokens['bob@acme.test']!.read_only}` }
  })
  t.equal(asBob.status, 200, "bob's read-only token from the file works while the server runs")
  t.equal((await asBob.json() as { project: { permissions: { can_edit: boolean } } }).project.permissions.can_edit, false)

  t.equal(await first.stop(), 0, 'SIGTERM ends the server with exit code 0')

  // A restart keeps the data and loads nothing again.
  const second = await start(t, env, port)
  t.ok(await printed(second, `Embedded database in ${dataDir}. Demo projects and tokens for every demo person: ${demoFile}`),
    'the restart names the data directory and the demo file')
  t.equal(await second.stop(), 0)
  t.notMatch(second.output(), /Bearer pat_/, 'and prints no new token')

  const db = await createDb(databaseOptions({ DATA_DIR: dataDir }))
  t.teardown(() => db.destroy())
  const companies = await db.selectFrom('companies').select('name').orderBy('name').execute()
  t.same(companies.map((c) => c.name), ['Acme Corp', 'Globex'])
  const renamed = await db.selectFrom('projects').select('name').where('name', '=', 'Website Redesign 2.0').execute()
  t.equal(renamed.length, 1, 'the rename survived the restart')
})

t.test('with DATABASE_URL the server migrates and never seeds', { skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL' }, async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  const server = await start(t, { DATABASE_URL: database.url! }, await freePort())
  t.equal(await server.stop(), 0)
  t.notMatch(server.output(), /Bearer pat_|Embedded database/, 'no hint, from start to exit')
  const companies = await database.db.selectFrom('companies').select('id').execute()
  t.equal(companies.length, 0)
  const tables = await database.db.selectFrom('kysely_migration' as never).select('name' as never).execute()
  t.ok(tables.length > 0, 'migrations are recorded')
})

t.test('a bad setting stops the server with a message naming it', async (t) => {
  const server = await launchServer({ t, env: { PORT: 'eighty', DATABASE_URL: '' }, waitUntil: 'started' })
  t.equal(await server.exited, 2)
  t.match(server.output(), 'PORT="eighty": must be an integer')
})

// The metrics port's own refusal is test/metrics/gauges.test.ts's, on the metrics server itself.
t.test('a port another process holds stops the server with a message naming the setting', async (t) => {
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())))
  const { port } = taken.address() as AddressInfo
  const dataDir = await mkdtemp(path.join(tmpdir(), 'server-port-test-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  await writeMigratedDataDir(dataDir)
  const server = await launchServer({ t, env: { DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(port) }, waitUntil: 'started' })
  t.equal(await server.exited, 1, 'exit code 1')
  t.match(server.output(), `failed to start: PORT=${port}: 127.0.0.1:${port} is in use by another process (another server?); choose a free port\n`)
})

t.test('the production build (npm run build) starts and answers', async (t) => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: root })
  const dataDir = await mkdtemp(path.join(tmpdir(), 'server-build-test-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const server = await start(t, { DATABASE_URL: '', DATA_DIR: dataDir, NODE_ENV: 'production' }, port, BUILT)
  const base = server.url

  const ready = await fetch(`${base}/health/ready`)
  t.equal(ready.status, 200)
  t.match(await ready.json(), { status: 'ready', migration: /^\d{14}_/ })

  t.ok(await printed(server, /Bearer pat_/), 'the hint prints a token')
  const token = /Bearer (pat_[A-Za-z0-9_-]+)/.exec(server.output())?.[1]
  const res = await fetch(`${base}/api/external/v1/projects/get?id=website-redesign-0Y9Ntz72ysNZCCSQ5dFUZh`, {
    headers: { authorization: `Bearer ${token}` }
  })
  t.equal(res.status, 200)
  t.equal((await res.json() as { project: { name: string } }).project.name, 'Website Redesign')
  t.match(server.output(), /"msg":"Server listening/, 'production logs are JSON lines')
  t.equal(await server.stop(), 0)

  // Without the demo file, the hint names the command that works where the build runs.
  await rm(path.join(dataDir, 'demo.json'))
  const again = await start(t, { DATABASE_URL: '', DATA_DIR: dataDir, NODE_ENV: 'production' }, port, BUILT)
  t.ok(await printed(again, 'run node dist/src/cli.js tokens create --email <email>'), 'the hint names the built CLI')
  t.equal(await again.stop(), 0)
})
