// A person's access level on a project, as SQL over a row of each: the highest of
// company admin (100), the public level, the company level for members of the
// project's company, the space level for members of its space, and the person's
// own contributor binding. Suspended people have none. The rows are passed as
// references (`eb.table('p')`), so the compiler checks that they are a project
// and a person; the tables the rule reads itself are aliased `access_*`, which no
// caller's alias may shadow. The rule is written twice, as a level (accessLevel)
// and as a condition (hasAccess), and projects/list looks for visible projects
// where its terms come from (projects/query.ts, visibleProjectIds): a new term
// needs its place in all three (test/projects/access.test.ts checks the first two agree).
import { expressionBuilder, sql, type Expression, type RawBuilder, type Selectable } from 'kysely'
import type { Database, PeopleTable, ProjectContributorsTable, ProjectsTable } from '../db/types.js'

export const ACCESS = { view: 10, comment: 40, edit: 70, full: 100 } as const

/** A project row in scope, with the columns the rule reads. */
export type ProjectRef = Expression<Pick<Selectable<ProjectsTable>,
  'id' | 'company_id' | 'space_id' | 'public_access' | 'company_access' | 'space_access'>>

/** A person row in scope, with the columns the rule reads. */
export type PersonRef = Expression<Pick<Selectable<PeopleTable>, 'id' | 'company_id' | 'is_admin' | 'suspended_at'>>

/** A contributor binding in scope. */
export type ContributorRef = Expression<Pick<Selectable<ProjectContributorsTable>, 'role' | 'access_level'>>

/** One column of the row `row` refers to. */
function column<R, C extends keyof R & string> (row: Expression<R>, name: C): RawBuilder<R[C]> {
  return sql<R[C]>`${row}.${sql.id(name)}`
}

/**
 * The level a contributor binding gives: champions and reviewers full access, a
 * contributor the level set on the binding (null when none is set). The API's
 * contributors show it, and accessLevel counts it.
 */
export function contributorLevel (contributor: ContributorRef): RawBuilder<number | null> {
  return sql<number | null>`CASE WHEN ${column(contributor, 'role')} = 'contributor' THEN ${column(contributor, 'access_level')} ELSE ${sql.lit(ACCESS.full)} END`
}

/** Whether `person` belongs to `project`'s company. */
function sameCompany (project: ProjectRef, person: PersonRef): RawBuilder<boolean> {
  return sql<boolean>`${column(person, 'company_id')} = ${column(project, 'company_id')}`
}

/** A subquery PostgreSQL plans on its own (OFFSET 0 keeps it from being pulled up into its parent). */
function fenced<Q extends { modifyEnd: (modifier: RawBuilder<unknown>) => Q }> (query: Q): Q {
  return query.modifyEnd(sql`OFFSET 0`)
}

/**
 * Whether `person` is a member of `project`'s space. Each EXISTS of this module
 * ends in OFFSET 0 (`fenced`), which keeps PostgreSQL from answering it with a
 * hash of the whole table (built once per execution, when it expects to be asked
 * about many rows): each is a lookup by key, whatever the tables grow to.
 */
function isSpaceMember (project: ProjectRef, person: PersonRef) {
  const eb = expressionBuilder<Database>()
  return eb.exists(fenced(eb.selectFrom('space_members as access_sm')
    .select(sql.lit(1).as('one'))
    .where('access_sm.space_id', '=', column(project, 'space_id'))
    .where('access_sm.person_id', '=', column(person, 'id'))))
}

/** The access level of `person` on `project`: 0 for no access at all. */
export function accessLevel (project: ProjectRef, person: PersonRef): RawBuilder<number> {
  const eb = expressionBuilder<Database>()
  const binding = eb.selectFrom('project_contributors as access_c')
    .select((eb) => sql<number>`coalesce(max(${contributorLevel(eb.table('access_c'))}), 0)`.as('level'))
    .where('access_c.project_id', '=', column(project, 'id'))
    .where('access_c.person_id', '=', column(person, 'id'))
  const company = sameCompany(project, person)
  return sql<number>`CASE WHEN ${column(person, 'suspended_at')} IS NOT NULL THEN 0 ELSE greatest(
  ${column(project, 'public_access')},
  CASE WHEN ${company} THEN ${column(project, 'company_access')} ELSE 0 END,
  CASE WHEN ${company} AND ${column(person, 'is_admin')} THEN ${sql.lit(ACCESS.full)} ELSE 0 END,
  CASE WHEN ${isSpaceMember(project, person)} THEN ${column(project, 'space_access')} ELSE 0 END,
  ${binding}
) END`
}

/**
 * Whether `person` has at least `level` (above 0) on `project`: accessLevel's
 * terms as a condition, for a WHERE clause (null where it is false). PostgreSQL
 * stops at the first term of an OR that holds, in the order written, so a member
 * of the project's company, when the company's level is enough, costs no lookup of
 * space members or contributors: `accessLevel(...) >= level` computes every term
 * for every row, which made notifying a project's hundred subscribers look up each
 * one's space membership and contributor binding.
 */
export function hasAccess (project: ProjectRef, person: PersonRef, level: number): RawBuilder<boolean> {
  if (!(level > 0 && level <= ACCESS.full)) throw new RangeError(`an access level above 0 and at most ${ACCESS.full}, not ${level}`)
  const eb = expressionBuilder<Database>()
  const binding = eb.exists(fenced(eb.selectFrom('project_contributors as access_c')
    .select(sql.lit(1).as('one'))
    .where('access_c.project_id', '=', column(project, 'id'))
    .where('access_c.person_id', '=', column(person, 'id'))
    .where((eb) => eb(contributorLevel(eb.table('access_c')), '>=', sql.lit(level)))))
  return sql<boolean>`(${column(person, 'suspended_at')} IS NULL AND (
  ${column(project, 'public_access')} >= ${sql.lit(level)}
  OR (${sameCompany(project, person)} AND (${column(project, 'company_access')} >= ${sql.lit(level)} OR ${column(person, 'is_admin')}))
  OR (${column(project, 'space_access')} >= ${sql.lit(level)} AND ${isSpaceMember(project, person)})
  OR ${binding}
))`
}
