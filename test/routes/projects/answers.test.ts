// projects/get, projects/list and the mutations write a project the database
// returns as the same text as before from the bytes kept then (plugins/answers.ts).
// What must hold: the bytes are exactly those the app writes without it
// (ANSWER_CACHE_MB=0) and those Fastify's own serializer writes from the route's
// schema (a route of the test's own is the reference); a change made anywhere,
// even outside the app, is seen at once; a page and a project share what is kept;
// a page or a project asked for again is sent by the database as its readers' parts
// alone while its projects have not changed, and whole once one has.
import { request as httpRequest } from 'node:http'
import { gunzipSync } from 'node:zlib'
import t from 'tap'
import { sql, type CompiledQuery, type LogEvent } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import { loadDemo } from '../../../src/db/demo.js'
import { findProject, KEPT_COLUMNS, OWN_COLUMNS, parseProject, PERSONAL_COLUMNS } from '../../../src/db/project-aggregate.js'
import { listProjects } from '../../../src/db/project-list.js'
import { updateProjectField } from '../../../src/db/project-mutations.js'
import { decodeId, shortId } from '../../../src/ids.js'
import { toProject } from '../../../src/presenters/project.js'
import { ProjectResponseSchema } from '../../../src/schemas/projects.js'
import { build, client, compressions } from '../../helper.js'

// The reference: the project as an object from a route with projects/get's
// response schema, which Fastify serializes itself.
// Every statement the app sends, with its parameters.
const sent: CompiledQuery[] = []
const { app, db } = await build(t, { log: (event: LogEvent) => { sent.push(event.query) }, before: (server) => {
  server.get('/reference/project', { schema: { response: { 200: ProjectResponseSchema } } }, async (request) => {
    const { id, person } = request.query as { id: string, person: string }
    const read = await findProject(server.db, decodeId(id)!, { personId: person, tokenId: null })
    if (read === null) throw new Error('not found')
    return { project: toProject(parseProject(read)) }
  })
} })
const { app: plain } = await build(t, { db, env: { ANSWER_CACHE_MB: '0' } })
await Promise.all([app.ready(), plain.ready()])
const demo = await loadDemo(db)
const people = await db.selectFrom('people').select(['id', 'email']).execute()

/** What Fastify writes for the project as this person reads it now. */
async function reference (email: string, id: string): Promise<string> {
  const person = people.find((p) => p.email === email)!.id
  const res = await app.inject({ method: 'GET', url: '/reference/project', query: { id, person } })
  if (res.statusCode !== 200) throw new Error(res.body)
  return res.body
}
const erin = demo.tokens['erin@acme.test']!.write
const alice = demo.tokens['alice@acme.test']!.write
const website = demo.projects['Website Redesign']!
const websiteId = shortId(website.id)

/** The same request to the app and to the app without kept answers. */
async function both (token: string, request: (api: ReturnType<typeof client>) => Promise<LightMyRequestResponse>) {
  const kept = await request(client(app, token))
  const written = await request(client(plain, token))
  return { kept, written }
}

