// A page of the projects a person can see (projects/list), each the whole
// aggregate as that person sees it, in one statement: ordered by name then id, and
// continued after the last project of the previous page (keyset paging, so a page
// costs the same however deep it is).
import { expressionBuilder, sql, type Kysely } from 'kysely'
import { ACCESS, accessLevel, hasAccess } from './access.js'
import { value } from './prepared.js'
import { prepareForCaller, runAs, type Actor } from './caller.js'
import { projectAggregate, projectSource, projectText, sharedVersion, type VersionedProject } from './project-aggregate.js'
import { fenced } from './project-etag.js'
import type { ContributorRole, Database } from './types.js'

export interface ProjectListQuery {
  /** Only projects where the person holds one of these roles; null for any. */
  roles: ContributorRole[] | null
  spaceId: string | null
  goalId: string | null
  includeArchived: boolean
  /**
   * The name and id of the last project of the previous page, and the person its
   * cursor was issued to; null for the first page.
   */
  after: { name: string, id: string, person: string } | null
  limit: number
  /**
   * Versions (sharedVersion) of projects whose shared part the server already
   * holds written: for a project of the page at one of them, the statement
   * returns only the reader's part.
   */
  known: string[]
}

// The caller's person, from the statement's `caller` (db/caller.ts).
const ME = sql<string>`caller.person_id`

// Where a person's access can come from (db/access.ts): their company, a space
// they belong to, a project they contribute to, or a project's public level. Each
// has its index, so a page works out the level of these projects only, not of every
// project of every company in the database. A new way of access in accessLevel
// needs its place here too.
const candidates = expressionBuilder<Database>()
  .selectFrom('projects as cp').select('cp.id')
  .where('cp.company_id', '=', (eb) => eb.selectFrom('people as cm').select('cm.company_id').where('cm.id', '=', ME))
  .unionAll((eb) => eb.selectFrom('projects as cp').select('cp.id').where('cp.public_access', '>', sql.lit(0)))
  .unionAll((eb) => eb.selectFrom('space_members as cs').innerJoin('projects as cp', 'cp.space_id', 'cs.space_id')
    .select('cp.id').where('cs.person_id', '=', ME))
  .unionAll((eb) => eb.selectFrom('project_contributors as cc').select('cc.project_id as id').where('cc.person_id', '=', ME))

