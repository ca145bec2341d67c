// GET /api/external/v1/projects/list against the access model. The key property: for
// every person, the pages of the list together are exactly the projects projects/get
// answers 200 for, each item the very object get answers, in the order of name then
// id. Then paging (every page size, default and maximum, bounds), the filters,
// cursors that belong to another person, other filters or nobody (400, never a
// leak), one statement per page after the token whatever the projects hold, and
// projects that become invisible between pages.
import { randomUUID } from 'node:crypto'
import { sql, type LogEvent } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import t from '../../tap.js'
import { loadDemo } from '../../../src/demo/load.js'
import { decodeId, shortId, sluggedId } from '../../../src/ids.js'
import { LIST_LIMIT } from '../../../src/projects/schemas.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, expectInvalidInput, tokenFor } from '../../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]
type Api = ReturnType<typeof client>
interface ListedProject { id: string, name: string, [key: string]: unknown }
interface Page { projects: ListedProject[], next_cursor: string | null }

const statements: string[] = []
const { app, db } = await build(t, { log: (event: LogEvent) => { statements.push(event.query.sql) } })
// The cursor key is read once when the app is ready: not inside a request counted below.
await app.ready()

// ---- The cast -------------------------------------------------------------------
// The demo, and a company whose people reach projects by every route the access
// model has, next to another company and one with no projects.

const demo = await loadDemo(db)

const varied = await createCompany(db, 'Varied Access Co')
const other = await createCompany(db, 'Other Access Co')
const lonely = await createCompany(db, 'Lonely Co')

const person = (fullName: string, options: { isAdmin?: boolean, company?: { id: string } } = {}) =>
  createPerson(db, (options.company ?? varied).id, { fullName, isAdmin: options.isAdmin })
const admin = await person('Vic Admin', { isAdmin: true })
const s1 = await person('Sam Space One')
const s2 = await person('Sue Space Two')
const both = await person('Bo Both Spaces')
const plain = await person('Pat Plain')
const champ = await person('Cham Pion')
const rev = await person('Rev Iewer')
const c10 = await person('Con Ten')
const c40 = await person('Con Forty')
const c70 = await person('Con Seventy')
const c100 = await person('Con Hundred')
const cNull = await person('Con Unset')
const guest = await person('Gus Guest')
await db.updateTable('people').set({ type: 'guest' }).where('id', '=', guest.id).execute()
const suspended = await person('Sus Pended')
const suspendedAdmin = await person('Sus Admin', { isAdmin: true })
const outsider = await person('Otto Outsider', { company: other })
const outsiderAdmin = await person('Olga Other Admin', { company: other, isAdmin: true })
const outsiderMember = await person('Omar Other Member', { company: other })
const loner = await person('Lou Loner', { company: lonely })

const S1 = await createSpace(db, varied.id, [s1.id, both.id, suspended.id], 'Space One')
const S2 = await createSpace(db, varied.id, [s2.id, both.id, guest.id], 'Space Two')
const O1 = await createSpace(db, other.id, [outsiderMember.id], 'Other Space')

async function createGoal (space: { id: string }, companyId: string, name: string) {
  return db.insertInto('goals').values({
    company_id: companyId, space_id: space.id, name, status: 'on_track', closed_at: null, archived_at: null,
    timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null,
    timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null
  }).returning(['id', 'name']).executeTakeFirstOrThrow()
}
const G1 = await createGoal(S1, varied.id, 'Goal One')
const G2 = await createGoal(S2, varied.id, 'Goal Two')
const setGoal = (projectId: string, goalId: string) => db.updateTable('projects').set({ goal_id: goalId }).where('id', '=', projectId).execute()

