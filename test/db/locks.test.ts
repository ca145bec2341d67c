// A row lock held by another transaction (another instance's request, an operator's
// session) says nothing about the project to those who may not change it: whoever
// cannot see the project gets at once the 404 of a project that does not exist,
// whoever may only view it gets 403 at once, and only an editor waits for the row,
// then writes on top of what the other transaction committed.
import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import pg from 'pg'
import t from '../tap.js'
import { createDb } from '../../src/db/index.js'
import { databaseOptions } from '../database.js'
import { shortId } from '../../src/ids.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, projectActivities, projectRow, tokenFor, waitFor } from '../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const { app, db, url } = await build(t)
// PGlite has one connection: a transaction holding the row would block the request itself.
const skip = url === undefined && 'needs a second connection to hold the row lock (real PostgreSQL: set DATABASE_URL)'

/**
 * Production's DB_STATEMENT_TIMEOUT_MS: a request that waited for the lock would
 * be seen waiting until then, and answer 503.
 */
const STATEMENT_TIMEOUT = '5s'

const company = await createCompany(db)
const editor = await createPerson(db, company.id, { fullName: 'Eda Editor' })
const viewer = await createPerson(db, company.id, { fullName: 'Vik Viewer' })
const outsider = await createPerson(db, (await createCompany(db)).id)
const space = await createSpace(db, company.id)
const tokens = {
  editor: (await tokenFor(db, editor.email)).token,
  viewer: (await tokenFor(db, viewer.email)).token,
  outsider: (await tokenFor(db, outsider.email)).token
}
type Who = keyof typeof tokens
type Api = Record<Who, ReturnType<typeof client>>
const clients = (server: typeof app): Api => ({
  editor: client(server, tokens.editor), viewer: client(server, tokens.viewer), outsider: client(server, tokens.outsider)
})

/**
 * The app as built, and the same app on connections that always use a generic plan
 * (PostgreSQL switches a prepared statement to one after five runs): the level is
 * then known only while the statement runs, and still nobody but an editor waits.
 */
async function apps (t: Tap): Promise<Array<[string, Api]>> {
  const generic = new URL(url!)
  generic.searchParams.set('options', '-c plan_cache_mode=force_generic_plan')
  const genericDb = await createDb(databaseOptions({ DATABASE_URL: generic.toString() }))
  t.teardown(() => genericDb.destroy())
  const { app: server } = await build(t, { db: genericDb })
  const { rows } = await sql<{ plan_cache_mode: string }>`SHOW plan_cache_mode`.execute(genericDb)
  if (rows[0]!.plan_cache_mode !== 'force_generic_plan') throw new Error('generic plans were not forced')
  return [['', clients(app)], [', generic plans', clients(server)]]
}

/** Company members may view, the champion edits, other companies see nothing. */
async function project (options: { archived?: boolean } = {}) {
  const p = await createProject(db, space, { access: { company: 10 }, archived: options.archived })
  await addContributor(db, p.id, editor.id, 'champion')
  return p
}

const MUTATIONS = {
  update_name: { call: 'updateName', field: 'name', value: 'After the wait', committed: 'Committed meanwhile', old: 'old_name', new: 'new_name' },
  update_description: { call: 'updateDescription', field: 'description', value: '"after the wait"', committed: '"committed meanwhile"', old: 'old_description', new: 'new_description' }
} as const
type Mutation = typeof MUTATIONS[keyof typeof MUTATIONS]

function send (api: Api, who: Who, m: Mutation, projectId: string): Promise<LightMyRequestResponse> {
  return m.call === 'updateName'
    ? api[who].updateName({ project_id: projectId, name: m.value })
    : api[who].updateDescription({ project_id: projectId, description: m.value })
}

/** Another connection that holds the project's row, as an open transaction does, until released. */
async function holdRow (t: Tap, projectId: string) {
  const holder = new pg.Client({ connectionString: url })
  await holder.connect()
  let open = true
  const end = async (statement: 'COMMIT' | 'ROLLBACK') => {
    if (open) await holder.query(statement)
    open = false
  }
  t.teardown(async () => { await end('ROLLBACK'); await holder.end() })
  await holder.query('BEGIN')
  await holder.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [projectId])
  return { holder, commit: () => end('COMMIT'), rollback: () => end('ROLLBACK') }
}

/** Requests of this database that wait for a lock right now. */
async function lockWaiters (): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db)
  return rows[0]!.n
}

/**
 * The answer, and whether any request of this database waited for a lock while it
 * was pending, looked at until it settled: one that waits for a held row waits
 * until the statement timeout, so it cannot be missed, however slow the machine.
 */
async function watched (request: () => Promise<LightMyRequestResponse>) {
  let settled = false
  const answer = request().finally(() => { settled = true })
  let waited = false
  while (!settled) {
    if (await lockWaiters() > 0) waited = true
    await Promise.race([answer.catch(() => {}), new Promise((resolve) => setTimeout(resolve, 10))])
  }
  return { res: await answer, waited }
}

// Only what differs on every answer by design.
function headers (res: LightMyRequestResponse) {
  const { date: _date, 'x-request-id': _id, ...rest } = res.headers
  return rest
}

