// Answers of reads kept while the database stays as it was (src/http/answer-cache.ts):
// a kept answer is sent again only for the same snapshot and before its instant,
// the least recently read go first when the budget is spent, a repeated read asks
// the database for the token alone, and with keeping on and off (ANSWER_CACHE_MB=0)
// every read answers the same, as the data and the clock's verdicts change between
// reads, whatever the client accepts.
import { gunzipSync } from 'node:zlib'
import fc from 'fast-check'
import { sql } from 'kysely'
import t from '../tap.js'
import type { LightMyRequestResponse } from 'fastify'
import { AnswerCache, type Answer } from '../../src/http/answer-cache.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, notifyOf, tokenFor } from '../helper.js'

t.test('a kept answer serves its snapshot until its instant; the least recently read go first', async (t) => {
  const cache = new AnswerCache(1000)
  let computed = 0
  const compute = (body: string, until = Infinity) => async (): Promise<Answer> => {
    computed++
    return { body, until }
  }
  t.equal((await cache.read('a', { snapshot: '1:1:', at: 100 }, compute('A', 150))).body, 'A')
  t.equal((await cache.read('a', { snapshot: '1:1:', at: 149 }, compute('A2', 150))).body, 'A', 'same snapshot, before its instant: kept')
  t.equal(computed, 1)
  t.equal((await cache.read('a', { snapshot: '1:1:', at: 150 }, compute('A3', 150))).body, 'A3', 'at its instant: computed anew')
  t.equal((await cache.read('a', { snapshot: '1:2:', at: 100 }, compute('A4'))).body, 'A4', 'another snapshot: computed anew')
  t.equal((await cache.read('a', { snapshot: '1:2:', at: 200 }, compute('A5'))).body, 'A4', 'kept again')
  t.equal(computed, 3)

  await cache.read('b', { snapshot: '1:2:', at: 0 }, compute('B'.repeat(120)))
  await cache.read('a', { snapshot: '1:2:', at: 0 }, compute('unused'))
  t.equal(computed, 4, 'a read of a makes it the most recent')
  for (let i = 0; i < 8; i++) await cache.read(`c${i}`, { snapshot: '1:2:', at: 0 }, compute('C'.repeat(120)))
  t.equal((await cache.read('b', { snapshot: '1:2:', at: 0 }, compute('B2'))).body, 'B2', 'b, least recently read, went when the budget was spent')
  t.equal((await cache.read('a', { snapshot: '1:2:', at: 0 }, compute('unused'))).body, 'A4', 'a stayed')
  t.equal((await cache.read('x', { snapshot: '1:2:', at: 0 }, compute('X'.repeat(200)))).body.length, 200)
  t.equal((await cache.read('x', { snapshot: '1:2:', at: 0 }, compute('X2'))).body, 'X2', 'larger than an eighth of the budget: not kept')

  const off = new AnswerCache(0)
  computed = 0
  await off.read('a', { snapshot: '1:1:', at: 0 }, compute('A'))
  await off.read('a', { snapshot: '1:1:', at: 0 }, compute('A'))
  t.equal(computed, 2, 'a budget of 0 keeps nothing')
})

t.test('a kept answer outlives the commits it was told to let pass, and no other', async (t) => {
  const cache = new AnswerCache(1000)
  let computed = 0
  const compute = async (): Promise<Answer> => { computed++; return { body: `answer ${computed}`, until: Infinity } }
  const read = async (snapshot: string) => (await cache.read('k', { snapshot, at: 0 }, compute)).body
  t.equal(await read('100:105:100,102'), 'answer 1')
  // 102 ended, and 105 and 106 began and ended, between the two snapshots.
  t.equal(await read('100:107:100'), 'answer 2', 'nothing let pass: computed anew')
  cache.passOver('102')
  cache.passOver('105')
  t.equal(await read('100:109:100'), 'answer 3', '107 and 108 were not let pass')
  cache.passOver('109')
  cache.passOver('110')
  t.equal(await read('100:111:100'), 'answer 3', '109 and 110 let pass: kept')
  t.equal(await read('100:111:100,110'), 'answer 4', 'an older snapshot, in which 110 still runs: computed anew')
  for (let xid = 111; xid < 200; xid++) cache.passOver(String(xid))
  t.equal(await read('100:190:100'), 'answer 5', 'too many ended between them to judge')
  t.equal(await read('100:190:100'), 'answer 5')
  t.equal(await read('100:191:100'), 'answer 5', 'and kept from the later snapshot on')
  t.equal(await read('garbage'), 'answer 6', 'a snapshot that cannot be read: computed anew')
})

