// The access rule in SQL (db/access.ts): the level a contributor binding gives,
// shown on the API's contributors and counted by a person's access level, which is
// the highest of the levels that apply; and the same rule as a condition, which
// must hold exactly where the level is high enough.
import t from '../tap.js'
import { sql } from 'kysely'
import { ACCESS, accessLevel, contributorLevel, hasAccess } from '../../src/projects/access.js'
import type { AccessLevel } from '../../src/db/types.js'
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

t.test('hasAccess holds exactly where accessLevel reaches the level, for every kind of person, project and level', async (t) => {
  // Projects of every combination of the three levels (of the company above, in
  // the space `member` belongs to), each with the same contributor bindings.
  const levels: AccessLevel[] = [0, 10, 40, 70]
  const projects: string[] = [project.id]
  for (const pub of [0, 10] as AccessLevel[]) {
    for (const com of levels) {
      for (const spa of levels) {
        const p = await createProject(db, space, { access: { public: pub, company: com, space: spa } })
        await addContributor(db, p.id, champion.id, 'champion')
        await addContributor(db, p.id, reviewer.id, 'reviewer', 10)
        await addContributor(db, p.id, editor.id, 'contributor', 70)
        await addContributor(db, p.id, unset.id, 'contributor')
        await addContributor(db, p.id, outsider.id, 'contributor', 40)
        projects.push(p.id)
      }
    }
  }
  const asked = [ACCESS.view, ACCESS.comment, ACCESS.edit, ACCESS.full]
  const rows = await db.selectFrom('projects as p')
    .innerJoin('people as me', (join) => join.onTrue())
    .where('p.id', 'in', projects)
    .select((eb) => [
      'p.id as project', 'me.id as person', accessLevel(eb.table('p'), eb.table('me')).as('level'),
      ...asked.map((level) => eb.fn.coalesce(hasAccess(eb.table('p'), eb.table('me'), level), eb.lit(false)).as(`has_${level}`))
    ])
    .execute()
  const people = new Set(rows.map((r) => r.person))
  t.equal(people.size, 8, 'every person of the file')
  t.equal(projects.length, 33, 'the first project and 32 of every combination of levels')
  let disagreements = 0
  let granted = 0
  for (const row of rows) {
    for (const level of asked) {
      const has = (row as unknown as Record<string, boolean>)[`has_${level}`]
      if (has !== row.level >= level) disagreements++
      if (has) granted++
    }
  }
  t.equal(disagreements, 0, `${rows.length * asked.length} cases, ${granted} granted`)
  t.ok(granted > 0 && granted < rows.length * asked.length, 'some cases granted and some not')
  t.throws(() => hasAccess(sql.table('p') as never, sql.table('me') as never, 0), RangeError, 'level 0 always holds: not a question')
})

t.test('the rule reads the rows it is given, whatever their aliases (none shadows its own tables)', async (t) => {
  for (const [projectAlias, personAlias] of [['c', 'sm'], ['sm', 'c'], ['access_x', 'me']] as const) {
    const rows = await db.selectFrom(`projects as ${projectAlias}` as 'projects as p')
      .innerJoin(`people as ${personAlias}` as 'people as me', (join) => join.onTrue())
      .where(sql.ref(`${projectAlias}.id`), '=', project.id)
      .select((eb) => [
        sql<string>`${sql.ref(`${personAlias}.id`)}`.as('id'),
        accessLevel(sql.table(projectAlias) as never, sql.table(personAlias) as never).as('level'),
        eb.fn.coalesce(hasAccess(sql.table(projectAlias) as never, sql.table(personAlias) as never, ACCESS.edit), eb.lit(false)).as('edits')
      ])
      .execute()
    const level = (id: string) => rows.find((r) => r.id === id)?.level
    const edits = (id: string) => rows.find((r) => r.id === id)?.edits
    t.equal(level(editor.id), 70, `a contributor's binding, with the project as ${projectAlias} and the person as ${personAlias}`)
    t.equal(level(member.id), 40, `a space member, with the project as ${projectAlias} and the person as ${personAlias}`)
    t.equal(edits(editor.id), true)
    t.equal(edits(member.id), false)
  }
})