const alpha1 = await createProject(db, S1, { name: 'Alpha', access: { company: 40, space: 70 } })
await setGoal(alpha1.id, G1.id)
await addContributor(db, alpha1.id, champ.id, 'champion')
await addContributor(db, alpha1.id, rev.id, 'reviewer')
await addContributor(db, alpha1.id, cNull.id, 'contributor')
const alpha2 = await createProject(db, S1, { name: 'Alpha', access: { company: 10 } }) // the same name: the id decides
const bravo = await createProject(db, S1, { name: 'Bravo', access: { space: 40 } })
await addContributor(db, bravo.id, c40.id, 'contributor', 40)
const charlie = await createProject(db, S1, { name: 'Charlie' }) // secret
await addContributor(db, charlie.id, champ.id, 'champion')
await addContributor(db, charlie.id, rev.id, 'reviewer')
await addContributor(db, charlie.id, c10.id, 'contributor', 10)
await addContributor(db, charlie.id, c40.id, 'contributor', 40)
await addContributor(db, charlie.id, c70.id, 'contributor', 70)
await addContributor(db, charlie.id, c100.id, 'contributor', 100)
await addContributor(db, charlie.id, cNull.id, 'contributor') // no level: sees nothing through it
await addContributor(db, charlie.id, suspended.id, 'contributor', 70)
const delta = await createProject(db, S1, { name: 'Delta', access: { company: 10 }, archived: true })
await addContributor(db, delta.id, champ.id, 'champion')
const echo = await createProject(db, S1, { name: 'Echo', access: { company: 40 }, state: 'closed' })
await addContributor(db, echo.id, rev.id, 'contributor', 40)
const foxtrot = await createProject(db, S2, { name: 'Foxtrot', access: { space: 10 }, state: 'paused' })
await setGoal(foxtrot.id, G2.id)
const golf = await createProject(db, S2, { name: 'Golf', access: { public: 10 } })
const hotel = await createProject(db, S2, { name: 'hotel', access: { company: 10 } })
await setGoal(hotel.id, G1.id)
const india = await createProject(db, S1, { name: 'Ïndia', access: { company: 70 } })
const juliet = await createProject(db, S1, { name: 'Juliet', archived: true }) // secret and archived
await addContributor(db, juliet.id, champ.id, 'champion')
await addContributor(db, juliet.id, c70.id, 'contributor', 70)
const kilo = await createProject(db, S2, { name: 'Kilo', access: { space: 70 } })
await addContributor(db, kilo.id, rev.id, 'contributor', 10)
await addContributor(db, kilo.id, cNull.id, 'contributor')
await addContributor(db, kilo.id, champ.id, 'reviewer')
const lima = await createProject(db, S2, { name: 'Lima', access: { public: 40 } })
const mike = await createProject(db, S2, { name: 'Mike' }) // secret, nobody bound: admins only
const oscar = await createProject(db, O1, { name: 'Oscar', access: { public: 10 } })
const papa = await createProject(db, O1, { name: 'Papa', access: { company: 70 } })
const quebec = await createProject(db, O1, { name: 'Quebec' })
await addContributor(db, quebec.id, outsider.id, 'contributor', 40)
const romeo = await createProject(db, O1, { name: 'Romeo', access: { public: 10 }, archived: true })

const cast = { admin, s1, s2, both, plain, champ, rev, c10, c40, c70, c100, cNull, guest, suspended, suspendedAdmin, outsider, outsiderAdmin, outsiderMember, loner }
type Who = keyof typeof cast
const api = {} as Record<Who, Api>
for (const [who, p] of Object.entries(cast)) api[who as Who] = client(app, (await tokenFor(db, p.email)).token)
// Suspended after their tokens were issued: the tokens exist and are refused.
await db.updateTable('people').set({ suspended_at: sql`now()` }).where('id', 'in', [suspended.id, suspendedAdmin.id]).execute()

const demoApi = Object.fromEntries(Object.entries(demo.tokens).map(([email, tokens]) => [email, client(app, tokens.write)]))
// Everyone whose token is usable (the suspended two are refused: a test of their own below).
const everyone: Array<[string, Api]> = [
  ...Object.entries(api).filter(([who]) => who !== 'suspended' && who !== 'suspendedAdmin'),
  ...Object.entries(demoApi)
]

// ---- Helpers ---------------------------------------------------------------------

/** Every project in the database, ordered as the contract says the list is: by name, then id. */
async function allProjects () {
  return db.selectFrom('projects').select(['id', 'name', 'space_id', 'goal_id', 'archived_at']).orderBy('name').orderBy('id').execute()
}

/** Every page of a list, following next_cursor; each page checked for shape and size. */
async function walk (t: Tap, caller: Api, query: Record<string, string>, limit?: number): Promise<Page[]> {
  const pages: Page[] = []
  let cursor: string | null = null
  for (let i = 0; i < 1_000; i++) {
    const res = await caller.list({ ...query, ...(limit === undefined ? {} : { limit: String(limit) }), ...(cursor === null ? {} : { cursor }) })
    if (res.statusCode !== 200) {
      t.fail(`page ${i + 1}: ${res.statusCode} ${res.body}`)
      return pages
    }
    const page = res.json<Page>()
    pages.push(page)
    cursor = page.next_cursor
    if (cursor === null) break
  }
  const size = limit ?? LIST_LIMIT.default
  pages.forEach((page, i) => {
    const last = i === pages.length - 1
    t.ok(last ? page.projects.length <= size : page.projects.length === size, `page ${i + 1} of ${pages.length} holds ${page.projects.length} (limit ${size})`)
    if (!last) t.type(page.next_cursor, 'string')
  })
  return pages
}

/** The row ids of the listed projects, in order (an id that does not decode shows as such). */
const ids = (pages: Page[]) => pages.flatMap((page) => page.projects.map((p) => decodeId(p.id) ?? `undecodable ${p.id}`))

/** The projects get answers 200 for, by row id, as get answers them; every other answer is get's 404. */
async function visibleThroughGet (t: Tap, caller: Api) {
  const seen = new Map<string, string>()
  for (const p of await allProjects()) {
    const res = await caller.get(sluggedId(p.id, p.name))
    if (res.statusCode === 200) seen.set(p.id, JSON.stringify(res.json().project))
    else if (res.statusCode !== 404) t.fail(`get ${p.name}: ${res.statusCode}`)
  }
  return seen
}

