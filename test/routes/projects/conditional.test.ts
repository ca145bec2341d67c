// Conditional requests on a project (issue 14): the ETag of every answer that
// carries one project, If-None-Match on projects/get (304), If-Match on the two
// mutations (412 precondition_failed), strong and weak tags, `*`, malformed
// headers, the order of checks, and what a tag follows: every change of the
// person's answer (their own edit, someone else's, a notification, a subscription,
// their access, a person's name, the clock) and nothing else. The race of many
// saves with one tag is test/routes/projects/conditional-race.test.ts.
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import type { Test } from 'tap'
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, notifyOf, projectActivities, tokenFor, waitFor } from '../../helper.js'

const BASE = '/api/external/v1/projects'
const TAG = /^"[A-Za-z0-9_-]{43}"$/

const { app, db } = await build(t)

// alice edits (space member, champion), carol edits (contributor at 70), bob views
// (company level 40), dave is of another company. Alice and carol are subscribed.
const company = await createCompany(db)
const alice = await createPerson(db, company.id, { fullName: 'Alice' })
const bob = await createPerson(db, company.id, { fullName: 'Bob' })
const carol = await createPerson(db, company.id, { fullName: 'Carol' })
const dave = await createPerson(db, (await createCompany(db)).id, { fullName: 'Dave' })
const space = await createSpace(db, company.id, [alice.id])

async function sharedProject (name: string) {
  const p = await createProject(db, space, { name, access: { company: 40, space: 70 } })
  await addContributor(db, p.id, alice.id, 'champion')
  await addContributor(db, p.id, carol.id, 'contributor', 70)
  const list = await db.insertInto('subscription_lists').values({ project_id: p.id }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('subscriptions').values([alice, carol].map((person) => ({ subscription_list_id: list.id, person_id: person.id, type: 'joined' as const }))).execute()
  return p
}

const secret = await createProject(db, space, { name: 'Secret', access: { company: 0, space: 0 } })
const archived = await createProject(db, space, { name: 'Archived', access: { company: 40, space: 70 }, archived: true })

const token = {
  alice: (await tokenFor(db, alice.email)).token,
  aliceRead: (await tokenFor(db, alice.email, { readOnly: true })).token,
  bob: (await tokenFor(db, bob.email)).token,
  carol: (await tokenFor(db, carol.email)).token,
  dave: (await tokenFor(db, dave.email)).token
}

type Headers = Record<string, string>

function get (who: string, id: string, headers: Headers = {}, query: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url: `${BASE}/get`, query: { id, ...query }, headers: { authorization: `Bearer ${who}`, ...headers } })
}

function save (who: string, field: 'name' | 'description', id: string, value: unknown, headers: Headers = {}): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: `${BASE}/${field === 'name' ? 'update_name' : 'update_description'}`,
    headers: { authorization: `Bearer ${who}`, ...headers },
    payload: { project_id: id, [field]: value }
  })
}

const tagOf = async (who: string, id: string) => {
  const res = await get(who, id)
  if (res.statusCode !== 200) throw new Error(`get answered ${res.statusCode}`)
  return res.headers.etag as string
}

/** Everything a write could touch: the project rows, activities, notifications, subscriptions. */
async function state (): Promise<string> {
  const { rows } = await sql<{ s: string }>`SELECT concat_ws('|',
    (SELECT md5(string_agg(to_jsonb(p)::text, ',' ORDER BY p.id)) FROM projects p),
    (SELECT count(*) FROM activities), (SELECT count(*) FROM notifications),
    (SELECT md5(string_agg(to_jsonb(s)::text, ',' ORDER BY s.id)) FROM subscriptions s),
    (SELECT count(*) FROM subscription_lists)) AS s`.execute(db)
  return rows[0]!.s
}

function expect412 (t: Test, res: LightMyRequestResponse, current: string, what: string) {
  t.equal(res.statusCode, 412, `${what}: 412`)
  t.same(res.json(), {
    statusCode: 412,
    error: 'Precondition Failed',
    code: 'precondition_failed',
    message: 'the project has changed since the version If-Match names: read it again (its current tag is in this answer\'s ETag)'
  }, `${what}: the envelope`)
  t.equal(res.headers.etag, current, `${what}: the current tag`)
}

