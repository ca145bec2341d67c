// `npm start` as a new user meets it: the embedded database is created, migrated and
// loaded with the demo data on first start, the printed curl line works as printed,
// SIGTERM ends the process cleanly, and a restart keeps the data. With DATABASE_URL
// the server migrates but never seeds.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { promisify } from 'node:util'
import { execFile } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { createDb } from '../src/db/index.js'
import { createTestDatabase } from './database.js'
import { freePort } from './helper.js'

t.setTimeout(180_000)

const root = fileURLToPath(new URL('..', import.meta.url))


interface Started { child: ChildProcess, output: () => string }

/** Starts the server and waits until it listens (or gives up). */
async function start (env: NodeJS.ProcessEnv, port: number, entry = ['--import=tsx', 'src/server.ts']): Promise<Started> {
  const child = spawn(process.execPath, entry, {
    cwd: root, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }
  })
  let output = ''
  child.stdout.on('data', (chunk) => { output += String(chunk) })
  child.stderr.on('data', (chunk) => { output += String(chunk) })
  const deadline = Date.now() + 60_000
  while (!/Server listening/.test(output)) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`)
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`server did not start: ${output}`) }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  // The hint follows the listening line.
  await new Promise((resolve) => setTimeout(resolve, 300))
  return { child, output: () => output }
}

async function stop (child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  child.kill('SIGTERM')
  return await exited
}

t.test('first start on the embedded database: demo data and a curl line that works', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'server-test-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const env = { DATABASE_URL: '', DATA_DIR: dataDir }

  const first = await start(env, port)
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
  const demoFile = path.join(dataDir, 'demo.json')
  t.match(output, `Demo projects and a write and a read-only token for every demo person: ${demoFile}`)
  t.equal((await stat(demoFile)).mode & 0o777, 0o600, 'the demo file is readable by its owner only')
  const demo = JSON.parse(await readFile(demoFile, 'utf8')) as { projects: Record<string, string>, tokens: Record<string, { write: string, read_only: string }> }
  t.same(Object.keys(demo.tokens).sort(), ['alice@acme.test', 'bob@acme.test', 'carol@acme.test', 'dave@globex.test', 'erin@acme.test'])
  t.equal(demo.tokens['alice@acme.test']!.write, token, 'the printed token is the one in the file')
  const asBob = await fetch(`http://127.0.0.1:${port}/api/external/v1/projects/get?id=${demo.projects['Website Redesign']}`, {
    headers: { authorization: `Bearer ${demo.tokens['bob@acme.test']!.read_only}` }
  })
  t.equal(asBob.status, 200, "bob's read-only token from the file works while the server runs")
  t.equal((await asBob.json() as { project: { permissions: { can_edit: boolean } } }).project.permissions.can_edit, false)

  t.equal(await stop(first.child), 0, 'SIGTERM ends the server with exit code 0')

  // A restart keeps the data and loads nothing again.
  const second = await start(env, port)
  t.match(second.output(), `Embedded database in ${dataDir}. Demo projects and tokens for every demo person: ${demoFile}`)
  t.notMatch(second.output(), /Bearer pat_/)
  t.equal(await stop(second.child), 0)

  const db = await createDb({ dataDir })
  t.teardown(() => db.destroy())
  const companies = await db.selectFrom('companies').select('name').orderBy('name').execute()
  t.same(companies.map((c) => c.name), ['Acme Corp', 'Globex'])
  const renamed = await db.selectFrom('projects').select('name').where('name', '=', 'Website Redesign 2.0').execute()
  t.equal(renamed.length, 1, 'the rename survived the restart')
})

t.test('with DATABASE_URL the server migrates and never seeds', { skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL' }, async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  const server = await start({ DATABASE_URL: database.url }, await freePort())
  t.notMatch(server.output(), /Bearer pat_|Embedded database/)
  t.equal(await stop(server.child), 0)
  const companies = await database.db.selectFrom('companies').select('id').execute()
  t.equal(companies.length, 0)
  const tables = await database.db.selectFrom('kysely_migration' as never).select('name' as never).execute()
  t.ok(tables.length > 0, 'migrations are recorded')
})

t.test('a bad setting stops the server with a message naming it', async (t) => {
  const child = spawn(process.execPath, ['--import=tsx', 'src/server.ts'], {
    cwd: root, env: { ...process.env, PORT: 'eighty', DATABASE_URL: '' }
  })
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += String(chunk) })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  t.equal(code, 2)
  t.match(stderr, /PORT="eighty": must be integer/)
})

t.test('the production build (npm run build) starts and answers', async (t) => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: root })
  const dataDir = await mkdtemp(path.join(tmpdir(), 'server-build-test-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const server = await start({ DATABASE_URL: '', DATA_DIR: dataDir, NODE_ENV: 'production' }, port, ['dist/src/server.js'])
  const base = `http://127.0.0.1:${port}`

  const ready = await fetch(`${base}/health/ready`)
  t.equal(ready.status, 200)
  t.match(await ready.json(), { status: 'ready', migration: /^\d{14}_/ })

  const token = /Bearer (pat_[A-Za-z0-9_-]+)/.exec(server.output())?.[1]
  const res = await fetch(`${base}/api/external/v1/projects/get?id=website-redesign-0Y9Ntz72ysNZCCSQ5dFUZh`, {
    headers: { authorization: `Bearer ${token}` }
  })
  t.equal(res.status, 200)
  t.equal((await res.json() as { project: { name: string } }).project.name, 'Website Redesign')
  t.match(server.output(), /"msg":"Server listening/, 'production logs are JSON lines')
  t.equal(await stop(server.child), 0)

  // Without the demo file, the hint names the command that works where the build runs.
  await rm(path.join(dataDir, 'demo.json'))
  const again = await start({ DATABASE_URL: '', DATA_DIR: dataDir, NODE_ENV: 'production' }, port, ['dist/src/server.js'])
  t.match(again.output(), 'run node dist/src/cli.js tokens create --email <email>')
  t.equal(await stop(again.child), 0)
})