function sameAnswer (t: Tap, kept: LightMyRequestResponse, written: LightMyRequestResponse, what: string) {
  t.equal(kept.statusCode, 200, `${what}: 200`)
  t.equal(kept.headers['content-type'], written.headers['content-type'], `${what}: the same content type`)
  t.equal(kept.headers.etag, written.headers.etag, `${what}: the same tag`)
  t.equal(kept.body, written.body, `${what}: the same bytes`)
  t.equal(kept.headers['content-length'], String(Buffer.byteLength(written.body)), `${what}: its length`)
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** projects/list asked for by a client that accepts gzip, as Operately's CLI does. */
async function listGzip (server: typeof app, token: string, query: Record<string, string> = {}, acceptEncoding = 'gzip, deflate, br'): Promise<LightMyRequestResponse> {
  return await server.inject({ method: 'GET', url: '/api/external/v1/projects/list', query, headers: { authorization: `Bearer ${token}`, 'accept-encoding': acceptEncoding } })
}


t.test('projects/get answers the same bytes whether the project was written before or not', async (t) => {
  // Names and a description that JSON escapes or holds as more than one byte per character.
  t.equal((await client(app, erin).updateName({ project_id: websiteId, name: 'Café "Zoë" \\ 日本語 🚀 </script>' })).statusCode, 200)
  t.equal((await client(app, erin).updateDescription({ project_id: websiteId, description: '{"type":"doc","content":[{"type":"text","text":"tab\\t, quote \\" and é"}]}' })).statusCode, 200)
  for (const [person, token] of Object.entries(demo.tokens)) {
    for (const [name, project] of Object.entries(demo.projects)) {
      const id = shortId(project.id)
      const first = await both(token.write, (api) => api.get(id))
      if (first.written.statusCode === 404) {
        t.equal(first.kept.statusCode, 404, `${person} cannot see ${name} either way`)
        continue
      }
      sameAnswer(t, first.kept, first.written, `${person} reading ${name}, first`)
      t.equal(first.kept.body, await reference(person, id), `${person} reading ${name}: Fastify's bytes`)
      const hits = app.answers.hits
      const again = await client(app, token.write).get(id)
      t.equal(app.answers.hits, hits + 1, `${person} reading ${name} again: written from memory`)
      t.equal(again.body, first.written.body, `${person} reading ${name} again: the same bytes`)
    }
  }
})

t.test('everyone who reads a project shares its kept bytes, each answer with the reader\'s own fields', async (t) => {
  // A name no read has kept yet: Bob reads first, then four people who see the
  // project otherwise (pinned or not, another role, their own notifications, another
  // access level), each from what his read kept.
  const name = 'Read by four'
  t.equal((await client(app, erin).updateName({ project_id: websiteId, name })).statusCode, 200)
  await sql`UPDATE notifications SET read = false, read_at = NULL WHERE person_id IN (SELECT id FROM people WHERE email = 'carol@acme.test')`.execute(db)
  const readers = ['bob@acme.test', 'alice@acme.test', 'erin@acme.test', 'carol@acme.test']
  const projects = []
  for (const [i, person] of readers.entries()) {
    const hits = app.answers.hits
    const { kept, written } = await both(demo.tokens[person]!.read_only, (api) => api.get(websiteId))
    sameAnswer(t, kept, written, `${person} reading it`)
    t.equal(kept.body, await reference(person, websiteId), `${person}: Fastify's bytes`)
    t.equal(app.answers.hits, i === 0 ? hits : hits + 1, i === 0 ? `${person}: written and kept` : `${person}: written from what ${readers[0]} kept`)
    projects.push(kept.json().project)
  }
  const unread = await Promise.all(readers.map(async (email) => (await db.selectFrom('notifications as n')
    .innerJoin('people as pe', 'pe.id', 'n.person_id')
    .where('pe.email', '=', email).where('n.project_id', '=', website.id).where('n.read', '=', false)
    .select('n.id').orderBy('n.inserted_at', 'desc').orderBy('n.id').execute()).map((n) => shortId(n.id))))
  t.ok(unread[3]!.length > 0, 'Carol has unread notifications about it')
  const own = (p: Record<string, unknown>) => [p.is_pinned, p.my_role, (p.notifications as Array<{ id: string }>).map((n) => n.id), p.permissions]
  t.same(projects.map(own), [
    [false, null, unread[0], { can_view: true, can_comment: true, can_edit: false, has_full_access: false }],
    [true, 'champion', unread[1], { can_view: true, can_comment: true, can_edit: true, has_full_access: true }],
    [false, 'reviewer', unread[2], { can_view: true, can_comment: true, can_edit: true, has_full_access: true }],
    [false, 'contributor', unread[3], { can_view: true, can_comment: true, can_edit: true, has_full_access: false }]
  ], 'each reader\'s own fields')
  t.equal(new Set(projects.map((p) => p.name)).size, 1, 'one project')
})

t.test('a mutation\'s answer is Fastify\'s bytes, and the next read\'s', async (t) => {
  const api = client(app, erin)
  for (const name of ['Plain name', 'Ünïcödé 名前 ✨', 'Quotes " and \\ and /']) {
    const renamed = await api.updateName({ project_id: websiteId, name })
    t.equal(renamed.statusCode, 200)
    t.equal(renamed.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(renamed.body, await reference('erin@acme.test', websiteId), `${name}: the mutation writes Fastify's bytes`)
    const hits = app.answers.hits
    const read = await api.get(websiteId)
    t.equal(app.answers.hits, hits, `${name}: a change's answer is not kept`)
    t.equal(read.body, renamed.body, `${name}: the read right after writes the same bytes`)
    t.equal(read.headers.etag, renamed.headers.etag)
    const again = await api.get(websiteId)
    t.equal(app.answers.hits, hits + 1, `${name}: the read's answer is kept`)
    t.equal(again.body, renamed.body, `${name}: and the next is written from it`)
  }
})

t.test('a change takes its project\'s children from those the change before it wrote: Fastify\'s bytes, for every project and editor', async (t) => {
  let changes = 0
  for (const [name, project] of Object.entries(demo.projects)) {
    const id = shortId(project.id)
    for (const [person, token] of Object.entries(demo.tokens)) {
      for (const round of [1, 2]) {
        const parts = app.answers.partHits
        const renamed = await client(app, token.write).updateName({ project_id: id, name: `${name} (${person}, ${round})` })
        if (renamed.statusCode !== 200) continue
        changes++
        t.equal(renamed.body, await reference(person, id), `${person} renaming ${name}, ${round}: Fastify's bytes`)
        if (round === 2) t.equal(app.answers.partHits, parts + 1, `${person} renaming ${name} again: its children from memory`)
      }
    }
  }
  t.ok(changes >= 10, `${changes} changes`)

  // A child changes outside the app: the next change writes it, and keeps it for the one after.
  const api = client(app, erin)
  await api.updateName({ project_id: websiteId, name: 'Before the milestone' })
  await sql`UPDATE project_milestones SET title = 'Moved "launch"' WHERE project_id = ${website.id}::uuid AND id = (SELECT min(id::text)::uuid FROM project_milestones WHERE project_id = ${website.id}::uuid)`.execute(db)
  const parts = app.answers.partHits
  const after = await api.updateName({ project_id: websiteId, name: 'After the milestone' })
  t.equal(app.answers.partHits, parts, 'new children: written, not taken')
  t.match(after.body, /Moved \\"launch\\"/, 'the new title')
  t.equal(after.body, await reference('erin@acme.test', websiteId), 'Fastify\'s bytes')
  const again = await api.updateName({ project_id: websiteId, name: 'Again after the milestone' })
  t.equal(app.answers.partHits, parts + 1, 'then taken')
  t.equal(again.body, await reference('erin@acme.test', websiteId), 'Fastify\'s bytes')

  // A description that mentions someone of the company not yet subscribed (everyone
  // of the demo's is: a newcomer joins) subscribes them in its statement: its
  // answer's children are new, so written, not taken.
  const newcomer = await db.insertInto('people')
    .values({ company_id: (await db.selectFrom('projects').where('id', '=', website.id).select('company_id').executeTakeFirstOrThrow()).company_id, full_name: 'Nia Newcomer', email: 'nia.newcomer@acme.test' })
    .returning('id').executeTakeFirstOrThrow()
  const beforeMention = app.answers.partHits
  const described = await api.updateDescription({ project_id: websiteId, description: JSON.stringify({ type: 'doc', content: [{ type: 'mention', attrs: { id: shortId(newcomer.id), label: 'x' } }] }) })
  t.equal(described.statusCode, 200)
  t.equal(app.answers.partHits, beforeMention, 'new children: written, not taken')
  t.ok((described.json().project.subscription_list.subscriptions as Array<{ type: string, person: { id: string } }>)
    .some((s) => s.type === 'mentioned' && s.person.id === shortId(newcomer.id)), 'the person mentioned is subscribed in the answer')
  t.equal(described.body, await reference('erin@acme.test', websiteId), 'a description change: Fastify\'s bytes')
  const { written } = await both(erin, (api) => api.get(websiteId))
  t.equal(written.body, described.body, 'the read after it, written without kept answers, is the same')
})

t.test('a change made outside the app is seen at once', async (t) => {
  const api = client(app, erin)
  const before = await api.get(websiteId)
  t.equal((await api.get(websiteId)).body, before.body, 'kept')
  // A contributor renamed, a notification for the reader, a pin: none goes through the app.
  await sql`UPDATE people SET full_name = 'Alice J. Renamed' WHERE email = 'alice@acme.test'`.execute(db)
  const renamedPerson = await both(erin, (api) => api.get(websiteId))
  sameAnswer(t, renamedPerson.kept, renamedPerson.written, 'after a person\'s rename')
  t.not(renamedPerson.kept.headers.etag, before.headers.etag, 'another tag')
  t.match(renamedPerson.kept.body, /Alice J\. Renamed/)
  t.notMatch(renamedPerson.kept.body, /Alice Johnson/)

  await sql`INSERT INTO project_pins (project_id, person_id) SELECT ${website.id}::uuid, id FROM people WHERE email = 'erin@acme.test'`.execute(db)
  const pinned = await both(erin, (api) => api.get(websiteId))
  sameAnswer(t, pinned.kept, pinned.written, 'after a pin')
  t.equal(pinned.kept.json().project.is_pinned, true)

  await sql`UPDATE projects SET next_check_in_scheduled_at = now() - interval '4 days', state = 'active' WHERE id = ${website.id}::uuid`.execute(db)
  const outdated = await both(erin, (api) => api.get(websiteId))
  sameAnswer(t, outdated.kept, outdated.written, 'after a check-in fell overdue')
  t.equal(outdated.kept.json().project.is_outdated, true)
})

t.test('projects/list answers the same bytes, page after page, and shares what projects/get kept', async (t) => {
  for (const [person, token] of Object.entries(demo.tokens)) {
    for (const query of [{}, { limit: '1' }, { include_archived: 'true' }, { only_my_projects: 'true' }] as Array<Record<string, string>>) {
      let cursor: string | null = null
      let pages = 0
      do {
        const q: Record<string, string> = cursor === null ? query : { ...query, cursor }
        const { kept, written } = await both(token.write, (api) => api.list(q))
        t.equal(kept.statusCode, 200)
        t.equal(kept.headers['content-type'], written.headers['content-type'])
        t.equal(kept.body, written.body, `${person}, ${JSON.stringify(q)}: the same bytes`)
        t.equal(kept.headers['content-length'], String(Buffer.byteLength(kept.body)), 'sent in parts, with the length of them all')
        t.equal(kept.body, JSON.stringify(kept.json()), 'written as JSON.stringify writes it: no space, the same escapes')
        t.equal(kept.headers['content-encoding'], undefined, 'not compressed for a client that does not ask')
        t.equal(kept.headers.vary, 'Accept-Encoding', 'the answer varies with Accept-Encoding')
        // Asked for with gzip from the app that keeps (this page's projects kept by the
        // request just made): the same bytes, compressed. The app that keeps nothing
        // sends them as they are (it would compress every page whole, every time).
        const zipped = await listGzip(app, token.write, q)
        t.equal(zipped.headers['content-encoding'], 'gzip', 'kept: gzip')
        t.equal(zipped.headers.vary, 'Accept-Encoding')
        t.equal(zipped.headers['content-length'], String(zipped.rawPayload.length), 'kept: the compressed length')
        t.equal(gunzipSync(zipped.rawPayload).toString(), written.body, `${person}, ${JSON.stringify(q)}: the same bytes, compressed`)
        const unkept = await listGzip(plain, token.write, q)
        t.equal(unkept.headers['content-encoding'], undefined, 'nothing kept: not compressed')
        t.equal(unkept.headers.vary, 'Accept-Encoding')
        t.equal(unkept.body, written.body, 'nothing kept: the same bytes')
        cursor = kept.json().next_cursor
        pages++
      } while (cursor !== null && pages < 10)
    }
  }

  // A project read alone is written from what the page kept, and the other way round.
  const api = client(app, alice)
  await api.list()
  const hits = app.answers.hits
  const page = (await api.list()).json().projects as Array<{ id: string }>
  t.equal(app.answers.hits, hits + page.length, 'the whole page again from memory')
  const read = await api.get(page[0]!.id)
  t.equal(app.answers.hits, hits + page.length + 1, 'a project of it too')
  t.same(read.json().project, page[0], 'the same project')
})

/**
 * The versions the app told the database it holds (db/project-list.ts, `known`), in
 * the first page's statement sent since `mark` (sent.length before a request): both()
 * asks the app that keeps answers first.
 */
function knownSince (mark: number): string[] {
  // The one list among its parameters when no roles are asked for.
  return toldSince(mark, 'row_xmin', 'page')
}

/** The first list among the parameters of the first statement sent since `mark` whose SQL holds `marker` (a `what`). */
function toldSince (mark: number, marker: string, what: string): string[] {
  const statement = sent.slice(mark).find((q) => q.sql.includes(marker))
  if (statement === undefined) throw new Error(`no ${what} was sent`)
  const known = statement.parameters.find(Array.isArray)
  if (known === undefined) throw new Error(`the ${what} has no versions held among its parameters`)
  return known as string[]
}

const listQuery = { roles: null, spaceId: null, goalId: null, includeArchived: false, after: null, limit: 20 }

t.test('a page asked for again comes from the database as its readers\' parts alone, and is written from what was kept', async (t) => {
  const ada = people.find((p) => p.email === 'alice@acme.test')!.id
  // A page size no request has asked for: a page of its own.
  const query = { include_archived: 'true', limit: '19' }
  let mark = sent.length
  const first = await both(alice, (api) => api.list(query))
  t.equal(first.kept.body, first.written.body, 'the first page, written')
  t.same(knownSince(mark), [], 'the first time, the app holds none of it')
  mark = sent.length
  const again = await both(alice, (api) => api.list(query))
  const ids = (again.kept.json().projects as Array<{ id: string }>).map((p) => decodeId(p.id))
  t.equal(again.kept.body, first.written.body, 'again: the same bytes')
  t.equal(again.kept.body, again.written.body, 'as the app that keeps nothing writes them')
  const known = knownSince(mark)
  t.ok(ids.length >= 2, 'a page of projects')
  const heldIds = known.map((v) => v.split(' ')[0])
  t.ok(ids.every((id) => heldIds.includes(id ?? '')), 'the app told the database it holds each project of the page')

  // What the database sends for them: the readers' parts alone, unless told nothing.
  const told = await listProjects(db, { personId: ada }, { ...listQuery, includeArchived: true, limit: 19, known })
  const untold = await listProjects(db, { personId: ada }, { ...listQuery, includeArchived: true, limit: 19, known: [] })
  t.same(told.projects.map((p) => p.id), ids, 'the page')
  t.ok(told.projects.every((p) => p.kept), 'each project at a version held')
  for (const p of told.projects) {
    t.same(Object.keys(JSON.parse(p.aggregate)), ['is_pinned', 'my_role', 'notifications'], `${p.name}: the reader's part alone`)
  }
  t.ok(untold.projects.every((p) => !p.kept), 'told nothing, none')
  t.same(untold.projects.map((p) => p.version), told.projects.map((p) => p.version), 'the same versions')
  t.ok(untold.projects.every((p, i) => p.aggregate.length > 10 * told.projects[i]!.aggregate.length), 'told nothing, it sends every aggregate whole')
})

/** The versions the app told the database it holds in the first projects/get statement sent since `mark` (db/project-aggregate.ts, `known`). */
function knownToGetSince (mark: number): string[] {
  return toldSince(mark, '"acc"."level"', 'read of a project')
}

t.test('a project asked for again comes from the database as its reader\'s part alone, is written from what was kept, and whole once it changed', async (t) => {
  const internal = demo.projects['Internal Tools']!
  const id = shortId(internal.id)
  const reader = (email: string) => ({ personId: people.find((p) => p.email === email)!.id })
  // A version no read has seen: the project changed outside the app.
  await sql`UPDATE projects SET name = 'Internal Tools, read by version' WHERE id = ${internal.id}::uuid`.execute(db)
  let mark = sent.length
  const first = await both(erin, (api) => api.get(id))
  sameAnswer(t, first.kept, first.written, 'the first read')
  t.equal((await findProject(db, internal.id, reader('erin@acme.test'), knownToGetSince(mark)))?.kept, false, 'the first time, the app holds no version it is at')

  mark = sent.length
  const again = await both(erin, (api) => api.get(id))
  sameAnswer(t, again.kept, again.written, 'again')
  t.equal(again.kept.body, first.written.body, 'again: the same bytes')
  const known = knownToGetSince(mark)
  t.equal(known.length, 1, 'the app told the database the version it holds')
  t.equal(known[0]!.split(' ')[0], internal.id, 'of this project')

  // What the database sends for it: the reader's part alone, with the whole row's tag.
  const told = await findProject(db, internal.id, reader('erin@acme.test'), known)
  const untold = await findProject(db, internal.id, reader('erin@acme.test'))
  t.ok(told?.kept, 'at the version held')
  t.same(Object.keys(JSON.parse(told!.aggregate)), ['is_pinned', 'my_role', 'notifications'], 'the reader\'s part alone')
  t.equal(untold?.kept, false, 'told nothing, not kept')
  t.ok(untold!.aggregate.length > 10 * told!.aggregate.length, 'told nothing, it sends the project whole')
  t.equal(told!.etag, untold!.etag, 'the same tag either way')
  t.equal(told!.version, untold!.version, 'the same version')

  // Another reader shares what was kept, with their own part and tag.
  mark = sent.length
  const other = await both(alice, (api) => api.get(id))
  sameAnswer(t, other.kept, other.written, 'another reader')
  t.same(knownToGetSince(mark), known, 'told the same version')
  t.not(other.kept.headers.etag, again.kept.headers.etag, 'their own tag')

  // A conditional read from the kept path: 304 with the tag.
  const unchanged = await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id }, headers: { authorization: `Bearer ${erin}`, 'if-none-match': String(again.kept.headers.etag) } })
  t.equal(unchanged.statusCode, 304, 'If-None-Match with its tag: 304')
  t.equal(unchanged.headers.etag, again.kept.headers.etag)

  // Changed outside the app: the version held is no longer the project's.
  await sql`UPDATE projects SET name = 'Internal Tools, renamed outside' WHERE id = ${internal.id}::uuid`.execute(db)
  mark = sent.length
  const changed = await both(erin, (api) => api.get(id))
  sameAnswer(t, changed.kept, changed.written, 'after the change')
  t.equal(changed.kept.json().project.name, 'Internal Tools, renamed outside', 'the new name')
  t.same(knownToGetSince(mark), known, 'told the version it held')
  t.equal((await findProject(db, internal.id, reader('erin@acme.test'), known))?.kept, false, 'which the project is no longer at')
  t.equal(changed.kept.body, await reference('erin@acme.test', id), 'Fastify\'s bytes')
})

