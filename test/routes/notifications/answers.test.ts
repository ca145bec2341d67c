// notifications/list writes a page the database returns as the same text as before
// from the bytes kept then (plugins/answers.ts). The bytes must be those Fastify's own
// serializer writes from the route's schema, with or without the page kept, and a
// change to the inbox (a new notification, one marked read, a project renamed)
// must be seen at once.
import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { loadDemo } from '../../../src/db/demo.js'
import { listNotifications, parseNotifications } from '../../../src/db/notifications.js'
import { shortId } from '../../../src/ids.js'
import { toNotificationItems } from '../../../src/presenters/notification.js'
import { NotificationListResponseSchema } from '../../../src/schemas/notifications.js'
import { build, client } from '../../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

// The reference: the same page returned as an object from a route with the same
// response schema, which Fastify serializes itself.
const { app, db } = await build(t, { before: (server) => {
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

async function list (server: typeof app, email: string, page = 1, per = 100): Promise<LightMyRequestResponse> {
  return server.inject({ method: 'GET', url: '/api/external/v1/notifications/list', query: { page: String(page), per_page: String(per) }, headers: { authorization: `Bearer ${demo.tokens[email]!.write}` } })
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
  }
  t.equal(app.answers.hits, hits + 1, `${what}: again from memory`)
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
