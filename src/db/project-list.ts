// A page of the projects a person can see (projects/list), each the whole
// aggregate as that person sees it, in one statement: ordered by name then id, and
// continued after the last project of the previous page (keyset paging, so a page
// costs the same however deep it is).
import { sql, type Kysely } from 'kysely'
import { ACCESS, accessLevel } from './access.js'
import { prepare, value } from './prepared.js'
import { projectAggregate, projectSource, type ProjectView } from './project-aggregate.js'
import type { ContributorRole, Database } from './types.js'

export interface ProjectListQuery {
  personId: string
  /** Only projects where the person holds one of these roles; null for any. */
  roles: ContributorRole[] | null
  spaceId: string | null
  goalId: string | null
  includeArchived: boolean
  /** The name and id of the last project of the previous page; null for the first page. */
  after: { name: string, id: string } | null
  limit: number
}

const LIST_PROJECTS = prepare({
  personId: value<string>(),
  roles: value<ContributorRole[] | null>(),
  spaceId: value<string | null>(),
  goalId: value<string | null>(),
  includeArchived: value<boolean>(),
  afterName: value<string | null>(),
  afterId: value<string | null>(),
  limit: value<number>()
}, (db, v) => projectAggregate(db, projectSource('projects'), v.personId)
  .innerJoinLateral((eb) => eb.selectFrom('people as me')
    .where('me.id', '=', v.personId)
    .select((eb) => accessLevel(eb.table('p'), eb.table('me')).as('level'))
    .as('acc'), (join) => join.onTrue())
  .where('acc.level', '>=', ACCESS.view)
  .where(sql<boolean>`(${v.includeArchived} OR p.archived_at IS NULL)`)
  .where(sql<boolean>`(${v.spaceId}::uuid IS NULL OR p.space_id = ${v.spaceId}::uuid)`)
  .where(sql<boolean>`(${v.goalId}::uuid IS NULL OR p.goal_id = ${v.goalId}::uuid)`)
  .where(sql<boolean>`(${v.roles}::text[] IS NULL OR EXISTS (
    SELECT 1 FROM project_contributors r
    WHERE r.project_id = p.id AND r.person_id = ${v.personId}::uuid AND r.role = ANY(${v.roles}::text[])))`)
  .where(sql<boolean>`(${v.afterName}::text IS NULL OR (p.name, p.id) > (${v.afterName}::text, ${v.afterId}::uuid))`)
  .select('acc.level')
  .orderBy('p.name').orderBy('p.id')
  .limit(v.limit))

/** Up to `limit` projects the person can see, after `after`, by name then id. */
export async function listProjects (db: Kysely<Database>, query: ProjectListQuery): Promise<ProjectView[]> {
  const { rows } = await db.executeQuery(LIST_PROJECTS({
    personId: query.personId,
    roles: query.roles,
    spaceId: query.spaceId,
    goalId: query.goalId,
    includeArchived: query.includeArchived,
    afterName: query.after?.name ?? null,
    afterId: query.after?.id ?? null,
    limit: query.limit
  }))
  return rows
}