/** The children versions the app told a change's statement it holds, in the first one sent since `mark` (db/project-mutations.ts, `knownChildren`). */
function knownChildrenSince (mark: number): string[] {
  return toldSince(mark, '"children_kept"', 'change')
}

t.test('a change after a change gets its project from the database without the children the app holds written, and writes the same bytes', async (t) => {
  const internal = website
  const id = websiteId
  const api = client(app, erin)
  const erinId = people.find((p) => p.email === 'erin@acme.test')!.id
  await api.updateName({ project_id: id, name: 'Children kept, first' })
  let mark = sent.length
  const second = await api.updateName({ project_id: id, name: 'Children kept, second' })
  t.equal(second.statusCode, 200)
  t.equal(second.body, await reference('erin@acme.test', id), 'Fastify\'s bytes')
  const known = knownChildrenSince(mark)
  t.equal(known.length, 1, 'the app told the change the version of the children it holds')
  t.equal(known[0]!.split(' ')[0], internal.id, 'of this project')

  // What the database sends: the project's own columns and the reader's, no children; told nothing, all of it.
  const change = async (name: string, knownChildren?: string[]) => {
    const result = await updateProjectField(db, { projectId: internal.id, personId: erinId, tokenId: null, field: 'name', value: name, knownChildren })
    if (result.outcome !== 'done') throw new Error(result.outcome)
    return result.project
  }
  const told = await change('Children kept, told', known)
  t.ok(told.childrenKept, 'at the version held: the children left out')
  t.equal(told.childrenVersion, known[0], 'the same version')
  const fields = Object.keys(JSON.parse(told.aggregate) as object)
  t.notOk(fields.includes('contributors') || fields.includes('milestones') || fields.includes('subscription_list'), 'no child\'s column')
  t.ok(fields.includes('name') && fields.includes('description') && fields.includes('space_name') && fields.includes('notifications'), 'its own columns and the reader\'s')
  const untold = await change('Children kept, untold')
  t.equal(untold.childrenKept, false, 'told nothing: whole')
  const whole = JSON.parse(untold.aggregate) as Record<string, unknown>
  for (const column of KEPT_COLUMNS) delete whole[column]
  t.same(fields, Object.keys(whole), 'every other column of the whole text, in its order')
  t.same(Object.keys(JSON.parse(untold.aggregate) as object), [...OWN_COLUMNS, ...KEPT_COLUMNS, ...PERSONAL_COLUMNS], 'the whole: its own columns, its kept children\'s, the reader\'s')
  t.equal(untold.childrenVersion, told.childrenVersion, 'a rename leaves the children at their version')

  // A child changed (a milestone retitled in SQL): another version, sent whole, then held again.
  await sql`UPDATE project_milestones SET title = 'Retitled for the children' WHERE id = (SELECT min(id::text)::uuid FROM project_milestones WHERE project_id = ${internal.id}::uuid)`.execute(db)
  mark = sent.length
  const afterChild = await api.updateName({ project_id: id, name: 'After the child changed' })
  t.equal(afterChild.body, await reference('erin@acme.test', id), 'after the child changed: Fastify\'s bytes')
  t.match(afterChild.body, /Retitled for the children/)
  t.same(knownChildrenSince(mark), known, 'the app told the version it held')
  t.equal((await change('Children kept, stale', known)).childrenKept, false, 'which the children are no longer at')
  mark = sent.length
  const again = await api.updateName({ project_id: id, name: 'Again after the child changed' })
  t.equal(again.body, await reference('erin@acme.test', id), 'again: Fastify\'s bytes')
  t.not(knownChildrenSince(mark)[0], known[0], 'the new version held')

  // A description that subscribes someone builds the children in the statement: no version, sent whole.
  const newcomer = await db.insertInto('people')
    .values({ company_id: (await db.selectFrom('projects').where('id', '=', internal.id).select('company_id').executeTakeFirstOrThrow()).company_id, full_name: 'Kim Keptchildren', email: 'kim.keptchildren@acme.test' })
    .returning('id').executeTakeFirstOrThrow()
  const described = await api.updateDescription({ project_id: id, description: JSON.stringify({ type: 'doc', content: [{ type: 'mention', attrs: { id: shortId(newcomer.id), label: 'Kim' } }] }) })
  t.equal(described.statusCode, 200)
  t.match(described.body, /Kim Keptchildren/, 'the new subscriber in the answer')
  const { written } = await both(erin, (api) => api.get(id))
  t.equal(described.body, written.body, 'the bytes of the read after it, by the app that keeps nothing')
  const renamed = await api.updateName({ project_id: id, name: 'After the subscription' })
  t.equal(renamed.body, await reference('erin@acme.test', id), 'the next change: Fastify\'s bytes')
})