const namesOf = async (rowIds: Iterable<string>) => {
  const list = [...rowIds]
  if (list.length === 0) return []
  const rows = await db.selectFrom('projects').select('name').where('id', 'in', list).execute()
  return rows.map((r) => r.name).sort()
}

// ---- The key property --------------------------------------------------------------

t.test('for every person, the pages of the list are exactly what get shows them, item for item, by name then id', async (t) => {
  const projects = await allProjects()
  t.equal(projects.length, 21, 'the demo\'s 3 projects and 18 more')
  for (const [who, caller] of everyone) {
    await t.test(who, async (t) => {
      const visible = await visibleThroughGet(t, caller)
      for (const [query, keep] of [
        [{ include_archived: 'true' }, () => true],
        [{}, (p: { archived_at: Date | null }) => p.archived_at === null]
      ] as const) {
        // A page size that makes several pages, and the default one.
        for (const limit of [2, undefined]) {
          const pages = await walk(t, caller, query, limit)
          const listed = pages.flatMap((page) => page.projects)
          const expected = projects.filter((p) => visible.has(p.id) && keep(p)).map((p) => p.id)
          t.strictSame(ids(pages), expected, `${JSON.stringify(query)} limit ${limit}: the same projects, in order`)
          for (const item of listed) {
            t.equal(JSON.stringify(item), visible.get(decodeId(item.id)!), `${item.name}: the object get answers, byte for byte`)
          }
        }
      }
    })
  }
})

t.test('the property is not vacuous: who sees what, written out', async (t) => {
  const company = ['Alpha', 'Alpha', 'Delta', 'Echo', 'hotel', 'Ïndia']
  const pub = ['Golf', 'Lima', 'Oscar', 'Romeo']
  const expected: Partial<Record<Who, string[]>> = {
    plain: [...company, ...pub],
    c10: [...company, ...pub, 'Charlie'],
    cNull: [...company, ...pub],
    s1: [...company, ...pub, 'Bravo'],
    s2: [...company, ...pub, 'Foxtrot', 'Kilo'],
    champ: [...company, ...pub, 'Charlie', 'Juliet', 'Kilo'],
    rev: [...company, ...pub, 'Charlie', 'Kilo'],
    admin: ['Alpha', 'Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo', 'Foxtrot', 'Golf', 'hotel', 'Ïndia', 'Juliet', 'Kilo', 'Lima', 'Mike', 'Oscar', 'Romeo'],
    outsider: [...pub, 'Papa', 'Quebec'],
    outsiderMember: [...pub, 'Papa'],
    loner: pub
  }
  for (const [who, names] of Object.entries(expected) as Array<[Who, string[]]>) {
    const listed = (await walk(t, api[who], { include_archived: 'true' }, 100)).flatMap((page) => page.projects.map((p) => p.name))
    t.strictSame([...listed].sort(), [...names].sort(), who)
  }
  const alice = demoApi['alice@acme.test']!
  t.strictSame((await walk(t, alice, {})).flatMap((page) => page.projects.map((p) => p.name)).sort(),
    ['Golf', 'Internal Tools', 'Lima', 'Oscar', 'Website Redesign'], 'the demo\'s Alice: her two and the public ones')
})

t.test("a suspended person's token is 401 for the list as for get", async (t) => {
  for (const who of ['suspended', 'suspendedAdmin'] as const) {
    const res = await api[who].list()
    t.equal(res.statusCode, 401)
    t.strictSame(res.json(), { statusCode: 401, error: 'Unauthorized', code: 'unauthenticated', message: "token's owner is suspended" })
    t.equal((await api[who].get(charlie.publicId)).statusCode, 401)
  }
})

t.test('the answer: exactly { projects, next_cursor }, not cached; an empty list is [] and null', async (t) => {
  const res = await client(app, (await tokenFor(db, (await createPerson(db, (await createCompany(db)).id)).email, { readOnly: true })).token).list()
  t.equal(res.statusCode, 200, 'a read-only token may list')
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.headers['content-type'], /^application\/json/)
  // Public projects of other companies are visible to anyone, so a person of a new company sees those.
  const body = res.json()
  t.strictSame(Object.keys(body), ['projects', 'next_cursor'])
  t.strictSame(body.projects.map((p: ListedProject) => p.name).sort(), ['Golf', 'Lima', 'Oscar'])
  t.equal(body.next_cursor, null)
  const none = await api.loner.list({ space_id: shortId(S1.id), only_my_projects: 'true' })
  t.strictSame(none.json(), { projects: [], next_cursor: null })
})

// ---- Paging ------------------------------------------------------------------------

t.test('every page size from 1 to n+1 walks the same list: no duplicate, no gap, the last page says null', async (t) => {
  const full = ids(await walk(t, api.admin, { include_archived: 'true' }, 100))
  t.equal(full.length, 16)
  for (let limit = 1; limit <= full.length + 1; limit++) {
    const pages = await walk(t, api.admin, { include_archived: 'true' }, limit)
    t.strictSame(ids(pages), full, `limit ${limit}`)
    t.equal(pages.length, Math.ceil(full.length / limit), `limit ${limit}: no empty page at the end`)
    t.equal(pages.at(-1)!.next_cursor, null)
  }
  // A cursor is about where the last page ended, not its size: a client may change it.
  const first = (await api.admin.list({ include_archived: 'true', limit: '3' })).json<Page>()
  const rest = await walk(t, api.admin, { include_archived: 'true', cursor: first.next_cursor! }, 5)
  t.strictSame([...ids([first]), ...ids(rest)], full, '3, then pages of 5')
})