const mention = (person: { id: string }, text = '') => JSON.stringify({
  type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { id: shortId(person.id) } }, { type: 'text', text: ` ${text}` }] }]
})

t.test('1. every answer that carries a project has a strong ETag; the same answer, the same tag', async (t) => {
  const p = await sharedProject('Tagged')
  const reads: LightMyRequestResponse[] = []
  const read = async (who: string, query: Record<string, string> = {}) => {
    const res = await get(who, p.publicId, {}, query)
    t.equal(res.statusCode, 200)
    t.match(res.headers.etag, query.include_markdown === 'true' ? /^"[A-Za-z0-9_-]{43}\.md"$/ : TAG)
    if (query.include_markdown !== 'true') reads.push(res)
    return res
  }

  const first = await read(token.alice)
  const second = await read(token.alice)
  t.equal(second.headers.etag, first.headers.etag, 'two reads of one state: one tag')
  t.equal((await read(token.aliceRead)).headers.etag, first.headers.etag, 'a read-only token of the same person: the same answer, the same tag')
  const flagged = await read(token.alice, { include_milestones: 'true', include_contributors: 'false' })
  t.equal(flagged.body, first.body, 'Operately\'s flags change no byte')
  t.equal(flagged.headers.etag, first.headers.etag, 'nor the tag')
  const markdown = await read(token.alice, { include_markdown: 'true' })
  t.equal(markdown.headers.etag, `${(first.headers.etag as string).slice(0, -1)}.md"`, 'the Markdown answer: the project\'s tag with .md')

  const carolRead = await read(token.carol)
  t.not(carolRead.body, first.body, 'carol reads other bytes (her role, her subscription…)')
  t.not(carolRead.headers.etag, first.headers.etag, 'and another tag')
  await read(token.bob)

  // Each mutation answers the tag a read then gives, the description's with the
  // subscription its mention made; a no-op answers the tag it leaves.
  const renamed = await save(token.alice, 'name', p.publicId, 'Tagged, renamed')
  t.equal(renamed.statusCode, 200)
  t.match(renamed.headers.etag, TAG)
  const afterRename = await read(token.alice)
  t.equal(renamed.headers.etag, afterRename.headers.etag, 'update_name answers the tag get gives afterwards')
  t.equal(renamed.body, afterRename.body)
  t.not(renamed.headers.etag, first.headers.etag)

  const described = await save(token.alice, 'description', p.publicId, mention(bob, 'please review'))
  t.equal(described.statusCode, 200)
  t.equal(described.json().project.subscription_list.subscriptions.length, 3, 'bob is subscribed by the mention')
  const afterDescribe = await read(token.alice)
  t.equal(described.headers.etag, afterDescribe.headers.etag, 'update_description answers the tag get gives afterwards')

  const again = await save(token.alice, 'description', p.publicId, mention(bob, 'please review'))
  t.equal(again.headers.etag, afterDescribe.headers.etag, 'the same value again: nothing changes, nor does the tag')
  await read(token.carol)
  await read(token.bob)

  // Over every read above: equal bytes, equal tags; other bytes, other tags.
  for (const [i, a] of reads.entries()) {
    for (const b of reads.slice(i + 1)) {
      if (a.body === b.body) t.equal(a.headers.etag, b.headers.etag, 'equal answers, equal tags')
      else t.not(a.headers.etag, b.headers.etag, 'different answers, different tags')
    }
  }
  t.ok(reads.length >= 9, `${reads.length} reads compared pairwise`)
})