t.test('a page asked for again after a change anywhere is its new bytes', async (t) => {
  const ada = people.find((p) => p.email === 'alice@acme.test')!.id
  const api = client(app, alice)
  const page = async (what: string) => {
    const mark = sent.length
    const { kept, written } = await both(alice, (api) => api.list({ include_archived: 'true' }))
    t.equal(kept.statusCode, 200, `${what}: 200`)
    t.equal(kept.body, written.body, `${what}: the bytes of the app that keeps nothing`)
    t.ok(knownSince(mark).length > 0, `${what}: the app told the database what it holds`)
    return kept.json().projects as Array<Record<string, unknown>>
  }
  await api.list({ include_archived: 'true' })
  const before = await page('unchanged')
  const shown = (projects: Array<Record<string, unknown>>) => projects.find((p) => decodeId(p.id as string) === website.id)!
  // The project's own row, its kept children (a person, a subscription, the goal, the
  // space), and the reader's own part; none of them through the app.
  const changes: Array<[string, () => Promise<unknown>, (p: Record<string, unknown>) => boolean]> = [
    ['a rename', () => sql`UPDATE projects SET name = 'Renamed outside' WHERE id = ${website.id}::uuid`.execute(db),
      (p) => p.name === 'Renamed outside'],
    ['a contributor renamed', () => sql`UPDATE people SET full_name = 'Bob Renamed' WHERE email = 'bob@acme.test'`.execute(db),
      (p) => JSON.stringify(p).includes('Bob Renamed')],
    ['a subscription cancelled', () => sql`UPDATE subscriptions SET canceled = true WHERE subscription_list_id IN (SELECT id FROM subscription_lists WHERE project_id = ${website.id}::uuid)`.execute(db),
      (p) => (p.subscription_list as { subscriptions: Array<{ canceled: boolean }> }).subscriptions.every((s) => s.canceled)],
    ['the space renamed', () => sql`UPDATE spaces SET name = 'Space renamed' WHERE id = (SELECT space_id FROM projects WHERE id = ${website.id}::uuid)`.execute(db),
      (p) => (p.space as { name: string }).name === 'Space renamed'],
    ['a pin', () => sql`INSERT INTO project_pins (project_id, person_id) VALUES (${website.id}::uuid, ${ada}::uuid) ON CONFLICT DO NOTHING`.execute(db),
      (p) => p.is_pinned === true]
  ]
  for (const [what, change, seen] of changes) {
    await change()
    t.ok(seen(shown(await page(what))), `${what}: seen`)
  }
  t.not(JSON.stringify(shown(await page('again'))), JSON.stringify(shown(before)), 'the project changed')
})