t.test(`the default page size is ${LIST_LIMIT.default} and the largest ${LIST_LIMIT.max}; over it, 0, negative or not an integer is 400`, async (t) => {
  const company = await createCompany(db, 'Paging Co')
  const pager = await createPerson(db, company.id, { fullName: 'Page Reader' })
  const space = await createSpace(db, company.id, [], 'Pages')
  const n = LIST_LIMIT.max + 15
  // Ten share one name, so the id orders them.
  await db.insertInto('projects').values(Array.from({ length: n }, (_, i) => ({
    company_id: company.id, space_id: space.id, name: i < 10 ? 'Same Name' : `Page ${String(i).padStart(3, '0')}`, company_access: 10 as const
  }))).execute()
  const expected = (await db.selectFrom('projects').select('id').where('company_id', '=', company.id).orderBy('name').orderBy('id').execute()).map((r) => r.id)
  const reader = client(app, (await tokenFor(db, pager.email)).token)
  // Public projects of other companies are the pager's to see too: the walks keep to the space.
  const inSpace = { space_id: shortId(space.id) }

  const firstPage = (await reader.list()).json<Page>()
  t.equal(firstPage.projects.length, LIST_LIMIT.default, 'a client that knows nothing of paging gets the first page')
  t.strictSame(ids([firstPage]), ids(await walk(t, reader, {}, LIST_LIMIT.max)).slice(0, LIST_LIMIT.default), 'of the same list')
  t.type(firstPage.next_cursor, 'string')

  const defaultPages = await walk(t, reader, inSpace)
  t.strictSame(ids(defaultPages), expected)
  t.equal(defaultPages.length, Math.ceil(n / LIST_LIMIT.default))
  t.equal(defaultPages[0]!.projects.length, LIST_LIMIT.default)
  const maxPages = await walk(t, reader, inSpace, LIST_LIMIT.max)
  t.strictSame(maxPages.map((page) => page.projects.length), [LIST_LIMIT.max, n - LIST_LIMIT.max])
  t.strictSame(ids(maxPages), expected)
  for (const limit of [1, 7, 33, LIST_LIMIT.max - 1]) t.strictSame(ids(await walk(t, reader, inSpace, limit)), expected, `limit ${limit}`)
  const message = `limit must be from 1 to ${LIST_LIMIT.max}`
  for (const limit of [String(LIST_LIMIT.max + 1), '0', '000', '999']) {
    const res = await reader.list({ limit })
    expectInvalidInput(t, res, '/limit', message)
    t.strictSame(res.json().details, [{ path: '/limit', message: `must be from 1 to ${LIST_LIMIT.max}` }])
  }
  for (const limit of ['-1', '1.5', '2.0', '1e2', 'abc', '', ' 5', '0x10', '1000', '20 ']) {
    expectInvalidInput(t, await reader.list({ limit }), '/limit')
  }
  t.equal((await reader.list({ limit: '007' })).json().projects.length, 7, 'leading zeros are still a number')
})

// ---- Filters -----------------------------------------------------------------------

/** What get shows each person, asked once a test: the filter tests change nothing. */
const seenIn = new WeakMap<Tap, Map<Who, ReturnType<typeof visibleThroughGet>>>()

/** The projects `who` may see (by get), narrowed by what the database says of each. */
async function expectedFor (t: Tap, who: Who, keep: (p: Awaited<ReturnType<typeof allProjects>>[number]) => boolean | Promise<boolean>) {
  let seen = seenIn.get(t)
  if (seen === undefined) seenIn.set(t, seen = new Map())
  if (!seen.has(who)) seen.set(who, visibleThroughGet(t, api[who]))
  const visible = await seen.get(who)!
  const out: string[] = []
  for (const p of await allProjects()) if (visible.has(p.id) && await keep(p)) out.push(p.id)
  return out
}

async function roleOf (projectId: string, personId: string) {
  const row = await db.selectFrom('project_contributors').select('role').where('project_id', '=', projectId).where('person_id', '=', personId).executeTakeFirst()
  return row?.role ?? null
}

const listIds = async (t: Tap, who: Who, query: Record<string, string>) => ids(await walk(t, api[who], query, 4))