t.test('1. the tag follows every change of the person\'s answer, and nothing else', async (t) => {
  const p = await sharedProject('Followed')
  const other = await sharedProject('Elsewhere')
  let tag = await tagOf(token.alice, p.publicId)
  let body = (await get(token.alice, p.publicId)).body

  const changes: Array<[string, () => Promise<unknown>]> = [
    ['another person renames it', () => save(token.carol, 'name', p.publicId, 'Followed by carol')],
    ['another person\'s description change notifies alice', () => save(token.carol, 'description', p.publicId, '{"type":"doc","content":[]}')],
    ['alice reads her notifications', () => app.inject({ method: 'POST', url: '/api/external/v1/notifications/mark_all_as_read', headers: { authorization: `Bearer ${token.alice}` }, payload: {} })],
    ['a mention subscribes bob', () => save(token.carol, 'description', p.publicId, mention(bob))],
    ['bob cancels his subscription', () => db.updateTable('subscriptions').set({ canceled: true }).where('person_id', '=', bob.id).execute()],
    ['a contributor is renamed', () => db.updateTable('people').set({ full_name: 'Carol Martinez' }).where('id', '=', carol.id).execute()],
    ['a milestone is added', () => db.insertInto('project_milestones').values({ project_id: p.id, title: 'Launch' }).execute()],
    ['alice pins it', () => db.insertInto('project_pins').values({ person_id: alice.id, project_id: p.id }).execute()]
  ]
  for (const [what, change] of changes) {
    await change()
    const res = await get(token.alice, p.publicId)
    t.not(res.body, body, `${what}: the answer changed`)
    t.not(res.headers.etag, tag, `${what}: so did the tag`)
    tag = res.headers.etag as string
    body = res.body
  }

  const unrelated: Array<[string, () => Promise<unknown>]> = [
    ['another project is renamed', () => save(token.alice, 'name', other.publicId, 'Elsewhere, renamed')],
    ['bob is notified of another project', () => notifyOf(db, [{ person_id: bob.id, project_id: other.id, action: 'project_renamed' }])],
    ['carol is notified of this one', () => notifyOf(db, [{ person_id: carol.id, project_id: p.id, action: 'project_renamed' }])],
    ['an activity is recorded', () => db.insertInto('activities').values({ company_id: company.id, project_id: p.id, author_id: carol.id, action: 'project_renamed', content: JSON.stringify({ note: 1 }) }).execute()]
  ]
  for (const [what, change] of unrelated) {
    await change()
    const res = await get(token.alice, p.publicId)
    t.equal(res.body, body, `${what}: alice's answer is the same`)
    t.equal(res.headers.etag, tag, `${what}: so is her tag`)
  }

  // Bob's access alone: he joins the space and may now edit (his permissions, nothing else).
  const bobBefore = await get(token.bob, p.publicId)
  await db.insertInto('space_members').values({ space_id: space.id, person_id: bob.id }).execute()
  const bobAfter = await get(token.bob, p.publicId)
  t.same(bobAfter.json().project.permissions, { can_view: true, can_comment: true, can_edit: true, has_full_access: false })
  t.same({ ...bobAfter.json().project, permissions: null }, { ...bobBefore.json().project, permissions: null }, 'only his permissions changed')
  t.not(bobAfter.headers.etag, bobBefore.headers.etag, 'and his tag with them')
  await db.deleteFrom('space_members').where('person_id', '=', bob.id).execute()
  t.equal((await get(token.bob, p.publicId)).headers.etag, bobBefore.headers.etag, 'back as it was: the tag it was')

  // The clock alone: a check-in falls overdue by more than 3 days a second from now.
  await db.updateTable('projects').set({ next_check_in_scheduled_at: sql`now() - interval '3 days' + interval '1 second'` }).where('id', '=', p.id).execute()
  const before = await get(token.alice, p.publicId)
  t.equal(before.json().project.is_outdated, false)
  t.ok(await waitFor(async () => (await get(token.alice, p.publicId)).json().project.is_outdated === true, 10_000), 'the project falls outdated')
  const after = await get(token.alice, p.publicId)
  t.equal(after.json().project.status, 'outdated')
  t.not(after.headers.etag, before.headers.etag, 'the clock changed the answer, and the tag, with no row written')
})