// Before any test is queued: tap ends a file whose queue has run empty.
const variants = skip ? [['', clients(app)] as [string, Api]] : await apps(t)

t.test('the premise: statements may wait 5 s here, so a wait would show', { skip }, async (t) => {
  const { rows } = await sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(db)
  t.equal(rows[0]!.statement_timeout, STATEMENT_TIMEOUT)
})

for (const [operation, m] of Object.entries(MUTATIONS)) for (const [plan, api] of variants) {
  t.test(`${operation}${plan}: while another transaction holds the row, only an editor waits`, { skip }, async (t) => {
    const p = await project()
    const archived = await project({ archived: true })
    const unknown = shortId(randomUUID())
    await holdRow(t, p.id)
    await holdRow(t, archived.id)
    const before = { p: await projectRow(db, p.id), archived: await projectRow(db, archived.id) }

    const absent = await watched(() => send(api, 'outsider', m, unknown))
    t.equal(absent.res.statusCode, 404, 'an unknown id: 404')
    t.match(absent.res.json(), { statusCode: 404, code: 'not_found' })

    const cases = [
      ['a person who cannot see it', 'outsider', p.publicId],
      ['a person who cannot see it, by UUID', 'outsider', p.id],
      ['an editor, the project archived', 'editor', archived.publicId],
      ['a viewer, the project archived', 'viewer', archived.publicId]
    ] as const
    for (const [who, as, id] of cases) {
      const { res, waited } = await watched(() => send(api, as, m, id))
      t.equal(res.statusCode, 404, `${who}: 404`)
      t.notOk(waited, `${who}: answered without waiting for the lock`)
      t.equal(res.body, absent.res.body, `${who}: the body of an unknown id, byte for byte`)
      t.same(headers(res), headers(absent.res), `${who}: the headers of an unknown id`)
    }

    const viewed = await watched(() => send(api, 'viewer', m, p.publicId))
    t.equal(viewed.res.statusCode, 403, 'a person who may only view it: 403')
    t.notOk(viewed.waited, 'a viewer: answered without waiting for the lock')
    t.same(viewed.res.json(), { statusCode: 403, error: 'Forbidden', code: 'forbidden', message: 'you may view this project but not edit it' })
    t.equal(viewed.res.headers['cache-control'], 'no-store')
    t.ok(viewed.res.headers['x-request-id'])

    t.equal(await lockWaiters(), 0, 'no request left waiting for the lock')
    t.same(await projectRow(db, p.id), before.p, 'nothing written')
    t.same(await projectRow(db, archived.id), before.archived, 'nothing written')
    t.same(await projectActivities(db, p.id), [], 'no activity')
  })

  t.test(`${operation}${plan}: an editor waits for the row, then writes on what the other transaction committed`, { skip }, async (t) => {
    const p = await project()
    const { holder, commit } = await holdRow(t, p.id)
    const pending = send(api, 'editor', m, p.publicId)
    t.ok(await waitFor(async () => await lockWaiters() > 0, 30_000), 'the editor waits for the lock')
    await holder.query(`UPDATE projects SET ${m.field} = $2, updated_at = now() WHERE id = $1`, [p.id, m.committed])
    await commit()

    const res = await pending
    t.equal(res.statusCode, 200)
    t.equal(res.json().project[m.field], m.value)
    const row = await projectRow(db, p.id)
    t.equal(row[m.field], m.value)
    const activities = await projectActivities(db, p.id)
    t.same(activities.map((a) => a.content), [{ [m.old]: m.committed, [m.new]: m.value }],
      'the old value of the activity is the one the other transaction committed')
  })

  t.test(`${operation}${plan}: what the other transaction commits while an editor waits decides the answer`, { skip }, async (t) => {
    for (const [change, status, set] of [
      ['archived', 404, 'archived_at = now()'],
      ['made view-only for the editor', 403, 'company_access = 10'],
      ['left as it was', 200, 'updated_at = updated_at']
    ] as const) {
      const p = await project()
      // The editor's own binding grants edit: take it away through the row itself.
      if (change === 'made view-only for the editor') {
        await db.updateTable('project_contributors').set({ role: 'contributor', access_level: 10 }).where('project_id', '=', p.id).execute()
        await db.updateTable('projects').set({ company_access: 70 }).where('id', '=', p.id).execute()
      }
      const before = await projectRow(db, p.id)
      const { holder, commit } = await holdRow(t, p.id)
      const pending = send(api, 'editor', m, p.publicId)
      t.ok(await waitFor(async () => await lockWaiters() > 0, 30_000), `${change}: the editor waits`)
      await holder.query(`UPDATE projects SET ${set} WHERE id = $1`, [p.id])
      await commit()
      const res = await pending
      t.equal(res.statusCode, status, `${change}: ${status}`)
      const activities = await projectActivities(db, p.id)
      if (status === 200) {
        t.same(activities.map((a) => a.content), [{ [m.old]: before[m.field], [m.new]: m.value }], `${change}: one activity`)
      } else {
        t.same(activities, [], `${change}: no activity`)
        const row = await projectRow(db, p.id)
        t.equal(row[m.field], before[m.field], `${change}: nothing written`)
      }
    }
  })
}