t.test("only_my_projects: as Operately, the projects the person champions or contributes to, not those they review; only visible ones", async (t) => {
  for (const who of ['champ', 'rev', 'c70', 'cNull', 'plain', 'outsider'] as const) {
    const personId = cast[who].id
    const mine = (archived: boolean) => expectedFor(t, who, async (p) => (archived || p.archived_at === null) &&
      ['champion', 'contributor'].includes((await roleOf(p.id, personId)) ?? ''))
    t.strictSame(await listIds(t, who, { only_my_projects: 'true' }), await mine(false), who)
    t.strictSame(await listIds(t, who, { only_my_projects: 'true', include_archived: 'true' }), await mine(true), `${who}, archived too`)
    t.strictSame(await listIds(t, who, { only_my_projects: 'false' }), await listIds(t, who, {}), `${who}: false is no filter`)
  }
  // Written out, so that the comparison above is about something.
  t.strictSame(await namesOf(await listIds(t, 'champ', { only_my_projects: 'true' })), ['Alpha', 'Charlie'], 'champion of Alpha and Charlie; Kilo he reviews; Delta and Juliet are archived')
  t.strictSame(await namesOf(await listIds(t, 'champ', { only_my_projects: 'true', include_archived: 'true' })), ['Alpha', 'Charlie', 'Delta', 'Juliet'])
  t.strictSame(await namesOf(await listIds(t, 'rev', { only_my_projects: 'true' })), ['Echo', 'Kilo'], 'a contributor of Echo and Kilo, the reviewer of Alpha and Charlie')
  t.strictSame(await listIds(t, 'cNull', { only_my_projects: 'true' }), [alpha1.id],
    'Alpha (seen through the company); Charlie and Kilo, bound without a level and not otherwise visible, are left out')
  t.strictSame(await listIds(t, 'outsider', { only_my_projects: 'true' }), [quebec.id])
  t.strictSame(await listIds(t, 'plain', { only_my_projects: 'true' }), [])
})

t.test('only_reviewed_by_me: the projects the person reviews; it wins over only_my_projects', async (t) => {
  t.strictSame(await listIds(t, 'rev', { only_reviewed_by_me: 'true' }), await expectedFor(t, 'rev', async (p) => p.archived_at === null && await roleOf(p.id, rev.id) === 'reviewer'))
  t.strictSame(await namesOf(await listIds(t, 'rev', { only_reviewed_by_me: 'true' })), ['Alpha', 'Charlie'])
  t.strictSame(await namesOf(await listIds(t, 'champ', { only_reviewed_by_me: 'true' })), ['Kilo'])
  t.strictSame(await listIds(t, 'rev', { only_reviewed_by_me: 'true', only_my_projects: 'true' }), await listIds(t, 'rev', { only_reviewed_by_me: 'true' }), 'both: reviewed')
  t.strictSame(await listIds(t, 'rev', { only_reviewed_by_me: 'false', only_my_projects: 'true' }), await listIds(t, 'rev', { only_my_projects: 'true' }))
  t.strictSame(await listIds(t, 'plain', { only_reviewed_by_me: 'true' }), [])
})

t.test('space_id and goal_id: public ids in any accepted form; combined with the other filters', async (t) => {
  for (const who of ['admin', 'plain', 's1', 'champ', 'outsider'] as const) {
    for (const space of [S1, S2, O1]) {
      const expected = await expectedFor(t, who, (p) => p.archived_at === null && p.space_id === space.id)
      for (const form of [shortId(space.id), space.id, space.id.toUpperCase(), `${space.name.toLowerCase().replace(/ /g, '-')}-${shortId(space.id)}`]) {
        t.strictSame(await listIds(t, who, { space_id: form }), expected, `${who}, ${space.name} as ${form}`)
      }
    }
    for (const goal of [G1, G2]) {
      const expected = await expectedFor(t, who, (p) => p.archived_at === null && p.goal_id === goal.id)
      t.strictSame(await listIds(t, who, { goal_id: sluggedId(goal.id, goal.name) }), expected, `${who}, ${goal.name}`)
      t.strictSame(await listIds(t, who, { goal_id: shortId(goal.id) }), expected)
    }
  }
  t.strictSame(await namesOf(await listIds(t, 'admin', { space_id: shortId(S1.id) })), ['Alpha', 'Alpha', 'Bravo', 'Charlie', 'Echo', 'Ïndia'])
  t.strictSame(await namesOf(await listIds(t, 'admin', { space_id: shortId(S1.id), include_archived: 'true' })),
    ['Alpha', 'Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo', 'Juliet', 'Ïndia'])
  t.strictSame(await namesOf(await listIds(t, 'admin', { goal_id: shortId(G1.id) })), ['Alpha', 'hotel'], 'a goal spans spaces')
  t.strictSame(await listIds(t, 'plain', { space_id: shortId(O1.id) }), [oscar.id], "another company's space: only its public projects")
  t.strictSame(await listIds(t, 'champ', { space_id: shortId(S1.id), goal_id: shortId(G1.id), only_my_projects: 'true' }), [alpha1.id])
  t.strictSame(await listIds(t, 'champ', { space_id: shortId(S2.id), only_my_projects: 'true' }), [], 'he only reviews Kilo')
  t.strictSame(await listIds(t, 'admin', { space_id: shortId(S1.id), goal_id: shortId(G2.id) }), [], 'filters are combined with AND')
})