t.test('2. If-None-Match on get: 304 with the ETag and no body while the project is the same', async (t) => {
  const p = await sharedProject('Cached')
  const first = await get(token.alice, p.publicId)
  const tag = first.headers.etag as string
  const opaque = tag.slice(1, -1)

  for (const [what, header] of [
    ['its tag', tag],
    ['its tag, weak (If-None-Match compares weakly)', `W/${tag}`],
    ['*', '*'],
    ['a list holding it', `"other", ${tag} , W/"x"`],
    ['a list with empty elements', ` , ${tag},,`]
  ] as const) {
    const res = await get(token.alice, p.publicId, { 'if-none-match': header })
    t.equal(res.statusCode, 304, `${what}: 304`)
    t.equal(res.body, '', `${what}: no body`)
    t.equal(res.headers.etag, tag, `${what}: the ETag`)
    t.equal(res.headers['content-type'], undefined, `${what}: no Content-Type`)
    t.equal(res.headers['content-length'], undefined, `${what}: no Content-Length`)
    t.equal(res.headers['cache-control'], 'no-store', `${what}: the usual headers`)
    t.match(res.headers['x-request-id'], /.+/)
  }
  const head = await app.inject({ method: 'HEAD', url: `${BASE}/get`, query: { id: p.publicId }, headers: { authorization: `Bearer ${token.alice}`, 'if-none-match': tag } })
  t.equal(head.statusCode, 304, 'HEAD too')

  for (const [what, header] of [
    ['another tag', '"nope"'],
    ['another person\'s tag', await tagOf(token.carol, p.publicId)],
    ['a tag one character longer', `"${opaque}x"`]
  ] as const) {
    const res = await get(token.alice, p.publicId, { 'if-none-match': header })
    t.equal(res.statusCode, 200, `${what}: 200`)
    t.equal(res.body, first.body, `${what}: the whole project`)
    t.equal(res.headers.etag, tag)
  }

  // The Markdown answer is another representation: the plain tag does not match it.
  const markdown = await get(token.alice, p.publicId, { 'if-none-match': tag }, { include_markdown: 'true' })
  t.equal(markdown.statusCode, 200, 'the plain tag does not stand for the Markdown answer')
  t.equal(markdown.headers.etag, `"${opaque}.md"`)
  const markdown304 = await get(token.alice, p.publicId, { 'if-none-match': markdown.headers.etag as string }, { include_markdown: 'true' })
  t.equal(markdown304.statusCode, 304, 'its own tag does')
  t.equal((await get(token.alice, p.publicId, { 'if-none-match': markdown.headers.etag as string })).statusCode, 200, 'and not the plain answer')

  // After a change, by anyone: 200 with the new tag.
  await save(token.carol, 'name', p.publicId, 'Cached, renamed by carol')
  const changed = await get(token.alice, p.publicId, { 'if-none-match': tag })
  t.equal(changed.statusCode, 200, 'a change by someone else: 200')
  t.equal(changed.json().project.name, 'Cached, renamed by carol')
  t.not(changed.headers.etag, tag)
  t.equal((await get(token.alice, p.publicId, { 'if-none-match': changed.headers.etag as string })).statusCode, 304)

  // After authentication and visibility: a project one cannot see is the 404 of one that does not exist.
  const unknown = await get(token.alice, shortId('00000000-0000-4000-8000-000000000000'), { 'if-none-match': '*' })
  for (const [what, who, id] of [['a secret project', token.alice, secret.publicId], ['another company\'s reader', token.dave, p.publicId]] as const) {
    const res = await get(who, id, { 'if-none-match': '*' })
    t.equal(res.statusCode, 404, `${what} with *: 404`)
    t.equal(res.body, unknown.body, `${what}: the 404 of a project that does not exist`)
    t.equal(res.headers.etag, undefined, `${what}: no tag`)
  }
  t.equal((await get(token.alice, archived.publicId, { 'if-none-match': '*' })).statusCode, 304, 'an archived project one can see: 304')
  const anonymous = await app.inject({ method: 'GET', url: `${BASE}/get`, query: { id: p.publicId }, headers: { 'if-none-match': '*' } })
  t.equal(anonymous.statusCode, 401, 'no token: 401')
  t.equal(anonymous.headers.etag, undefined)

  // Not `*` nor a list of entity tags: 400, before the project is looked up.
  // A list holds at least one tag: empty, or commas alone, is no list either.
  for (const header of ['nope', `${opaque}`, '"unterminated', 'W/nope', '*, "x"', '"a" "b"', 'w/"lowercase-weak"', '"a"b', '', ' , ', ',']) {
    for (const id of [p.publicId, secret.publicId]) {
      const res = await get(token.alice, id, { 'if-none-match': header })
      t.equal(res.statusCode, 400, `${JSON.stringify(header)}: 400`)
      t.same(res.json(), { statusCode: 400, error: 'Bad Request', code: 'invalid_input', message: 'If-None-Match must be * or a list of entity tags ("…" or W/"…")' })
    }
  }
})

