// /health/live and /health/ready: no token needed, no rate limit, and ready means
// the database answers, takes writes, grants this service what it needs and has
// the schema this build expects. Not ready never says why; the log does, once.
import { randomBytes } from 'node:crypto'
import { sql, type LogEvent } from 'kysely'
import t from '../tap.js'
import { createDb } from '../../src/db/index.js'
import { expectedMigrations } from '../../src/db/migrate.js'
import { SCHEMAS, TABLE_PRIVILEGES } from '../../src/db/readiness.js'
import { shortId } from '../../src/ids.js'
import { databaseOptions, oneConnectionDatabase } from '../database.js'
import { build, client, grantServicePrivileges, createCompany, createPerson, createProject, createSpace, projectActivities, projectRow, tokenFor } from '../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const migrations = await expectedMigrations()
const latest = migrations.at(-1)
const previous = migrations.at(-2)

t.test('live and ready answer 200 without a token, are never rate-limited, and ready names the latest migration', async (t) => {
  const { app: server } = await build(t, { env: { RATE_LIMIT_MAX: '1' } })
  for (let i = 0; i < 3; i++) {
    const live = await server.inject({ method: 'GET', url: '/health/live' })
    t.equal(live.statusCode, 200)
    t.same(live.json(), { status: 'live' })
    t.equal(live.headers['cache-control'], 'no-store')
    const ready = await server.inject({ method: 'GET', url: '/health/ready' })
    t.equal(ready.statusCode, 200)
    t.same(ready.json(), { status: 'ready', migration: latest, rate_limit: 'local' })
  }
  const wrongMethod = await server.inject({ method: 'POST', url: '/health/ready' })
  t.equal(wrongMethod.statusCode, 405)
  t.equal(wrongMethod.headers.allow, 'GET, HEAD')
})

t.test('not ready when the schema is behind', async (t) => {
  const { app: server, db } = await build(t)
  await sql`DELETE FROM kysely_migration WHERE name = ${latest}`.execute(db)
  const ready = await server.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.equal(ready.headers['retry-after'], '1')
  t.same(ready.json(), {
    statusCode: 503,
    error: 'Service Unavailable',
    code: 'unavailable',
    message: `the database schema is at ${previous ?? 'nothing'}, not ${latest}; run the migrations`
  })
  const live = await server.inject({ method: 'GET', url: '/health/live' })
  t.equal(live.statusCode, 200, 'the process is still live')
})

t.test('not ready when never migrated', async (t) => {
  const { app: server, db } = await build(t)
  await sql`DROP TABLE kysely_migration`.execute(db)
  const ready = await server.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.equal(ready.json().message, 'the database has not been migrated; run the migrations')
})