const statements: string[] = []
const on = await build(t, { log: (event) => { if (event.level === 'query') statements.push(event.query.sql) } })
const off = await build(t, { db: on.db, env: { ANSWER_CACHE_MB: '0' } })
const db = on.db
const company = await createCompany(db)
const people = [await createPerson(db, company.id), await createPerson(db, company.id), await createPerson(db, company.id, { isAdmin: true })]
const space = await createSpace(db, company.id, [people[0]!.id, people[1]!.id])
const projects: Array<{ id: string, publicId: string }> = []
for (let i = 0; i < 4; i++) {
  const project = await createProject(db, space, { name: `Kept answer ${i} ${'x'.repeat(200)}`, access: { space: i === 3 ? 0 : 70, company: i === 2 ? 10 : 0 } })
  await addContributor(db, project.id, people[i % 2]!.id, 'champion')
  projects.push(project)
}
await notifyOf(db, projects.map((project) => ({ person_id: people[0]!.id, project_id: project.id, action: 'project_renamed' })))
const tokens = await Promise.all(people.map(async (person) => (await tokenFor(db, person.email)).token))

type Read =
  | { kind: 'get', who: number, project: number, markdown: boolean, tag: 'none' | 'star' | 'last' | 'other' }
  | { kind: 'list', who: number, limit: number, mine: boolean }
  | { kind: 'notifications', who: number, perPage: number }
type Write =
  | { kind: 'rename', who: number, project: number, name: string }
  | { kind: 'check-in', project: number, hoursFromBoundary: number }
  | { kind: 'pin', who: number, project: number }
  | { kind: 'notify', who: number, project: number }
type Step = { read: Read, encoding: string | null, noCompression: boolean } | { write: Write }

const lastTag = new Map<string, string>()

function request (read: Read, encoding: string | null, noCompression: boolean): { method: 'GET', url: string, query: Record<string, string>, headers: Record<string, string> } {
  const headers: Record<string, string> = { authorization: `Bearer ${tokens[read.who]!}` }
  if (encoding !== null) headers['accept-encoding'] = encoding
  if (noCompression) headers['x-no-compression'] = '1'
  if (read.kind === 'get') {
    const key = `${read.who} ${read.project} ${read.markdown}`
    const tag = { none: undefined, star: '*', last: lastTag.get(key) ?? '"nothing"', other: '"other"' }[read.tag]
    if (tag !== undefined) headers['if-none-match'] = tag
    return { method: 'GET', url: '/api/external/v1/projects/get', query: { id: projects[read.project]!.publicId, ...(read.markdown ? { include_markdown: 'true' } : {}) }, headers }
  }
  if (read.kind === 'list') return { method: 'GET', url: '/api/external/v1/projects/list', query: { limit: String(read.limit), ...(read.mine ? { only_my_projects: 'true' } : {}) }, headers }
  return { method: 'GET', url: '/api/external/v1/notifications/list', query: { per_page: String(read.perPage) }, headers }
}

/** What a client sees of an answer: status, the headers that say what it is, and its JSON text. */
function seen (res: LightMyRequestResponse) {
  const encoding = res.headers['content-encoding']
  return {
    status: res.statusCode,
    etag: res.headers.etag,
    type: res.headers['content-type'],
    encoding,
    vary: res.headers.vary,
    body: encoding === 'gzip' ? gunzipSync(res.rawPayload).toString('utf8') : res.payload
  }
}

async function write (step: Write): Promise<void> {
  const project = projects[step.project]!
  if (step.kind === 'rename') {
    await on.app.inject({ method: 'POST', url: '/api/external/v1/projects/update_name', headers: { authorization: `Bearer ${tokens[step.who]!}` }, payload: { project_id: project.publicId, name: step.name } })
  } else if (step.kind === 'check-in') {
    // Around the instant the project turns outdated (three days after its check-in was due).
    await sql`UPDATE projects SET next_check_in_scheduled_at = now() - interval '3 days' + ${step.hoursFromBoundary} * interval '1 hour' WHERE id = ${project.id}`.execute(db)
  } else if (step.kind === 'pin') {
    await sql`INSERT INTO project_pins (project_id, person_id) VALUES (${project.id}, ${people[step.who]!.id}) ON CONFLICT DO NOTHING`.execute(db)
  } else {
    await notifyOf(db, [{ person_id: people[step.who]!.id, project_id: project.id, action: 'project_description_changed' }])
  }
}