t.test('3. If-Match: a read\'s tag saves once; then 412 with the current tag and nothing written', async (t) => {
  const p = await sharedProject('Edited')
  for (const field of ['name', 'description'] as const) {
    const value = (n: number) => field === 'name' ? `Edited ${n}` : JSON.stringify({ type: 'doc', n })
    const tag = await tagOf(token.alice, p.publicId)
    const saved = await save(token.alice, field, p.publicId, value(1), { 'if-match': tag })
    t.equal(saved.statusCode, 200, `${field}: the read's tag saves`)
    t.equal(saved.json().project[field], value(1))
    const current = saved.headers.etag as string
    t.not(current, tag)

    const before = await state()
    const again = await save(token.alice, field, p.publicId, value(2), { 'if-match': tag })
    expect412(t, again, current, `${field}: the same tag again`)
    t.equal(await state(), before, `${field}: nothing written, no activity, notification or subscription`)
    t.equal(current, await tagOf(token.alice, p.publicId), `${field}: the 412's tag is the one a read gives`)

    const retried = await save(token.alice, field, p.publicId, value(2), { 'if-match': current })
    t.equal(retried.statusCode, 200, `${field}: saving again with the current tag works`)
  }
  const activities = await projectActivities(db, p.id)
  t.equal(activities.length, 4, 'one activity per successful save')
})

t.test('3. a conditional change answers what get reads afterwards, byte for byte, its new subscription included', async (t) => {
  // The tag's aggregate of the row before the change lends its children to the
  // answer's: what the change alters must still be the answer's own.
  const p = await sharedProject('Answered')
  await addContributor(db, p.id, bob.id, 'contributor', 40)
  const same = async (res: LightMyRequestResponse, what: string) => {
    t.equal(res.statusCode, 200, `${what}: ${res.body.slice(0, 200)}`)
    const read = await get(token.alice, p.publicId)
    t.equal(res.body, read.body, `${what}: the answer is the read's`)
    t.equal(res.headers.etag, read.headers.etag, `${what}: and so is its tag`)
    return res.json().project
  }
  await same(await save(token.alice, 'name', p.publicId, 'Answered, renamed', { 'if-match': await tagOf(token.alice, p.publicId) }), 'a rename')
  type Subscriber = { is_subscribed: boolean, person: { full_name: string } }
  const bobOf = (project: { potential_subscribers: Subscriber[] }) => project.potential_subscribers.find((s) => s.person.full_name === 'Bob')
  t.equal(bobOf((await get(token.alice, p.publicId)).json().project)?.is_subscribed, false, 'bob contributes, unsubscribed')
  const described = await same(await save(token.alice, 'description', p.publicId, mention(bob, 'over to you'), { 'if-match': await tagOf(token.alice, p.publicId) }),
    'a description that mentions bob')
  t.equal(bobOf(described)?.is_subscribed, true, 'bob is subscribed by it, as a contributor too')
  t.equal(described.subscription_list.subscriptions.length, 3, 'and on the list')
  await same(await save(token.alice, 'name', p.publicId, 'Answered again', { 'if-match': await tagOf(token.alice, p.publicId) }), 'a rename after it')
})