t.test('not ready when the database is unreachable, and says nothing of why', async (t) => {
  // Port 1 on loopback: nothing listens there.
  const db = await createDb(databaseOptions({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', DB_CONNECTION_TIMEOUT_MS: '500' }))
  t.teardown(() => db.destroy())
  const { app: server } = await build(t, { db })
  const ready = await server.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { statusCode: 503, error: 'Service Unavailable', code: 'unavailable', message: 'the database is unavailable' })
  t.notMatch(ready.body, /ECONNREFUSED|127\.0\.0\.1/)
  t.equal((await server.inject({ method: 'GET', url: '/health/live' })).statusCode, 200)
})

const NOT_READY = { statusCode: 503, error: 'Service Unavailable', code: 'unavailable', message: 'the database is unavailable' }
const UNAVAILABLE = { statusCode: 503, error: 'Service Unavailable', code: 'unavailable', message: 'the database is unavailable; try again shortly' }

interface LogLine { level: number, msg: string }

/**
 * The app on a database of its own through ONE connection (PGlite has only one),
 * so that a session setting (SET ROLE, default_transaction_read_only) holds for
 * every request; its statements and log lines kept; a project the token's person
 * may edit.
 */
async function oneConnection (t: Tap) {
  const statements: string[] = []
  const log = (event: LogEvent) => { statements.push(event.query.sql) }
  const db = await oneConnectionDatabase(t, log)
  const lines: LogLine[] = []
  const { app: server } = await build(t, { db, env: { LOG_LEVEL: 'info' }, logStream: { write: (line: string) => { lines.push(JSON.parse(line)) } } })
  const cleanups: Array<() => Promise<unknown>> = []
  // Registered last, so it runs first: a test's own undoing, on the connection before it is closed.
  t.teardown(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })
  const company = await createCompany(db)
  // An admin, so that the webhook operations serve them too.
  const person = await createPerson(db, company.id, { isAdmin: true })
  const space = await createSpace(db, company.id, [person.id])
  const project = await createProject(db, space, { access: { space: 70 } })
  const api = client(server, (await tokenFor(db, person.email)).token)
  const ready = () => server.inject({ method: 'GET', url: '/health/ready' })
  const warnings = () => lines.filter((l) => l.level === 40).map((l) => l.msg)
  return { server, db, project, api, ready, statements, lines, warnings, cleanups }
}

t.test('a read-only database: not ready, reads go on at one round trip each, mutations are 503 and write nothing', async (t) => {
  const { db, project, api, ready, statements, warnings } = await oneConnection(t)
  const before = await api.get(project.publicId)
  t.equal(before.statusCode, 200)
  t.equal((await ready()).statusCode, 200)

  // What a failover to a standby, or default_transaction_read_only, does to a session.
  await sql`SET default_transaction_read_only = on`.execute(db)
  for (let i = 0; i < 3; i++) {
    const res = await ready()
    t.equal(res.statusCode, 503, 'not ready')
    t.equal(res.headers['retry-after'], '1')
    t.same(res.json(), NOT_READY, 'and not saying why')
  }
  t.same(warnings(), ['not ready: the database is read-only (a standby, or default_transaction_read_only): mutations fail'],
    'the log says why, once for three probes')

  for (let i = 0; i < 3; i++) {
    statements.length = 0
    const got = await api.get(project.publicId)
    t.equal(got.statusCode, 200, 'get still works')
    t.equal(got.body, before.body, 'and answers the same project')
    if (i > 0) {
      // The token's lookup, then the read unless its answer is kept (http/answer-cache.ts;
      // a commit elsewhere on the server, another test's, may have changed the snapshot).
      t.match(statements[0], /from "api_tokens"/)
      t.ok(statements.length <= 2, 'at most the token\'s lookup and the read, without recording its use: no failed write first')
      if (statements.length === 2) t.match(statements[1], /from "projects" as "p"/, 'the read')
      t.notOk(statements.some((text) => /^\s*update/i.test(text)), 'no write')
    }
  }
  const row = await projectRow(db, project.id)
  for (const res of [
    await api.updateName({ project_id: project.publicId, name: 'Never written' }),
    await api.updateDescription({ project_id: project.publicId, description: '"never written"' })
  ]) {
    t.equal(res.statusCode, 503, 'a mutation is 503')
    t.equal(res.headers['retry-after'], '1')
    t.same(res.json(), UNAVAILABLE)
  }
  t.same(await projectRow(db, project.id), row, 'nothing written')
  t.same(await projectActivities(db, project.id), [])

  await sql`RESET default_transaction_read_only`.execute(db)
  t.equal((await ready()).statusCode, 200, 'ready once writable again')
  const renamed = await api.updateName({ project_id: project.publicId, name: 'Written again' })
  t.equal(renamed.statusCode, 200)
  t.equal(renamed.json().project.name, 'Written again')
  t.equal((await projectActivities(db, project.id)).length, 1)
})

t.test('not ready when the role lacks a privilege on a table it uses; exactly those privileges serve every operation', async (t) => {
  const { db, project, api, ready, statements, warnings, cleanups } = await oneConnection(t)
  const role = `health_${process.pid}_${randomBytes(3).toString('hex')}`
  await sql`CREATE ROLE ${sql.id(role)}`.execute(db)
  cleanups.push(async () => {
    await sql`RESET ROLE`.execute(db)
    await sql`DROP OWNED BY ${sql.id(role)}`.execute(db)
    await sql`DROP ROLE ${sql.id(role)}`.execute(db)
  })
  await grantServicePrivileges(db, role)
  // Someone for the description to mention: subscribing them refreshes the project's
  // kept children (project_children), through the function that runs as the tables' owner.
  const { company_id: companyId } = await db.selectFrom('projects').select('company_id').where('id', '=', project.id).executeTakeFirstOrThrow()
  const mentioned = await createPerson(db, companyId, { fullName: 'Mona Mentioned' })
  await sql`SET ROLE ${sql.id(role)}`.execute(db)

  statements.length = 0
  t.equal((await ready()).statusCode, 200, 'ready with exactly the privileges listed')
  const hook = await api.createWebhook({ url: 'https://8.8.8.8/hook' })
  t.equal(hook.statusCode, 200, 'a webhook, so that the changes below write deliveries and jobs')
  t.equal((await api.get(project.publicId)).statusCode, 200)
  t.equal((await api.updateName({ project_id: project.publicId, name: 'Renamed' })).statusCode, 200)
  const mention = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { id: shortId(mentioned.id) } }] }] })
  const described = await api.updateDescription({ project_id: project.publicId, description: mention })
  t.equal(described.statusCode, 200)
  const subscribers = (res: { json: () => any }) => res.json().project.subscription_list?.subscriptions.map((s: { person: { full_name: string } }) => s.person.full_name)
  t.same(subscribers(described), ['Mona Mentioned'], 'the mention subscribes')
  t.same(subscribers(await api.get(project.publicId)), ['Mona Mentioned'], 'and the kept children have the subscription')
  t.equal((await api.list()).statusCode, 200)
  t.equal((await api.getMe()).statusCode, 200)
  t.equal((await api.getCompany({ include_admins: 'true', include_people: 'true' })).statusCode, 200)
  t.equal((await api.listNotifications()).statusCode, 200)
  t.equal((await api.unreadCount()).statusCode, 200)
  t.equal((await api.markAllAsRead()).statusCode, 200)
  t.equal((await api.markManyAsRead([])).statusCode, 200)
  t.equal((await api.listWebhooks()).statusCode, 200)
  t.equal((await api.listDeliveries({ webhook_id: hook.json().webhook.id })).json().deliveries.length, 2, 'the rename\'s and the description\'s')
  // A project's life: created in the space, then changed and deleted.
  const created = await api.project('create', { space_id: (await api.get(project.publicId)).json().project.space_id, name: 'Born', anonymous_access_level: 0, company_access_level: 0, space_access_level: 70 })
  t.equal(created.statusCode, 200)
  t.equal((await api.project('delete', { project_id: created.json().project.id })).statusCode, 200)
  t.equal((await api.rotateWebhookSecret(hook.json().webhook.id)).statusCode, 200)
  t.equal((await api.deleteWebhook(hook.json().webhook.id)).statusCode, 200)
  // A project's lifecycle: a contributor added, changed, removed; a new champion and reviewer; paused, resumed, closed.
  const added = await api.projects('create_contributor', { project_id: project.publicId, person_id: shortId(mentioned.id), responsibility: 'QA', permissions: 'view_access' })
  t.equal(added.statusCode, 200)
  t.equal((await api.projects('update_contributor', { contrib_id: added.json().contributor.id, permissions: 'edit_access' })).statusCode, 200)
  t.equal((await api.projects('delete_contributor', { contrib_id: added.json().contributor.id })).statusCode, 200)
  t.equal((await api.projects('update_champion', { project_id: project.publicId, champion_id: shortId(mentioned.id) })).statusCode, 200)
  t.equal((await api.projects('update_reviewer', { project_id: project.publicId, reviewer_id: shortId(mentioned.id) })).statusCode, 200)
  t.equal((await api.projects('update_champion', { project_id: project.publicId, champion_id: shortId(mentioned.id) })).statusCode, 200)
  const text = JSON.stringify({ type: 'doc', content: [] })
  t.equal((await api.projects('pause', { project_id: project.publicId, message: text })).statusCode, 200)
  t.equal((await api.projects('resume', { project_id: project.publicId, message: text })).statusCode, 200)
  t.equal((await api.projects('close', { project_id: project.publicId, retrospective: text, success_status: 'achieved' })).statusCode, 200)
  // The list is the tables these statements name, no more and no fewer.
  // A schema-qualified table ("pgboss"."job") is named as TABLE_PRIVILEGES names it.
  const sent = statements.map((s) => SCHEMAS.reduce((text, schema) => text.replace(new RegExp(`"${schema}"\\."(\\w+)"`, 'g'), `"${schema}.$1"`), s))
  // A CTE is named before its query, materialized or not.
  const ctes = new Set(sent.flatMap((s) => [...s.matchAll(/"(\w+)" as (?:(?:not )?materialized )?\(/g)].map((m) => m[1]!)))
  const named = (pattern: RegExp) => new Set(sent.flatMap((s) => [...s.matchAll(pattern)].map((m) => m[1]!)).filter((n) => !ctes.has(n)))
  const listed = (privilege: string) => Object.keys(TABLE_PRIVILEGES).filter((table) => TABLE_PRIVILEGES[table]!.includes(privilege as never)).sort()
  t.same([...named(/(?:from|join|update|into) (?!lateral\b|of\b|set\b)"?([\w.]+)"?(?![\w(])/gi)].filter((n) => n !== 'kysely_migration').sort(), Object.keys(TABLE_PRIVILEGES).sort(), 'every table used')
    // An insert that updates on conflict updates its table too.
    t.same([...new Set([...named(/update "([\w.]+)"/g), ...named(/insert into "([\w.]+)" \((?:(?!insert into)[^])*? on conflict \([^)]*\) do update/g)])].sort(), listed('UPDATE'), 'every table updated')
  t.same([...named(/insert into "([\w.]+)"/g)].sort(), listed('INSERT'), 'every table inserted into')
  t.same([...named(/delete from "([\w.]+)"/g)].sort(), listed('DELETE'), 'every table deleted from')

  await sql`RESET ROLE`.execute(db)
  await sql`REVOKE UPDATE ON projects FROM ${sql.id(role)}`.execute(db)
  await sql`SET ROLE ${sql.id(role)}`.execute(db)
  for (let i = 0; i < 2; i++) {
    const res = await ready()
    t.equal(res.statusCode, 503, 'not ready without UPDATE on projects')
    t.same(res.json(), NOT_READY, 'and not saying why')
  }
  t.same(warnings(), ['not ready: the database role lacks projects UPDATE'], 'the log says which privilege, once')
  t.equal((await api.get(project.publicId)).statusCode, 200, 'reads go on')
  const refused = await api.updateName({ project_id: project.publicId, name: 'Never written' })
  t.equal(refused.statusCode, 503, 'a rename is 503, not 500')
  t.same(refused.json(), UNAVAILABLE)
  t.equal((await projectRow(db, project.id)).name, 'Renamed', 'nothing written')
})
