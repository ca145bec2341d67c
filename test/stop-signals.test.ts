// One graceful stop per stop, however it is delivered (src/stop-signals.ts): a
// process manager's SIGTERM to the whole process group of `npm start` or `npm run
// worker` (npm, its shell and the process all get it, and npm forwards its own),
// and a SIGTERM or SIGINT that comes again while the stop runs (what a relaying
// parent such as npm, tsx or a watcher delivers) end with the stop run to its end:
// requests still arriving answered 503, a delivery under way recorded, exit 0.
// Each stop is held open by the service's own bound (a request's upload grace, a
// delivery attempt's timeout), long enough for a relayed copy to land in it.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import t from './tap.js'
import { createTestDatabase, writeMigratedDataDir } from './database.js'
import { build, client, createCompany, createPerson, createProject, createSpace, tokenFor, waitFor } from './helper.js'
import { sendRaw, type RawAnswer } from './http.js'
import { launchServer, type ServerProcess } from './launch.js'
import { deliveriesOf, insertWebhook, startReceiver } from './webhooks/support.js'

t.setTimeout(280_000)

async function printed (server: ServerProcess, pattern: RegExp | string): Promise<boolean> {
  return await waitFor(() => typeof pattern === 'string' ? server.output().includes(pattern) : pattern.test(server.output()), 60_000)
}

function logLines (server: ServerProcess): Array<Record<string, unknown>> {
  return server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
}

/**
 * A data directory for the embedded database, migrated and with no company (the
 * server loads the demo into it), removed at the test's end.
 */
async function dataDir (t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'stop-signals-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeMigratedDataDir(dir)
  return dir
}

/**
 * A rename by the demo's printed token whose body never comes, held open on the
 * server: a stop gives it UPLOAD_GRACE_MS (1 s, http/transport.ts) before its
 * 503. Resolves once the server has it; `answer` settles with its answer.
 */
async function holdStop (server: ServerProcess): Promise<{ answer: Promise<RawAnswer> }> {
  if (!await printed(server, /Bearer pat_/)) throw new Error(`no token printed:\n${server.output()}`)
  const token = /Bearer (pat_[A-Za-z0-9_-]+)/.exec(server.output())![1]!
  const target = `/api/external/v1/projects/update_name?held=${process.pid}`
  const head = `POST ${target} HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${token}\r\n` +
    'content-type: application/json\r\ncontent-length: 100\r\n\r\n'
  const answer = sendRaw(server.port, [head], { livenessMs: 60_000 })
  if (!await printed(server, target)) throw new Error(`the held request was not logged:\n${server.output()}`)
  return { answer }
}

/** One stop, for `signal`, by one process, run to its end: nothing forced, nothing failed. */
function assertGracefulStop (t: Test, server: ServerProcess, signal: string): void {
  const lines = logLines(server)
  t.equal(new Set(lines.map((l) => l.pid)).size, 1, 'one process logged')
  t.same(lines.filter((l) => l.msg === 'shutting down').map((l) => l.signal), [signal], `one stop, for ${signal}`)
  t.notMatch(server.output(), /second SIG|killed by timeout/, 'not cut short')
  t.same(lines.filter((l) => Number(l.level) >= 50).map((l) => l.msg), [], 'nothing logged as an error')
  // A relayed copy of the signal may land between the last line and the exit: it is logged, and changes nothing.
  const last = lines.filter((l) => l.msg !== 'stop signal while stopping: the graceful stop goes on').at(-1)
  t.equal(last?.msg, 'shut down', 'the stop ran to its end', { lines: lines.slice(-4) })
}

t.test('npm start, stopped as a process manager stops it (SIGTERM to its process group), stops gracefully', async (t) => {
  const server = await launchServer({ t, npm: ['start'], env: { LOG_LEVEL: 'info', DATABASE_URL: '', DATA_DIR: await dataDir(t) } })
  const { answer } = await holdStop(server)
  process.kill(-server.pid, 'SIGTERM')
  const held = await answer
  t.equal(held.status, 503, "the request still arriving got the stop's 503")
  t.match(JSON.parse(held.body || '{}'), { code: 'unavailable' })
  // npm's own exit says little (killed by the group's SIGTERM while its shell
  // waits, or the server's code where the shell hands over): the server's log says it.
  t.not(await server.exitWithin(120_000), 'hung', 'every process of the group exited')
  assertGracefulStop(t, server, 'SIGTERM')
})

t.test('a stop signal that comes again while the stop runs is the same stop', async (t) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    await t.test(signal, async (t) => {
      const server = await launchServer({ t, env: { LOG_LEVEL: 'info', DATABASE_URL: '', DATA_DIR: await dataDir(t) } })
      const { answer } = await holdStop(server)
      server.child.kill(signal)
      t.ok(await printed(server, '"msg":"shutting down"'), 'the stop began')
      // The copy a relaying parent forwards.
      server.child.kill(signal)
      t.equal((await answer).status, 503, "the request still arriving got the stop's 503")
      t.equal(await server.exitWithin(120_000), 0, 'exit code 0')
      t.match(logLines(server).find((l) => l.msg === 'stop signal while stopping: the graceful stop goes on'), { level: 30, signal },
        'the copy is logged and changes nothing')
      assertGracefulStop(t, server, signal)
    })
  }
})

t.test('npm run worker, stopped by SIGTERM to its process group, records the attempt under way and stops gracefully',
  { skip: process.env.DATABASE_URL ? false : 'needs PostgreSQL (set DATABASE_URL): the worker does not run on the embedded database' }, async (t) => {
    const database = await createTestDatabase()
    t.teardown(() => database.close())
    const { app, db } = await build(t, { db: database.db, env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } })
    const company = await createCompany(db)
    const person = await createPerson(db, company.id, { isAdmin: true })
    const space = await createSpace(db, company.id, [person.id])
    const project = await createProject(db, space, { access: { space: 70 } })
    const receiver = await startReceiver(t)
    receiver.answer(() => 'hang')
    const hook = await insertWebhook(db, company.id, receiver.url)

    // The attempt under way ends at its own timeout, 1.5 s after it began: the stop waits for it.
    const worker = await launchServer({
      t,
      npm: ['run', 'worker'],
      waitUntil: 'started',
      env: { DATABASE_URL: database.url!, LOG_LEVEL: 'info', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOKS_ATTEMPT_TIMEOUT_MS: '1500', WEBHOOKS_RETRY_SCHEDULE: '60' }
    })
    t.ok(await printed(worker, 'webhook delivery worker started'), 'the worker started')
    const { token } = await tokenFor(db, person.email)
    t.equal((await client(app, token).updateName({ project_id: project.publicId, name: 'Stopping' })).statusCode, 200)
    t.ok(await receiver.waitForRequests(1), 'the attempt is under way')

    process.kill(-worker.pid, 'SIGTERM')
    t.not(await worker.exitWithin(120_000), 'hung', 'every process of the group exited')
    t.match(await deliveriesOf(db, hook.id), [{ status: 'pending', attempts: 1, last_error: 'no answer within 1.5 s' }], 'the attempt was recorded, its retry scheduled')
    t.match(logLines(worker).find((l) => l.msg === 'webhook delivery worker stopped'), { handed_back: 0 }, 'nothing handed back')
    assertGracefulStop(t, worker, 'SIGTERM')
  })