t.test('an unknown but well-formed id is an empty list; an id that stands for nothing is 400', async (t) => {
  for (const field of ['space_id', 'goal_id']) {
    for (const unknown of [shortId(randomUUID()), randomUUID(), `no-such-thing-${shortId(randomUUID())}`, shortId(alpha1.id)]) {
      const res = await api.admin.list({ [field]: unknown })
      t.equal(res.statusCode, 200, `${field}=${unknown}`)
      t.strictSame(res.json(), { projects: [], next_cursor: null })
    }
    for (const bad of ['nope', '123', 'zzzzzzzzzzzzzzzzzzzzzz', '00000000-0000-0000-0000-00000000000g', 'alpha-']) {
      expectInvalidInput(t, await api.admin.list({ [field]: bad }), `/${field}`, `${field} is not an id`)
    }
    expectInvalidInput(t, await api.admin.list({ [field]: '  ' }), `/${field}`, `${field} must not be blank`)
    expectInvalidInput(t, await api.admin.list({ [field]: '' }), `/${field}`, `${field} must not be blank`)
  }
})

t.test('include_archived: archived projects only when true; flags are "true" or "false"', async (t) => {
  const archived = [delta.id, juliet.id, romeo.id]
  const without = await listIds(t, 'admin', {})
  const withArchived = await listIds(t, 'admin', { include_archived: 'true' })
  t.strictSame(await listIds(t, 'admin', { include_archived: 'false' }), without)
  t.notOk(without.some((id) => archived.includes(id)), 'left out by default')
  t.ok(archived.every((id) => withArchived.includes(id)), 'all there with include_archived=true')
  t.strictSame(withArchived.filter((id) => !archived.includes(id)), without, 'and nothing else changes')
  for (const flag of ['include_archived', 'only_my_projects', 'only_reviewed_by_me', 'include_milestones']) {
    for (const value of ['1', 'yes', 'True', '', 'null']) expectInvalidInput(t, await api.admin.list({ [flag]: value }), `/${flag}`)
  }
  // Operately's other flags, as its CLI sends them, change nothing.
  const flagged = await api.admin.list({ include_space: 'true', include_milestones: 'false', include_contributors: 'true', include_retrospective: 'true' })
  t.equal(flagged.body, (await api.admin.list()).body)
  for (const unknown of ['id', 'page', 'per_page', 'order', 'archived', 'space']) {
    expectInvalidInput(t, await api.admin.list({ [unknown]: '1' }), `/${unknown}`, `${unknown} is not allowed`)
  }
  // Flags that are not Operately's are unknown parameters like any other.
  for (const unknown of ['include_evil', 'include_markdown', 'include_permissions']) {
    expectInvalidInput(t, await api.admin.list({ [unknown]: 'true' }), `/${unknown}`, `${unknown} is not allowed`)
  }
})

// ---- Cursors -----------------------------------------------------------------------

const CURSOR_MESSAGE = 'cursor is not a cursor of this list: pass next_cursor as it came, with the same filters'

function expectBadCursor (t: Tap, res: LightMyRequestResponse, what: string) {
  t.equal(res.statusCode, 400, what)
  t.strictSame(res.json(), {
    statusCode: 400, error: 'Bad Request', code: 'invalid_input', message: CURSOR_MESSAGE,
    details: [{ path: '/cursor', message: 'is not a cursor of this list: pass next_cursor as it came, with the same filters' }]
  }, what)
  t.equal(res.headers['cache-control'], 'no-store')
}

t.test("a cursor is the person's and its filters': another person's, other filters, altered or made up is 400", async (t) => {
  const first = (await api.admin.list({ limit: '2' })).json<Page>()
  const cursor = first.next_cursor!
  t.type(cursor, 'string')
  t.equal((await api.admin.list({ limit: '2', cursor })).statusCode, 200, 'its own person and filters')

  // Everyone else, the other company's admin included, and a second token of the same person's.
  for (const who of ['plain', 'c100', 'outsiderAdmin', 'loner'] as const) expectBadCursor(t, await api[who].list({ limit: '2', cursor }), `${who} uses the admin's cursor`)
  const sameAdmin = client(app, (await tokenFor(db, admin.email, { readOnly: true })).token)
  t.equal((await sameAdmin.list({ limit: '2', cursor })).statusCode, 200, "another token of the same person's: the same person")

  const filterSets: Array<Record<string, string>> = [
    { include_archived: 'true' }, { only_my_projects: 'true' }, { only_reviewed_by_me: 'true' },
    { space_id: shortId(S1.id) }, { goal_id: shortId(G1.id) }
  ]
  for (const filters of filterSets) {
    expectBadCursor(t, await api.admin.list({ ...filters, cursor }), `other filters: ${JSON.stringify(filters)}`)
    const scoped = (await api.admin.list({ ...filters, limit: '1' })).json<Page>()
    if (scoped.next_cursor !== null) expectBadCursor(t, await api.admin.list({ cursor: scoped.next_cursor }), `without ${JSON.stringify(filters)}`)
  }
  // The same filters written another way are the same filters.
  const bySpace = (await api.admin.list({ space_id: shortId(S1.id), limit: '1' })).json<Page>()
  t.equal((await api.admin.list({ space_id: S1.id, cursor: bySpace.next_cursor! })).statusCode, 200, 'space_id as a UUID')
  t.equal((await api.admin.list({ include_archived: 'false', cursor })).statusCode, 200, 'include_archived=false is the default')

  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1)
  const [payload, tag] = cursor.split('.') as [string, string]
  for (let at = 0; at < cursor.length; at += 7) {
    if (cursor[at] === '.') continue
    expectBadCursor(t, await api.admin.list({ limit: '2', cursor: flip(cursor, at) }), `character ${at} flipped`)
  }
  // A position of one's choosing, with the tag of another.
  const forged = Buffer.from(JSON.stringify({ name: 'A', id: mike.id })).toString('base64url')
  const garbage = ['', ' ', 'garbage', `${payload}.`, `.${tag}`, payload, `${payload}.${tag}.x`, `${payload}.${tag}=`, `${forged}.${tag}`,
    charlie.publicId, charlie.id, shortId(charlie.id), `${payload}${tag}`, 'A'.repeat(5000), `${cursor} `, encodeURIComponent(cursor) + '%2E']
  for (const bad of garbage) expectBadCursor(t, await api.admin.list({ limit: '2', cursor: bad }), `made up: ${bad.slice(0, 40)}`)
  t.equal((await api.admin.list({ limit: '2', cursor })).statusCode, 200, 'the real one still works')
})

