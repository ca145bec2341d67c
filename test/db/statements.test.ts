// Statements built once (src/db/statements.ts) answer what the statements built
// each time answer: for any person and any project, with the cache on and off, the
// project, a page of the list, the token lookup and a change's access check agree,
// also after the data changes between runs; a change writes the same rows (its
// activity, its webhook delivery and job, the notifications of its subscribers and
// of those it mentions). And a statement refuses an argument it would not pass as a
// parameter.
import t from '../tap.js'
import fc from 'fast-check'
import { sql } from 'kysely'
import { cacheStatements, preparedName, statement } from '../../src/db/statements.js'
import { findProject, listProjects } from '../../src/projects/query.js'
import { findToken, tokenDigest } from '../../src/auth/tokens.js'
import { changeProject } from '../../src/projects/change.js'
import { shortId } from '../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'
import type { AccessLevel, ContributorRole } from '../../src/db/types.js'

const { app, db } = await build(t)
t.teardown(() => cacheStatements(true))

const company = await createCompany(db)
const other = await createCompany(db)
const people = [
  await createPerson(db, company.id),
  await createPerson(db, company.id, { isAdmin: true }),
  await createPerson(db, company.id),
  await createPerson(db, company.id, { suspended: true }),
  await createPerson(db, other.id)
]
const space = await createSpace(db, company.id, [people[2]!.id])
const levels: AccessLevel[] = [0, 10, 40, 70, 100]
const roles: ContributorRole[] = ['champion', 'reviewer', 'contributor']
const projects: string[] = []
for (let i = 0; i < 8; i++) {
  const project = await createProject(db, space, { access: { public: i % 3 === 0 ? 10 : 0, company: levels[i % 5]!, space: levels[(i + 2) % 5]! } })
  projects.push(project.id)
}

/** What each of the two ways answers, for the same question. */
async function both<T> (ask: () => Promise<T>): Promise<[T, T]> {
  cacheStatements(true)
  const cached = await ask()
  cacheStatements(false)
  const built = await ask()
  cacheStatements(true)
  return [cached, built]
}

t.test('findProject and listProjects answer the same with the cache on and off, as the data changes', async (t) => {
  await fc.assert(fc.asyncProperty(
    fc.nat(people.length - 1), fc.nat(projects.length - 1), fc.constantFrom(...roles), fc.constantFrom(...levels), fc.integer({ min: 1, max: 5 }),
    async (who, which, role, level, limit) => {
      const person = people[who]!.id
      const project = projects[which]!
      const binding = people[(who + 1) % people.length]!.id
      await db.deleteFrom('project_contributors').where('project_id', '=', project)
        .where((eb) => eb.or([eb('person_id', '=', binding), eb('role', '=', role)])).execute()
      await addContributor(db, project, binding, role, role === 'contributor' && level > 0 ? level as 10 | 40 | 70 | 100 : null)
      await db.updateTable('projects').set({ name: `Project ${level} ${limit}` }).where('id', '=', project).execute()
      const [a, b] = await both(() => findProject(db, project, person))
      t.same(a, b)
      const page = { after: null, limit }
      const filters = { roles: null, spaceId: null, goalId: null, includeArchived: false }
      const [la, lb] = await both(() => listProjects(db, person, filters, page))
      t.same(la, lb)
    }), { numRuns: 40 })
})

t.test('the token lookup and a change\'s access check answer the same with the cache on and off', async (t) => {
  const token = await tokenFor(db, people[0]!.email)
  const [a, b] = await both(() => findToken(db, tokenDigest(token.token)))
  // The snapshot and the clock are read at each lookup (http/answer-cache.ts keeps answers by them).
  const { snapshot, now_ms: nowMs, ...owner } = a!
  const { snapshot: builtSnapshot, now_ms: builtNowMs, ...builtOwner } = b!
  t.same(owner, builtOwner)
  t.match(snapshot, /^\d+:\d+:/)
  t.match(builtSnapshot, /^\d+:\d+:/)
  t.ok(nowMs <= builtNowMs, 'the clock read as the token was')
  t.equal(a?.person_id, people[0]!.id)
  const [none, noneBuilt] = await both(() => findToken(db, tokenDigest('pat_unknown')))
  t.equal(none, null)
  t.equal(noneBuilt, null)
  for (const person of people) {
    const caller = { personId: person.id, companyId: company.id, tokenId: token.id, readOnly: false }
    const attempt = async () => await changeProject(db, { caller, projectId: projects[0]!, ifMatch: null, write: async () => ({ queued: 0 }) })
      .then((r) => r.etag, (error: { statusCode?: number }) => error.statusCode)
    const [x, y] = await both(attempt)
    t.equal(x, y, `person ${people.indexOf(person)}`)
  }
})

