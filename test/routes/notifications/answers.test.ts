// notifications/list writes a page the database returns at the same version as
// before from the bytes kept then (plugins/answers.ts), and the database, told the
// version the app holds, does not send the page's text. The bytes must be those
// Fastify's own serializer writes from the route's schema, with or without the page
// kept, and a change to the inbox (a new notification, one marked read, a project
// renamed, an author renamed) must be seen at once.
import { gunzipSync } from 'node:zlib'
import t from 'tap'
import { sql, type CompiledQuery, type LogEvent } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import { loadDemo } from '../../../src/db/demo.js'
import { listNotifications, parseNotifications } from '../../../src/db/notifications.js'
import { shortId } from '../../../src/ids.js'
import { toNotificationItems } from '../../../src/presenters/notification.js'
import { NotificationListResponseSchema } from '../../../src/schemas/notifications.js'
import { build, client, compressions } from '../../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

// The reference: the same page returned as an object from a route with the same
// response schema, which Fastify serializes itself.
// Every statement the app sends, with its parameters.
const sent: CompiledQuery[] = []
const { app, db } = await build(t, { log: (event: LogEvent) => { sent.push(event.query) }, before: (server) => {
  server.get('/reference/notifications', { schema: { response: { 200: NotificationListResponseSchema } } }, async (request) => {
    const { person, page, per } = request.query as { person: string, page: string, per: string }
    const notifications = await listNotifications(server.db, { personId: person, tokenId: null }, { limit: Number(per), offset: (Number(page) - 1) * Number(per) })
    return { notifications: toNotificationItems(parseNotifications(notifications)) }
  })
} })
const { app: plain } = await build(t, { db, env: { ANSWER_CACHE_MB: '0' } })
await Promise.all([app.ready(), plain.ready()])
const demo = await loadDemo(db)
const people = await db.selectFrom('people').select(['id', 'email']).execute()

async function list (server: typeof app, email: string, page = 1, per = 100, acceptEncoding?: string): Promise<LightMyRequestResponse> {
  const headers = { authorization: `Bearer ${demo.tokens[email]!.write}`, ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }) }
  return server.inject({ method: 'GET', url: '/api/external/v1/notifications/list', query: { page: String(page), per_page: String(per) }, headers })
}

async function reference (email: string, page = 1, per = 100): Promise<string> {
  const person = people.find((p) => p.email === email)!.id
  const res = await app.inject({ method: 'GET', url: '/reference/notifications', query: { person, page: String(page), per: String(per) } })
  if (res.statusCode !== 200) throw new Error(res.body)
  return res.body
}

async function same (t: Tap, email: string, what: string, page = 1, per = 100) {
  const expected = await reference(email, page, per)
  const written = await list(plain, email, page, per)
  const first = await list(app, email, page, per)
  const hits = app.answers.hits
  const again = await list(app, email, page, per)
  for (const [res, how] of [[written, 'without kept answers'], [first, 'first'], [again, 'again']] as const) {
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.body, expected, `${what}, ${how}: Fastify's bytes`)
    t.equal(res.headers['content-encoding'], undefined, `${what}, ${how}: not compressed for a client that does not ask`)
    t.equal(res.headers.vary, 'Accept-Encoding', `${what}, ${how}: the answer varies with Accept-Encoding`)
  }
  t.equal(app.answers.hits, hits + 1, `${what}: again from memory`)
  // For a client that accepts gzip (as Operately's CLI does), the same bytes compressed,
  // from the page kept, whose piece is compressed once and sent again; as they are
  // from the app that keeps nothing (it would compress every page whole, every time).
  for (const how of ['kept', 'kept, again']) {
    const res = await list(app, email, page, per, 'gzip, deflate, br')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-encoding'], 'gzip', `${what}, ${how}: gzip`)
    t.equal(res.headers.vary, 'Accept-Encoding')
    t.equal(res.headers['content-length'], String(res.rawPayload.length), `${what}, ${how}: the compressed length`)
    t.equal(gunzipSync(res.rawPayload).toString(), expected, `${what}, ${how}: Fastify's bytes, compressed`)
  }
  const unkept = await list(plain, email, page, per, 'gzip, deflate, br')
  t.equal(unkept.headers['content-encoding'], undefined, `${what}, nothing kept: not compressed`)
  t.equal(unkept.headers.vary, 'Accept-Encoding')
  t.equal(unkept.body, expected, `${what}, nothing kept: Fastify's bytes`)
  return JSON.parse(expected) as { notifications: Array<{ id: string, read: boolean, project: { name: string } | null }> }
}