// The page first (ids, names and levels, by name then id, up to the limit and one
// more, which tells whether there is a next page), then each of its projects'
// aggregate exactly as projects/get reads it (db/project-aggregate.ts), so that both
// answers share what is already written. The one more is only looked at: no
// aggregate is built for it. A project at a version the server says it holds
// (`known`) comes back as its reader's part only: the shared part, most of a page's
// bytes, is neither made into text nor sent.
const LIST_PROJECTS = prepareForCaller('read', {
  roles: value<ContributorRole[] | null>(),
  spaceId: value<string | null>(),
  goalId: value<string | null>(),
  includeArchived: value<boolean>(),
  afterName: value<string | null>(),
  afterId: value<string | null>(),
  afterPerson: value<string | null>(),
  limit: value<number>(),
  known: value<string[]>()
}, (withCaller, v, db) => {
  // A cursor continues only the list of the person it was issued to.
  const ownCursor = sql<boolean>`(${v.afterPerson}::uuid IS NULL OR ${v.afterPerson}::uuid = caller.person_id)`
  return withCaller.selectFrom('caller')
    .leftJoinLateral((eb) => eb.selectFrom(eb.selectFrom(eb.selectFrom(candidates.as('source')).select('source.id').distinct().as('candidate'))
      // Each candidate looked up by its key: as a join, or with IN, the plan read
      // every project of every company into a hash table for each page.
      .innerJoinLateral((eb) => fenced(eb.selectFrom('projects as lp').selectAll('lp').select(sql<string>`lp.xmin`.as('row_xmin'))
        .whereRef('lp.id', '=', 'candidate.id')).as('p'), (join) => join.onTrue())
      .innerJoin('people as me', (join) => join.on('me.id', '=', ME))
      .where(ownCursor)
      // Whether the person sees it, stopping at the first source that grants it
      // (db/access.ts): a project of their company the company may view costs no
      // lookup of its space's members or its contributors.
      .where((eb) => hasAccess(eb.table('p'), eb.table('me'), ACCESS.view))
      .where(sql<boolean>`(${v.includeArchived} OR p.archived_at IS NULL)`)
      .where(sql<boolean>`(${v.spaceId}::uuid IS NULL OR p.space_id = ${v.spaceId}::uuid)`)
      .where(sql<boolean>`(${v.goalId}::uuid IS NULL OR p.goal_id = ${v.goalId}::uuid)`)
      .where(sql<boolean>`(${v.roles}::text[] IS NULL OR EXISTS (
        SELECT 1 FROM project_contributors r
        WHERE r.project_id = p.id AND r.person_id = ${ME} AND r.role = ANY(${v.roles}::text[])))`)
      .where(sql<boolean>`(${v.afterName}::text IS NULL OR (p.name, p.id) > (${v.afterName}::text, ${v.afterId}::uuid))`)
      .select(['p.id', 'p.name', 'p.company_id', 'p.space_id', 'p.public_access', 'p.company_access', 'p.space_access',
        sharedVersion(sql`p.row_xmin`).as('version')])
      .orderBy('p.name').orderBy('p.id')
      .limit(sql<number>`${v.limit} + 1`)
      .as('chosen'))
      // The level, which the answer shows, of the page's projects only.
      .innerJoin('people as me', (join) => join.on('me.id', '=', ME))
      // Numbered after the limit: a window over the whole list would sort all of it.
      .select((eb) => ['chosen.id', 'chosen.name', 'chosen.version', accessLevel(eb.table('chosen'), eb.table('me')).as('level'),
        // Whether the server holds the project at this version: a hashed lookup,
        // made once for the statement, not a walk of the list for each project.
        sql<boolean>`chosen.version IN (SELECT unnest(${v.known}::text[]))`.as('kept'),
        sql<number>`row_number() OVER (ORDER BY chosen.name, chosen.id)`.as('n')])
      .as('page'), (join) => join.onTrue())
    .leftJoinLateral(fenced(projectAggregate(db, projectSource('projects'), ME)
      .where('p.id', '=', sql<string>`page.id`)
      .where(sql<boolean>`page.n <= ${v.limit}`)).as('project'), (join) => join.onTrue())
    .select([
      'page.id', 'page.name', 'page.level', 'page.version', 'page.kept',
      // Null for the one more (no aggregate is built for it).
      projectText('project', sql<boolean>`page.kept`).as('aggregate'),
      'caller.person_id as caller_person_id', ownCursor.as('own_cursor')
    ])
    .orderBy('page.name').orderBy('page.id')
})

/** A project of a page: where it stands in the order, and what projects/get would read of it. */
export interface ListedProject extends VersionedProject {
  id: string
  name: string
}

export interface ProjectPage {
  /** The caller's person: a cursor for the next page is issued to them. */
  personId: string
  /** False when the cursor was issued to someone else: no project was read. */
  ownCursor: boolean
  projects: ListedProject[]
  /** Whether the caller can see a project after the page's last. */
  more: boolean
}

/** Up to `limit` projects the caller can see, after `after`, by name then id, and whether more follow. */
export async function listProjects (db: Kysely<Database>, actor: Actor, query: ProjectListQuery): Promise<ProjectPage> {
  const rows = await runAs(db, LIST_PROJECTS, actor, {
    roles: query.roles,
    spaceId: query.spaceId,
    goalId: query.goalId,
    includeArchived: query.includeArchived,
    afterName: query.after?.name ?? null,
    afterId: query.after?.id ?? null,
    afterPerson: query.after?.person ?? null,
    limit: query.limit,
    known: query.known
  })
  const { caller_person_id: personId, own_cursor: ownCursor } = rows[0]!
  const projects: ListedProject[] = []
  let more = false
  for (const { id, name, level, version, kept, aggregate } of rows) {
    if (id === null || name === null || level === null) continue
    if (aggregate === null) more = true
    else projects.push({ id, name, level, version, kept: kept === true, aggregate })
  }
  return { personId, ownCursor, projects, more }
}
