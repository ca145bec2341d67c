// Statements built once (src/db/statements.ts) answer what the statements built
// each time answer: for any person and any project, with the cache on and off, the
// project, a page of the list, the token lookup and a change's access check agree,
// also after the data changes between runs. And a statement refuses an argument it
// would not pass as a parameter.
import t from '../tap.js'
import fc from 'fast-check'
import { sql } from 'kysely'
import { cacheStatements, preparedName, statement } from '../../src/db/statements.js'
import { findProject, listProjects } from '../../src/projects/query.js'
import { findToken, tokenDigest } from '../../src/auth/tokens.js'
import { changeProject } from '../../src/projects/change.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'
import type { AccessLevel, ContributorRole } from '../../src/db/types.js'

const { db } = await build(t)
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