t.test("another person's cursor that would resume just before a project hidden from the caller is refused, not followed", async (t) => {
  // Charlie is secret: c10 sees it, plain does not. c10's cursor ends right before it.
  const pages = await walk(t, api.c10, {}, 1)
  const at = pages.findIndex((page) => page.projects[0]?.name === 'Charlie')
  t.ok(at > 0)
  const cursor = pages[at - 1]!.next_cursor!
  t.equal(decodeId((await api.c10.list({ limit: '1', cursor })).json().projects[0].id), charlie.id, 'c10 gets Charlie next')
  expectBadCursor(t, await api.plain.list({ limit: '1', cursor }), 'plain cannot follow it')
  t.notMatch((await api.plain.list({ limit: '1', cursor })).body, /Charlie/)
})

// ---- Round trips --------------------------------------------------------------------

async function counted (request: () => Promise<LightMyRequestResponse>) {
  statements.length = 0
  const res = await request()
  return { res, sql: [...statements] }
}

t.test('two statements read a page (its ids, then its projects), besides the token\'s, whatever the page size and the size of the projects', async (t) => {
  const company = await createCompany(db, 'Large Projects Co')
  const reader = await createPerson(db, company.id, { fullName: 'Large Reader' })
  const space = await createSpace(db, company.id, [reader.id], 'Large')
  const people = await db.insertInto('people').values(Array.from({ length: 40 }, (_, i) => ({
    company_id: company.id, email: `large-list-${i}-${process.pid}@example.test`, full_name: `Worker ${String(i).padStart(2, '0')}`, title: 'Engineer', avatar_url: null
  }))).returning('id').execute()
  const PROJECTS = 30
  for (let i = 0; i < PROJECTS; i++) {
    const p = await createProject(db, space, { name: `Large ${String(i).padStart(2, '0')}`, description: JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x'.repeat(20_000) }] }] }), access: { space: 70 } })
    await db.insertInto('project_contributors').values(people.map((person, j) => ({
      project_id: p.id, person_id: person.id, role: j === 0 ? 'champion' as const : j === 1 ? 'reviewer' as const : 'contributor' as const, responsibility: 'Builds', access_level: j < 2 ? null : 40 as const
    }))).execute()
    await db.insertInto('project_milestones').values(Array.from({ length: 50 }, (_, k) => ({ project_id: p.id, title: `Milestone ${k}`, due_date: '2027-01-01' }))).execute()
    await db.insertInto('project_check_ins').values(Array.from({ length: 5 }, (_, k) => ({ project_id: p.id, author_id: people[0]!.id, status: 'on_track' as const, description: `{"k":${k}}` }))).execute()
    await db.insertInto('project_key_resources').values(Array.from({ length: 10 }, (_, k) => ({ project_id: p.id, title: `R${k}`, link: `https://example.test/${k}` }))).execute()
  }
  const caller = client(app, (await tokenFor(db, reader.email)).token)
  const inSpace = { space_id: shortId(space.id) }
  const isTokenLookup = (text: string) => /api_tokens/.test(text)
  // The token's lookup (and, once a minute, the record of its use), then the page.
  const pageStatements = (sent: string[]) => sent.filter((text) => !isTokenLookup(text))

  let cursor: string | null = null
  const seen: string[] = []
  for (const limit of [LIST_LIMIT.max, 7]) {
    do {
      const { res, sql: sent } = await counted(() => caller.list({ ...inSpace, limit: String(limit), ...(cursor === null ? {} : { cursor }) }))
      t.equal(res.statusCode, 200)
      const page = res.json<Page>()
      const reads = pageStatements(sent)
      t.equal(reads.length, 2, `limit ${limit}, ${page.projects.length} projects: ${reads.length} statements`)
      t.ok(reads.every((text) => /from "projects"/.test(text)), 'the page\'s ids, then its projects')
      for (const p of page.projects) {
        t.equal((p.milestones as unknown[]).length, 50)
        t.equal((p.contributors as unknown[]).length, 40)
        t.equal((p.key_resources as unknown[]).length, 10)
        seen.push(p.name)
      }
      cursor = page.next_cursor
    } while (cursor !== null)
  }
  t.equal(seen.length, 2 * PROJECTS, 'every project, once per walk')
  const second = (await caller.list({ ...inSpace, limit: '1' })).json<Page>().next_cursor!
  const { res, sql: sent } = await counted(() => caller.list({ ...inSpace, limit: '1', cursor: second }))
  t.equal(res.statusCode, 200)
  t.equal(pageStatements(sent).length, 2, 'a page after a cursor: the same')
  const refused = await counted(() => caller.list({ cursor: 'garbage' }))
  t.equal(refused.res.statusCode, 400)
  t.equal(refused.sql.length, 1, 'a bad cursor costs only the token lookup')
  t.ok(isTokenLookup(refused.sql[0]!) && !/from "projects"/.test(refused.sql[0]!), 'which is all it is')
})

// ---- Changes between pages ------------------------------------------------------------

t.test('a project made invisible between pages never appears on the next page', async (t) => {
  const company = await createCompany(db, 'Shifting Co')
  const reader = await createPerson(db, company.id, { fullName: 'Shifting Reader' })
  const space = await createSpace(db, company.id, [reader.id], 'Shifting')
  const make = (name: string) => createProject(db, space, { name, access: { company: 10 } })
  const [a, b, c, d, e, f, g] = [await make('S-A'), await make('S-B'), await make('S-C'), await make('S-D'), await make('S-E'), await make('S-F'), await make('S-G')]
  const caller = client(app, (await tokenFor(db, reader.email)).token)
  // Public projects of other companies are the reader's too: the pages keep to the space.
  const page = async (cursor?: string) => (await caller.list({ space_id: shortId(space.id), limit: '1', ...(cursor === undefined ? {} : { cursor }) })).json<Page>()
  const only = (p: Page) => p.projects.map((x) => decodeId(x.id))

  const p1 = await page()
  t.strictSame(only(p1), [a.id])
  await db.updateTable('projects').set({ company_access: 0 }).where('id', '=', b.id).execute()
  const p2 = await page(p1.next_cursor!)
  t.strictSame(only(p2), [c.id], 'S-B lost its access: skipped')
  await db.updateTable('projects').set({ archived_at: sql`now()` }).where('id', '=', d.id).execute()
  const p3 = await page(p2.next_cursor!)
  t.strictSame(only(p3), [e.id], 'S-D archived: skipped')
  // The reader leaves the space of a confidential project, and a project moves to a space they are not in.
  await db.updateTable('projects').set({ company_access: 0, space_access: 40 }).where('id', '=', f.id).execute()
  await db.deleteFrom('space_members').where('person_id', '=', reader.id).execute()
  const p4 = await page(p3.next_cursor!)
  t.strictSame(only(p4), [g.id], 'S-F visible only to its space, which the reader left: skipped')
  t.equal(p4.next_cursor, null)

  // The project a cursor ended at may go away: the cursor still resumes after it.
  const q1 = await page()
  t.strictSame(only(q1), [a.id])
  await db.deleteFrom('projects').where('id', '=', a.id).execute()
  const q2 = await page(q1.next_cursor!)
  t.strictSame(only(q2), [c.id])
  // And a suspended reader's cursor is worth nothing: the token is refused first.
  await db.updateTable('people').set({ suspended_at: sql`now()` }).where('id', '=', reader.id).execute()
  const res = await caller.list({ space_id: shortId(space.id), limit: '1', cursor: q2.next_cursor! })
  t.equal(res.statusCode, 401)
})

t.test('a page that ends at a project whose name is as long as a name can be gives a cursor that works', async (t) => {
  const company = await createCompany(db, 'Long Names Co')
  const reader = await createPerson(db, company.id, { fullName: 'Long Reader' })
  const space = await createSpace(db, company.id, [], 'Long')
  const caller = client(app, (await tokenFor(db, reader.email)).token)
  // 255 characters each: four bytes each in UTF-8, two in JSON, six in JSON (a
  // control character, which the API refuses in a name but the table holds).
  const names = ['😀'.repeat(255), '"'.repeat(255), '\\'.repeat(255), '\u0001'.repeat(255), `${'\u001f'.repeat(254)}z`]
  for (const name of names) {
    await createProject(db, space, { name, access: { company: 10 } })
    await createProject(db, space, { name, access: { company: 10 } })
  }
  const expected = (await db.selectFrom('projects').select('id').where('company_id', '=', company.id).orderBy('name').orderBy('id').execute()).map((r) => r.id)
  t.equal(expected.length, names.length * 2)
  t.strictSame(ids(await walk(t, caller, { space_id: shortId(space.id) }, 1)), expected, 'every page followed')
})
