// The access rule in SQL (db/access.ts): the level a contributor binding gives,
// shown on the API's contributors and counted by a person's access level, which is
// the highest of the levels that apply.
import t from 'tap'
import { ACCESS, accessLevel, contributorLevel } from '../../src/db/access.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace } from '../helper.js'

const { db } = await build(t)

const company = await createCompany(db)
const other = await createCompany(db)
const champion = await createPerson(db, company.id)
const reviewer = await createPerson(db, company.id)
const editor = await createPerson(db, company.id)
const unset = await createPerson(db, company.id)
const member = await createPerson(db, company.id)
const admin = await createPerson(db, company.id, { isAdmin: true })
const suspended = await createPerson(db, company.id, { suspended: true })
const outsider = await createPerson(db, other.id)
const space = await createSpace(db, company.id, [member.id, suspended.id])
const project = await createProject(db, space, { access: { public: 0, company: 10, space: 40 } })
await addContributor(db, project.id, champion.id, 'champion')
await addContributor(db, project.id, reviewer.id, 'reviewer', 10)
await addContributor(db, project.id, editor.id, 'contributor', 70)
await addContributor(db, project.id, unset.id, 'contributor')
await addContributor(db, project.id, suspended.id, 'contributor', 70)

t.test('champions and reviewers: full access; a contributor: the level on the binding, none when unset', async (t) => {
  const rows = await db.selectFrom('project_contributors as c')
    .where('c.project_id', '=', project.id)
    .select((eb) => ['c.person_id', contributorLevel(eb.table('c')).as('level')])
    .execute()
  const level = (id: string) => rows.find((r) => r.person_id === id)?.level
  t.equal(level(champion.id), ACCESS.full)
  t.equal(level(reviewer.id), ACCESS.full, 'a level set on a reviewer binding changes nothing')
  t.equal(level(editor.id), 70)
  t.equal(level(unset.id), null)
})

t.test('a person\'s level is the highest that applies; a suspended person has none', async (t) => {
  const rows = await db.selectFrom('projects as p')
    .innerJoin('people as me', (join) => join.onTrue())
    .where('p.id', '=', project.id)
    .select((eb) => ['me.id', accessLevel(eb.table('p'), eb.table('me')).as('level')])
    .execute()
  const level = (id: string) => rows.find((r) => r.id === id)?.level
  t.equal(level(champion.id), ACCESS.full)
  t.equal(level(reviewer.id), ACCESS.full)
  t.equal(level(editor.id), 70)
  t.equal(level(unset.id), 10, 'a contributor without a level keeps the company level')
  t.equal(level(member.id), 40, 'the space level for a member of the space')
  t.equal(level(admin.id), ACCESS.full, 'a company admin')
  t.equal(level(suspended.id), 0)
  t.equal(level(outsider.id), 0)
})