// Every demo person's inbox, whole and in pages of 2, after a change that notifies
// with names JSON escapes.
const website = demo.projects['Website Redesign']!
const alice = client(app, demo.tokens['alice@acme.test']!.write)
for (const res of [
  await alice.updateName({ project_id: shortId(website.id), name: 'Café "Zoë" \\ 日本語 🚀' }),
  await alice.updateDescription({ project_id: shortId(website.id), description: '{"type":"doc","content":[]}' })
]) if (res.statusCode !== 200) throw new Error(res.body)

t.test('every inbox, whole and page by page, is Fastify\'s bytes whether kept or not', async (t) => {
  for (const email of Object.keys(demo.tokens)) {
    const whole = await same(t, email, email)
    for (let page = 1; page <= Math.ceil(whole.notifications.length / 2) + 1; page++) await same(t, email, `${email} page ${page}`, page, 2)
  }
})

t.test('a change to the inbox is seen at once', async (t) => {
  // Someone with an unread notification about the project, made by the change above.
  const { email: reader } = await db.selectFrom('notifications as n').innerJoin('people as p', 'p.id', 'n.person_id')
    .select('p.email').where('n.project_id', '=', website.id).where('n.read', '=', false).orderBy('p.email').executeTakeFirstOrThrow()
  const before = await same(t, reader, 'before')

  const unread = before.notifications.find((n) => !n.read)!
  const marked = await app.inject({ method: 'POST', url: '/api/external/v1/notifications/mark_as_read', headers: { authorization: `Bearer ${demo.tokens[reader]!.write}` }, payload: { id: unread.id } })
  t.equal(marked.statusCode, 200)
  const after = await same(t, reader, 'after one is marked read')
  t.equal(after.notifications.find((n) => n.id === unread.id)?.read, true)

  // A rename does not notify, but the page names the project by its current name.
  await db.updateTable('projects').set({ name: 'Renamed behind the server' }).where('id', '=', website.id).execute()
  const renamed = await same(t, reader, 'after the project is renamed outside the app')
  t.ok(renamed.notifications.some((n) => n.project?.name === 'Renamed behind the server'))
})

/** The versions held that the first page of notifications sent since `mark` (sent.length before a request) told the database of. */
function knownSince (mark: number): string[] {
  const statement = sent.slice(mark).find((q) => q.sql.includes('from "page"'))
  if (statement === undefined) throw new Error('no page of notifications was sent')
  const known = statement.parameters.find(Array.isArray)
  if (known === undefined) throw new Error('the page has no versions held among its parameters')
  return known as string[]
}