t.test('a project the clock makes outdated is its new bytes, though no row changed', async (t) => {
  const api = client(app, alice)
  // Overdue by 3 days in a second: not outdated yet, then outdated with the same row.
  await sql`UPDATE projects SET state = 'active', next_check_in_scheduled_at = now() - interval '3 days' + interval '1 second' WHERE id = ${website.id}::uuid`.execute(db)
  const outdated = async () => ((await api.list({ include_archived: 'true' })).json().projects as Array<{ id: string, is_outdated: boolean }>)
    .find((p) => decodeId(p.id) === website.id)!.is_outdated
  t.equal(await outdated(), false, 'not yet')
  t.equal(await outdated(), false, 'not yet, from what is kept')
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const mark = sent.length
  t.equal(await outdated(), true, 'outdated, though the row is the one the app holds')
  t.ok(knownSince(mark).length > 0, 'the app told the database what it holds')
  const { kept, written } = await both(alice, (api) => api.list({ include_archived: 'true' }))
  t.equal(kept.body, written.body, 'the bytes of the app that keeps nothing')
})

t.test('with include_markdown the answer is built as before, under its own tag', async (t) => {
  const get = (server: typeof app) => server.inject({
    method: 'GET', url: '/api/external/v1/projects/get', query: { id: websiteId, include_markdown: 'true' }, headers: { authorization: `Bearer ${erin}` }
  })
  const plainRead = await client(app, erin).get(websiteId)
  const written = await get(plain)
  const kept = await get(app)
  sameAnswer(t, kept, written, 'Markdown')
  t.equal((await get(app)).body, written.body, 'again')
  t.type(kept.json().markdown, 'string')
  t.equal(kept.headers.etag, String(plainRead.headers.etag).replace(/"$/, '.md"'))
})

/** A raw request over loopback: the bytes as sent, not decompressed. */
async function raw (port: number, method: 'GET' | 'HEAD', headers: Record<string, string>): Promise<{ status: number, headers: Record<string, string | string[] | undefined>, body: Buffer }> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: '/api/external/v1/projects/list', headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('a page sent in parts over a socket: its length, the same bytes, and HEAD with the length and no body; compressed too', async (t) => {
  const { app: server } = await build(t, { db })
  await server.listen({ port: 0, host: '127.0.0.1' })
  const address = server.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const injected = await client(app, alice).list()
  for (const [coding, acceptEncoding] of [['as it is', 'identity'], ['gzip', 'gzip, deflate, br']] as const) {
    const headers = { authorization: `Bearer ${alice}`, 'accept-encoding': acceptEncoding }
    let length = ''
    for (const round of ['first', 'kept']) {
      const res = await raw(address.port, 'GET', headers)
      t.equal(res.status, 200)
      const body = coding === 'gzip' ? gunzipSync(res.body) : res.body
      t.equal(res.headers['content-encoding'], coding === 'gzip' ? 'gzip' : undefined, `${coding}, ${round}: its coding`)
      t.equal(body.toString(), injected.body, `${coding}, ${round}: the bytes of the answer`)
      t.equal(res.headers['content-length'], String(res.body.length), `${coding}, ${round}: its length`)
      t.equal(res.headers['transfer-encoding'], undefined, `${coding}, ${round}: not chunked`)
      length = String(res.headers['content-length'])
    }
    const head = await raw(address.port, 'HEAD', headers)
    t.equal(head.status, 200)
    t.equal(head.headers['content-encoding'], coding === 'gzip' ? 'gzip' : undefined, `${coding}, HEAD: its coding`)
    t.equal(head.headers['content-length'], length, `${coding}, HEAD: the length`)
    t.equal(head.body.length, 0, `${coding}, HEAD: no body`)
  }
})

t.test('a page sent gzip-compressed: its kept projects compressed once, each reader\'s fields written for them', async (t) => {
  // A page no request has kept yet: a project of it renamed.
  t.equal((await client(app, erin).updateName({ project_id: websiteId, name: 'Compressed once' })).statusCode, 200)
  const first = await listGzip(app, alice)
  const again = await listGzip(app, alice)
  let sentAgain: LightMyRequestResponse | undefined
  t.same(await compressions(async () => { sentAgain = await listGzip(app, alice) }), [], 'sent again: nothing compressed')
  t.ok(sentAgain!.rawPayload.equals(again.rawPayload), 'the same compressed bytes')
  const identity = (await client(app, alice).list()).body
  for (const res of [first, again]) t.equal(gunzipSync(res.rawPayload).toString(), identity, 'the page\'s bytes')
  t.ok(again.rawPayload.length < Buffer.byteLength(identity) / 2, `compressed: ${again.rawPayload.length} bytes of ${Buffer.byteLength(identity)}`)
  // Another reader of the same projects: the kept pieces, with their own fields.
  const other = await listGzip(app, erin)
  t.equal(gunzipSync(other.rawPayload).toString(), (await client(app, erin).list()).body, 'another reader: their own page')
  // Refused or not asked for: as it is, and still varying with Accept-Encoding.
  for (const acceptEncoding of ['gzip;q=0, br', 'identity', 'br', 'gzip;q=0.5']) {
    const res = await listGzip(app, alice, {}, acceptEncoding)
    t.equal(res.headers['content-encoding'], undefined, `${acceptEncoding}: not compressed`)
    t.equal(res.headers.vary, 'Accept-Encoding')
    t.equal(res.body, identity, `${acceptEncoding}: the page's bytes`)
  }
})

t.test('a project too large to keep is compressed for each page at the fast level, never as a kept piece', async (t) => {
  // ANSWER_CACHE_MB=1 keeps answers of at most 64 KiB; a 100 KB description makes the project larger.
  const { app: small } = await build(t, { db, env: { ANSWER_CACHE_MB: '1' } })
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'text', text: 'x'.repeat(100_000) }] })
  t.equal((await client(small, erin).updateDescription({ project_id: websiteId, description })).statusCode, 200)
  const identity = (await client(small, alice).list()).body
  for (const round of ['first', 'again']) {
    let res: LightMyRequestResponse | undefined
    const levels = await compressions(async () => { res = await listGzip(small, alice) })
    t.equal(gunzipSync(res!.rawPayload).toString(), identity, `${round}: the page's bytes`)
    if (round === 'again') t.notOk(levels.includes(6), `${round}: nothing compressed as a kept piece (levels ${JSON.stringify(levels)})`)
    t.ok(levels.includes(1), `${round}: the large project compressed at the fast level`)
  }
})

t.test('a project (projects/get, a change\'s answer) is sent as it is, whatever Accept-Encoding says', async (t) => {
  const headers = { authorization: `Bearer ${erin}`, 'accept-encoding': 'gzip' }
  const read = await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: websiteId }, headers })
  const readAsItIs = (await client(app, erin).get(websiteId)).body
  const changed = await app.inject({ method: 'POST', url: '/api/external/v1/projects/update_name', headers, payload: { project_id: websiteId, name: 'Sent as it is' } })
  const expected = { 'projects/get': readAsItIs, update_name: await reference('erin@acme.test', websiteId) }
  for (const [what, res] of [['projects/get', read], ['update_name', changed]] as const) {
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-encoding'], undefined, `${what}: not compressed`)
    t.equal(res.headers.vary, undefined, `${what}: and not varying with Accept-Encoding`)
    t.equal(res.body, expected[what], `${what}: the project's bytes`)
  }
})