t.test('3. a stale tag after another person\'s edit fails; a description that fails notifies and subscribes nobody', async (t) => {
  const p = await sharedProject('Two editors')
  const aliceTag = await tagOf(token.alice, p.publicId)
  const carolTag = await tagOf(token.carol, p.publicId)

  const carolSaves = await save(token.carol, 'description', p.publicId, '{"type":"doc","content":[{"type":"text","text":"carol\'s"}]}', { 'if-match': carolTag })
  t.equal(carolSaves.statusCode, 200, 'carol saves first')

  const before = await state()
  const aliceSaves = await save(token.alice, 'description', p.publicId, mention(bob, 'alice\'s'), { 'if-match': aliceTag })
  expect412(t, aliceSaves, await tagOf(token.alice, p.publicId), 'alice saves with her stale tag')
  t.equal(await state(), before, 'bob is not subscribed, nobody is notified, nothing is recorded')
  const project = (await get(token.alice, p.publicId)).json().project
  t.equal(project.description, '{"type":"doc","content":[{"type":"text","text":"carol\'s"}]}', 'carol\'s edit stands')
  t.equal(project.notifications.length, 1, 'alice has carol\'s notification, which she has not read')

  t.equal((await save(token.alice, 'name', p.publicId, 'Mine', { 'if-match': carolTag })).statusCode, 412, 'nor does carol\'s old tag work for alice')
  t.equal((await save(token.alice, 'name', p.publicId, 'Mine', { 'if-match': await tagOf(token.carol, p.publicId) })).statusCode, 412,
    'a tag is the project as one person reads it: carol\'s current one is not alice\'s')
})

t.test('3. *, weak tags, lists and the Markdown tag', async (t) => {
  const p = await sharedProject('Matching')
  const before = await state()
  let tag = await tagOf(token.alice, p.publicId)
  const opaque = () => tag.slice(1, -1)

  const weak = await save(token.alice, 'name', p.publicId, 'Weak', { 'if-match': `W/${tag}` })
  expect412(t, weak, tag, 'the current tag, weak: strong comparison never matches it')
  const weakOnly = await save(token.alice, 'name', p.publicId, 'Weak', { 'if-match': `W/${tag}, W/"other"` })
  expect412(t, weakOnly, tag, 'a list of weak tags')
  t.equal(await state(), before, 'none wrote anything')

  const cases: Array<[string, () => string, string]> = [
    ['a list holding the current tag', () => `"old", W/${tag}, ${tag}`, 'Listed'],
    ['the Markdown answer\'s tag', () => `"${opaque()}.md"`, 'From Markdown'],
    ['*', () => '*', 'Any version'],
    [' * with spaces', () => ' * ', 'Any version again']
  ]
  for (const [what, header, name] of cases) {
    const res = await save(token.alice, 'name', p.publicId, name, { 'if-match': header() })
    t.equal(res.statusCode, 200, `${what}: 200`)
    t.equal(res.json().project.name, name)
    tag = res.headers.etag as string
  }
  const markdownTag = (await get(token.alice, p.publicId, {}, { include_markdown: 'true' })).headers.etag as string
  t.equal((await save(token.alice, 'description', p.publicId, '"from markdown"', { 'if-match': markdownTag })).statusCode, 200, 'a tag read with include_markdown=true saves')

  // The same value with a matching tag: 200, nothing recorded; with a stale one: 412.
  const now = await tagOf(token.alice, p.publicId)
  const count = (await projectActivities(db, p.id)).length
  const same = await save(token.alice, 'description', p.publicId, '"from markdown"', { 'if-match': now })
  t.equal(same.statusCode, 200)
  t.equal(same.headers.etag, now, 'a no-op keeps the tag')
  t.equal((await save(token.alice, 'description', p.publicId, '"from markdown"', { 'if-match': '"stale"' })).statusCode, 412, 'a no-op with a stale tag is a 412 too')
  t.equal((await projectActivities(db, p.id)).length, count)

  // An empty header, or commas alone, names no tag: no list (RFC 9110 §13.1.1: 1#entity-tag).
  for (const header of ['nope', '"unterminated', '*, "x"', 'W/ "spaced"', '"a";"b"', 'W/W/"x"', '', ',', ' , ']) {
    const res = await save(token.alice, 'name', p.publicId, 'Malformed', { 'if-match': header })
    t.equal(res.statusCode, 400, `${JSON.stringify(header)}: 400`)
    t.same(res.json(), { statusCode: 400, error: 'Bad Request', code: 'invalid_input', message: 'If-Match must be * or a list of entity tags ("…" or W/"…")' })
  }
  // A repeated header is one list (RFC 9110 §5.3): Node joins them with a comma.
  const twice: Record<string, string | string[]> = { authorization: `Bearer ${token.alice}`, 'if-match': ['"old"', await tagOf(token.alice, p.publicId)] }
  const raw = await app.inject({ method: 'POST', url: `${BASE}/update_name`, payload: { project_id: p.publicId, name: 'Two headers' }, headers: twice })
  t.equal(raw.statusCode, 200, 'two If-Match headers, one of them current: 200')
})