t.test('a page asked for again comes from the database without its text, and whole once it changed', async (t) => {
  // Someone with notifications about the project, which the test then changes.
  const { email: reader, id: person } = await db.selectFrom('notifications as n').innerJoin('people as p', 'p.id', 'n.person_id')
    .select(['p.email', 'p.id']).where('n.project_id', '=', website.id).orderBy('p.email').executeTakeFirstOrThrow()
  const actor = { personId: person, tokenId: null }
  // Pages of 3 from an inbox of more.
  await sql`INSERT INTO notifications (person_id, project_id, activity_id, author_id, action)
    SELECT person_id, project_id, activity_id, author_id, action FROM notifications WHERE person_id = ${person}::uuid`.execute(db)
  const range = { limit: 3, offset: 0 }
  let mark = sent.length
  const first = await list(app, reader, 1, 3)
  t.equal(first.body, await reference(reader, 1, 3), 'the first page: Fastify\'s bytes')
  t.same(knownSince(mark), [], 'the first time, the app holds no version of it')

  mark = sent.length
  const hits = app.answers.hits
  const again = await list(app, reader, 1, 3)
  t.equal(again.body, first.body, 'again: the same bytes')
  t.equal(app.answers.hits, hits + 1, 'again: from memory')
  const known = knownSince(mark)
  t.equal(known.length, 1, 'the app told the database the version it holds')

  // What the database sends for it: the version alone, unless told nothing.
  const told = await listNotifications(db, actor, range, known)
  const untold = await listNotifications(db, actor, range)
  t.equal(told.kept, true, 'at the version held')
  t.equal(told.items, null, 'without its text')
  t.equal(untold.kept, false, 'told nothing: not kept')
  t.equal(untold.version, told.version, 'the same version')
  t.equal(told.version, known[0], 'the version the app holds')
  t.equal(parseNotifications(untold).length, 3, 'told nothing, the page whole')
  // Another page, another version; an empty page, none.
  t.not((await listNotifications(db, actor, { limit: 3, offset: 1 })).version, told.version, 'the page after its first notification: another version')
  t.equal((await listNotifications(db, actor, { limit: 3, offset: 10_000 })).version, null, 'an empty page: no version')
  // Someone else told this version: their own page, whole.
  const other = people.find((p) => p.email !== reader && p.email in demo.tokens)!
  t.equal((await listNotifications(db, { personId: other.id, tokenId: null }, range, known)).kept, false, 'another person\'s page is not at this version')

  // Each change of what the page shows gives another version, and the page whole.
  const changes: Array<[string, () => Promise<unknown>, (page: ReturnType<typeof parseNotifications>) => boolean]> = [
    ['a notification marked read', async () => await sql`UPDATE notifications SET read = true, read_at = now() WHERE id = ${parseNotifications(untold).find((n) => !n.read)?.id ?? parseNotifications(untold)[0]!.id}::uuid AND NOT read`.execute(db),
      (page) => page.some((n) => n.read)],
    ['its project renamed', async () => await sql`UPDATE projects SET name = 'Renamed, seen on the page' WHERE id = ${website.id}::uuid`.execute(db),
      (page) => page.some((n) => n.project?.name === 'Renamed, seen on the page')],
    ['an author renamed', async () => await sql`UPDATE people SET full_name = full_name || ' (renamed)' WHERE id = (SELECT n.author_id FROM notifications n WHERE n.person_id = ${person}::uuid AND n.author_id IS NOT NULL ORDER BY n.inserted_at DESC, n.id DESC LIMIT 1)`.execute(db),
      (page) => page.some((n) => n.author?.full_name.endsWith(' (renamed)') === true)],
    ['a new notification', async () => await sql`INSERT INTO notifications (person_id, action) VALUES (${person}::uuid, 'project_created')`.execute(db),
      (page) => page[0]!.action === 'project_created' && page[0]!.project === null]
  ]
  let version = told.version
  for (const [what, change, shows] of changes) {
    await change()
    const stale = await listNotifications(db, actor, range, [version!])
    t.equal(stale.kept, false, `${what}: the version held is stale`)
    t.not(stale.version, version, `${what}: another version`)
    t.ok(shows(parseNotifications(stale)), `${what}: the page shows it`)
    mark = sent.length
    const seen = await list(app, reader, 1, 3)
    t.same(knownSince(mark), [version], `${what}: the app told the database the version it held`)
    t.equal(seen.body, await reference(reader, 1, 3), `${what}: Fastify's bytes`)
    t.equal(seen.body, (await list(plain, reader, 1, 3)).body, `${what}: as the app that keeps nothing writes them`)
    version = stale.version
  }
})

t.test('a page kept is compressed once: sent again with gzip, nothing is compressed', async (t) => {
  const { email } = await db.selectFrom('notifications as n').innerJoin('people as p', 'p.id', 'n.person_id')
    .select('p.email').where('p.email', 'in', Object.keys(demo.tokens)).groupBy('p.email').orderBy(sql`count(*)`, 'desc').executeTakeFirstOrThrow()
  await sql`INSERT INTO notifications (person_id, action) SELECT id, 'project_created' FROM people WHERE email = ${email}`.execute(db)
  const expected = await reference(email)
  let first: LightMyRequestResponse | undefined
  t.ok((await compressions(async () => { first = await list(app, email, 1, 100, 'gzip') })).length > 0, 'the first time: compressed')
  let again: LightMyRequestResponse | undefined
  t.same(await compressions(async () => { again = await list(app, email, 1, 100, 'gzip') }), [], 'sent again: nothing compressed')
  t.ok(again!.rawPayload.equals(first!.rawPayload), 'the same compressed bytes')
  t.equal(gunzipSync(again!.rawPayload).toString(), expected, 'the page\'s bytes')
  t.ok(again!.rawPayload.length < Buffer.byteLength(expected), `smaller: ${again!.rawPayload.length} bytes of ${Buffer.byteLength(expected)}`)
  for (const acceptEncoding of ['gzip;q=0', 'identity', 'br, deflate']) {
    const res = await list(app, email, 1, 100, acceptEncoding)
    t.equal(res.headers['content-encoding'], undefined, `${acceptEncoding}: not compressed`)
    t.equal(res.body, expected, `${acceptEncoding}: the page's bytes`)
  }
})