t.test('a statement passes each argument as a parameter, and names its SQL only while the cache is on', async (t) => {
  const inlined = statement(['name'], (db, { name }: { name: string }) => db.selectFrom('projects').select('id').where('name', '=', sql.lit(name)))
  await t.rejects(inlined(db, { name: 'x' }), /written into the SQL/)
  const unused = statement(['name', 'id'], (db, { name }: { name: string, id: string }) => db.selectFrom('projects').select('id').where('name', '=', name))
  await t.rejects(unused(db, { name: 'x', id: 'y' }), /not used/)
  const byId = statement(['id'], (db, { id }: { id: string }) => db.selectFrom('projects').select('name').where('id', '=', id).where('name', 'is not', null))
  const named = await db.selectFrom('projects').select(['id', 'name']).executeTakeFirstOrThrow()
  t.same(await byId(db, { id: named.id }), [{ name: named.name }])
  const text = db.selectFrom('projects').select('name').where('id', '=', 'x').where('name', 'is not', null).compile().sql
  t.match(preparedName(text), /^s[\w-]{24}$/)
  cacheStatements(false)
  t.equal(preparedName(text), undefined)
  t.same(await byId(db, { id: named.id }), [{ name: named.name }])
  cacheStatements(true)
})

t.test('a rename and a description change write the same rows with the cache on and off', async (t) => {
  const champion = people[1]!
  const mentioned = people[2]!
  const { token } = await tokenFor(db, champion.email)
  await db.insertInto('webhooks').values({ company_id: company.id, url: 'https://hooks.example.com/s', events: ['project.renamed', 'project.description_changed'], secret: 'whsec_x' }).execute()
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { id: shortId(mentioned.id), label: mentioned.full_name } }] }] })
  async function written (on: boolean) {
    const label = on ? 'cached' : 'built'
    cacheStatements(on)
    const project = await createProject(db, space, { name: `Written ${label}`, access: { company: 70, space: 70 } })
    await addContributor(db, project.id, champion.id, 'champion')
    await addContributor(db, project.id, people[0]!.id, 'contributor')
    const headers = { authorization: `Bearer ${token}` }
    const renamed = await app.inject({ method: 'POST', url: '/api/external/v1/projects/update_name', headers, payload: { project_id: project.publicId, name: `Renamed ${label}` } })
    const described = await app.inject({ method: 'POST', url: '/api/external/v1/projects/update_description', headers, payload: { project_id: project.publicId, description } })
    cacheStatements(true)
    t.equal(renamed.statusCode, 200)
    t.equal(described.statusCode, 200)
    const activities = await db.selectFrom('activities').select(['action', 'author_id', 'token_id', 'content'])
      .where('project_id', '=', project.id).orderBy('inserted_at').orderBy('id').execute()
    const deliveries = await db.selectFrom('webhook_deliveries as d').innerJoin('activities as a', 'a.id', 'd.event_id')
      .select(['d.event_type', 'd.payload']).where('a.project_id', '=', project.id).orderBy('a.inserted_at').execute()
    const jobs = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job j JOIN webhook_deliveries d ON d.id = (j.data->>'delivery_id')::uuid
      JOIN activities a ON a.id = d.event_id WHERE a.project_id = ${project.id}`.execute(db)
    const notified = await db.selectFrom('notifications').select(['person_id', 'action', 'author_id'])
      .where('project_id', '=', project.id).orderBy('action').orderBy('person_id').execute()
    const subscribed = await db.selectFrom('subscriptions as s').innerJoin('subscription_lists as l', 'l.id', 's.subscription_list_id')
      .select(['s.person_id', 's.type']).where('l.project_id', '=', project.id).orderBy('s.person_id').execute()
    const neutral = (text: string) => text.replaceAll(label, 'X')
    return {
      activities: activities.map((a) => ({ ...a, content: neutral(JSON.stringify(a.content)) })),
      deliveries: deliveries.map((d) => ({ type: d.event_type, change: neutral(JSON.stringify((d.payload as { data: { change: unknown } }).data.change)) })),
      jobs: jobs.rows[0]!.n,
      notified,
      subscribed
    }
  }
  const cached = await written(true)
  const built = await written(false)
  t.same(cached, built)
  t.equal(cached.activities.length, 2)
  t.equal(cached.deliveries.length, 2)
  t.equal(cached.jobs, 2)
  t.ok(cached.notified.some((n) => n.person_id === mentioned.id), 'the person mentioned is notified')
})