const who = fc.nat(people.length - 1)
const which = fc.nat(projects.length - 1)
const readArbitrary: fc.Arbitrary<Read> = fc.oneof(
  fc.record({ kind: fc.constant('get' as const), who, project: which, markdown: fc.boolean(), tag: fc.constantFrom('none' as const, 'star' as const, 'last' as const, 'other' as const) }),
  fc.record({ kind: fc.constant('list' as const), who, limit: fc.integer({ min: 1, max: 5 }), mine: fc.boolean() }),
  fc.record({ kind: fc.constant('notifications' as const), who, perPage: fc.integer({ min: 1, max: 5 }) })
)
const writeArbitrary: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ kind: fc.constant('rename' as const), who, project: which, name: fc.constantFrom('Alpha', 'Beta', `Gamma ${'y'.repeat(300)}`) }),
  fc.record({ kind: fc.constant('check-in' as const), project: which, hoursFromBoundary: fc.constantFrom(-2, -0.5, 0.5, 2, 200) }),
  fc.record({ kind: fc.constant('pin' as const), who, project: which }),
  fc.record({ kind: fc.constant('notify' as const), who, project: which })
)
const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ read: readArbitrary, encoding: fc.constantFrom(null, 'gzip', 'gzip, deflate, br', 'identity', 'br', 'gzip;q=0', '*'), noCompression: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ write: writeArbitrary }), weight: 1 }
)

t.test('with answers kept and not, every read answers the same as the data changes', async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(stepArbitrary, { minLength: 1, maxLength: 12 }), async (steps) => {
    for (const step of steps) {
      if ('write' in step) {
        await write(step.write)
        continue
      }
      const asked = request(step.read, step.encoding, step.noCompression)
      const first = seen(await on.app.inject(asked))
      const plain = seen(await off.app.inject(asked))
      const again = seen(await on.app.inject(asked))
      t.same(first, plain, `${asked.url} ${JSON.stringify(asked.query)} ${step.encoding}`)
      t.same(again, plain, `${asked.url} again`)
      if (step.read.kind === 'get' && plain.etag !== undefined) lastTag.set(`${step.read.who} ${step.read.project} ${step.read.markdown}`, plain.etag)
    }
  }), { numRuns: 30 })
})

t.test('a read asked again of an unchanged database asks it for the token alone', async (t) => {
  // No check-in due: the answer holds whatever the clock (the property above may have set one).
  await sql`UPDATE projects SET next_check_in_scheduled_at = NULL WHERE id = ${projects[0]!.id}`.execute(db)
  const asked = { method: 'GET', url: '/api/external/v1/projects/get', query: { id: projects[0]!.publicId }, headers: { authorization: `Bearer ${tokens[0]!}` } }
  const first = await on.app.inject(asked)
  t.equal(first.statusCode, 200)
  // A commit anywhere on the server (another test's database) changes the snapshot
  // and the read is computed again; one read of a few made in a row is answered alone.
  let alone: string[] | undefined
  for (let attempt = 0; attempt < 500 && alone === undefined; attempt++) {
    statements.length = 0
    const again = await on.app.inject(asked)
    t.equal(again.payload, first.payload)
    if (statements.length === 1) alone = [...statements]
  }
  t.ok(alone !== undefined, 'a read answered with one statement')
  t.match(alone?.[0], /pg_current_snapshot\(\)/, 'the token\'s')

  await on.app.inject({ method: 'POST', url: '/api/external/v1/projects/update_name', headers: asked.headers, payload: { project_id: projects[0]!.publicId, name: 'Renamed since' } })
  statements.length = 0
  const after = await on.app.inject(asked)
  t.equal(after.json().project.name, 'Renamed since', 'a change is read at once')
  t.ok(statements.length > 1, 'computed anew')
  t.not(after.payload, first.payload)
})

t.test('the record of a token\'s use does not end the answers kept', async (t) => {
  const person = people[1]!
  await sql`UPDATE projects SET next_check_in_scheduled_at = NULL WHERE id = ${projects[1]!.id}`.execute(db)
  const fresh = await Promise.all(Array.from({ length: 200 }, async () => (await tokenFor(db, person.email)).token))
  const get = async (token: string) => await on.app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: projects[1]!.publicId }, headers: { authorization: `Bearer ${token}` } })
  const first = await get(fresh[0]!)
  t.equal(first.statusCode, 200)
  // Each token is used for the first time, so its use is recorded (a commit). A
  // commit on another database of the server between two reads ends the answer, so
  // one read of the few is enough; without letting the records pass, none is kept.
  let kept: string[] | undefined
  for (const token of fresh.slice(1)) {
    statements.length = 0
    const res = await get(token)
    t.equal(res.payload, first.payload)
    if (!statements.some((text) => /from "projects"/.test(text))) {
      kept = [...statements]
      break
    }
  }
  t.ok(kept !== undefined, 'a read after another token\'s use was recorded answered from what was kept')
  t.match(kept?.[0], /from "api_tokens"/, 'the token\'s lookup')
  t.match(kept?.[1], /update "api_tokens"/, 'and its use recorded')
  t.equal(kept?.length, 2)
})