t.test('3. order of checks: authentication, the body and the permission come before 412', async (t) => {
  const p = await sharedProject('Ordered')
  const stale = '"stale"'
  const before = await state()
  const cases: Array<[string, () => Promise<LightMyRequestResponse>, number, string]> = [
    ['no token', () => app.inject({ method: 'POST', url: `${BASE}/update_name`, headers: { 'if-match': stale }, payload: { project_id: p.publicId, name: 'x' } }), 401, 'unauthenticated'],
    ['a read-only token', () => save(token.aliceRead, 'name', p.publicId, 'x', { 'if-match': stale }), 403, 'read_only_token'],
    ['a blank name', () => save(token.alice, 'name', p.publicId, '  ', { 'if-match': stale }), 400, 'invalid_input'],
    ['a description that is not JSON', () => save(token.alice, 'description', p.publicId, '{', { 'if-match': stale }), 400, 'invalid_input'],
    ['a malformed If-Match on a project one cannot see', () => save(token.dave, 'name', p.publicId, 'x', { 'if-match': 'nope' }), 400, 'invalid_input'],
    ['a viewer (bob), stale tag', () => save(token.bob, 'name', p.publicId, 'x', { 'if-match': stale }), 403, 'forbidden'],
    ['a viewer (bob), *', () => save(token.bob, 'name', p.publicId, 'x', { 'if-match': '*' }), 403, 'forbidden'],
    ['another company (dave), stale tag', () => save(token.dave, 'name', p.publicId, 'x', { 'if-match': stale }), 404, 'not_found'],
    ['a secret project, *', () => save(token.alice, 'description', secret.publicId, '"x"', { 'if-match': '*' }), 404, 'not_found'],
    ['an archived project, stale tag', () => save(token.alice, 'name', archived.publicId, 'x', { 'if-match': stale }), 404, 'not_found'],
    ['an unknown project, *', () => save(token.alice, 'name', shortId('00000000-0000-4000-8000-000000000000'), 'x', { 'if-match': '*' }), 404, 'not_found']
  ]
  for (const [what, request, status, code] of cases) {
    const res = await request()
    t.equal(res.statusCode, status, `${what}: ${status}`)
    t.equal(res.json().code, code, `${what}: ${code}`)
    t.equal(res.headers.etag, undefined, `${what}: no tag`)
  }
  t.equal(await state(), before, 'nothing written')
})

t.test('the other conditional headers are not read where they mean nothing here', async (t) => {
  const p = await sharedProject('Ignored')
  const read = await get(token.alice, p.publicId, { 'if-match': '"stale"', 'if-modified-since': 'Tue, 01 Jan 2030 00:00:00 GMT' })
  t.equal(read.statusCode, 200, 'If-Match on get: ignored')
  const saved = await save(token.alice, 'name', p.publicId, 'Ignored, renamed', { 'if-none-match': '*', 'if-unmodified-since': 'Tue, 01 Jan 2000 00:00:00 GMT' })
  t.equal(saved.statusCode, 200, 'If-None-Match and If-Unmodified-Since on a mutation: ignored')
})
