// The Project, read: one query builds a project with all its children as JSON, for
// one person (their access level, role, pin and unread notifications), from the
// tables themselves. projects/get, projects/list and every change's answer read it
// here; presenter.ts shapes the row for the wire.
import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely'
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres'
import type { ContributorRole, Database } from '../db/types.js'
import { statement } from '../db/statements.js'
import { ACCESS, accessLevel, contributorLevel, hasAccess } from './access.js'

export type Queryable = Kysely<Database> | Transaction<Database>

type ProjectScope = ExpressionBuilder<Database & { p: Database['projects'] }, 'p'>

/** A person as a project nests them. */
function person (eb: ProjectScope, id: 'sub.person_id' | 'ci.author_id' | 'ci.acknowledged_by_id' | 'r.author_id' | 'c.person_id') {
  return jsonObjectFrom(eb.selectFrom('people as pe')
    .select(['pe.id', 'pe.full_name', 'pe.email', 'pe.title', 'pe.avatar_url', 'pe.type'])
    .whereRef('pe.id', '=', id as never))
}

/** A timeframe's dates leave PostgreSQL as text: a Date would shift them by the process's time zone. */
const timeframeDates = (table: 'p' | 'g') => [
  sql<string | null>`${sql.ref(`${table}.timeframe_start_date`)}::text`.as('timeframe_start_date'),
  sql<string | null>`${sql.ref(`${table}.timeframe_end_date`)}::text`.as('timeframe_end_date')
] as const

/** SPEC part 7's `is_outdated`, judged by the database's clock: an active project's check-in overdue by more than 3 days. */
const IS_OUTDATED = sql<boolean>`(p.state = 'active' AND coalesce(p.next_check_in_scheduled_at < now() - interval '3 days', false))`

const HOUR_MS = 3_600_000

/**
 * From when, by the database's clock, one of these projects may turn outdated
 * (IS_OUTDATED): an active one whose check-in is due, three days after it; an hour
 * earlier, as three days of a time zone's calendar may be 71 hours. Infinity when
 * none can (http/answer-cache.ts keeps their answer until then).
 */
export function outdatedFrom (rows: readonly ProjectRow[]): number {
  let from = Infinity
  for (const row of rows) {
    if (row.state !== 'active' || row.is_outdated || row.next_check_in_scheduled_at === null) continue
    from = Math.min(from, row.next_check_in_scheduled_at.getTime() + 71 * HOUR_MS)
  }
  return from
}

/** Every column of the Project's row for the person `personId`; the query selects from `projects as p`. */
export function projectSelection (db: Queryable, personId: string) {
  return db.selectFrom('projects as p')
    .innerJoin('spaces as s', 's.id', 'p.space_id')
    .innerJoin('people as me', (join) => join.on('me.id', '=', personId))
    .select((eb) => [
      'p.id', 'p.name', 'p.description', 'p.space_id', 's.name as space_name',
      'p.public_access', 'p.company_access', 'p.space_access',
      'p.archived_at', 'p.closed_at', 'p.inserted_at', 'p.updated_at',
      'p.next_check_in_scheduled_at', 'p.next_update_scheduled_at',
      'p.state', 'p.success_status',
      sql<string>`p.tasks_kanban_state::text`.as('tasks_kanban_state'),
      'p.timeframe_start_type', 'p.timeframe_start_value', 'p.timeframe_end_type', 'p.timeframe_end_value', ...timeframeDates('p'),
      IS_OUTDATED.as('is_outdated'),
      accessLevel(eb.table('p'), eb.table('me')).as('level'),
      jsonArrayFrom(eb.selectFrom('project_contributors as c')
        .innerJoin('people as cp', 'cp.id', 'c.person_id')
        .whereRef('c.project_id', '=', 'p.id')
        .where('cp.suspended_at', 'is', null)
        .select((eb) => [
          'c.id', 'c.role', 'c.responsibility', contributorLevel(eb.table('c')).as('access_level'),
          person(eb, 'c.person_id').$notNull().as('person'),
          eb.exists(eb.selectFrom('subscription_lists as sl')
            .innerJoin('subscriptions as sub', 'sub.subscription_list_id', 'sl.id')
            .select(sql.lit(1).as('one'))
            .whereRef('sl.project_id', '=', 'p.id')
            .whereRef('sub.person_id', '=', 'c.person_id')
            .where('sub.canceled', '=', false)).as('is_subscribed')
        ])
        .orderBy(sql`CASE c.role WHEN 'champion' THEN 0 WHEN 'reviewer' THEN 1 ELSE 2 END`)
        .orderBy('cp.full_name').orderBy('c.id')).as('contributors'),
      jsonObjectFrom(eb.selectFrom('goals as g')
        .whereRef('g.id', '=', 'p.goal_id')
        .select(['g.id', 'g.name', 'g.status', 'g.closed_at', 'g.archived_at', 'g.inserted_at', 'g.updated_at',
          'g.timeframe_start_type', 'g.timeframe_start_value', 'g.timeframe_end_type', 'g.timeframe_end_value', ...timeframeDates('g')])).as('goal'),
      jsonArrayFrom(eb.selectFrom('project_key_resources as kr')
        .whereRef('kr.project_id', '=', 'p.id')
        .select(['kr.id', 'kr.title', 'kr.link', 'kr.resource_type'])
        .orderBy('kr.inserted_at').orderBy('kr.id')).as('key_resources'),
      jsonObjectFrom(eb.selectFrom('project_check_ins as ci')
        .whereRef('ci.project_id', '=', 'p.id')
        .select((eb) => ['ci.id', 'ci.status', 'ci.description', 'ci.inserted_at', 'ci.acknowledged_at',
          person(eb, 'ci.author_id').$notNull().as('author'), person(eb, 'ci.acknowledged_by_id').as('acknowledged_by')])
        .orderBy('ci.inserted_at', 'desc').orderBy('ci.id', 'desc')
        .limit(1)).as('last_check_in'),
      jsonArrayFrom(eb.selectFrom('project_milestones as m')
        .whereRef('m.project_id', '=', 'p.id')
        .select(['m.id', 'm.title', 'm.status', 'm.description', sql<string | null>`m.due_date::text`.as('due_date'), 'm.completed_at', 'm.inserted_at'])
        .orderBy(sql`array_position(p.milestones_ordering_state, m.id) NULLS LAST`)
        .orderBy(sql`m.due_date NULLS LAST`).orderBy('m.inserted_at').orderBy('m.id')).as('milestones'),
      sql<string[]>`ARRAY(SELECT o.id FROM unnest(p.milestones_ordering_state) WITH ORDINALITY AS o(id, n)
        WHERE EXISTS (SELECT 1 FROM project_milestones m WHERE m.id = o.id AND m.project_id = p.id)
        ORDER BY o.n)`.as('milestones_ordering_state'),
      jsonObjectFrom(eb.selectFrom('subscription_lists as sl')
        .whereRef('sl.project_id', '=', 'p.id')
        .select((eb) => ['sl.id', 'sl.send_to_everyone',
          jsonArrayFrom(eb.selectFrom('subscriptions as sub')
            .whereRef('sub.subscription_list_id', '=', 'sl.id')
            .select((eb) => ['sub.id', 'sub.type', 'sub.canceled', person(eb, 'sub.person_id').$notNull().as('person')])
            .orderBy('sub.inserted_at').orderBy('sub.id')).as('subscriptions')])).as('subscription_list'),
      jsonObjectFrom(eb.selectFrom('project_retrospectives as r')
        .whereRef('r.project_id', '=', 'p.id')
        .select((eb) => ['r.id', 'r.content', 'r.closed_at', 'r.success_status', person(eb, 'r.author_id').$notNull().as('author')])).as('retrospective'),
      jsonArrayFrom(eb.selectFrom('project_task_statuses as ts')
        .whereRef('ts.project_id', '=', 'p.id')
        .select(['ts.id', 'ts.label', 'ts.color', 'ts.index', 'ts.value', 'ts.closed'])
        .orderBy('ts.index').orderBy('ts.id')).as('task_statuses'),
      // What is the reader's own.
      eb.exists(eb.selectFrom('project_pins as pin').select(sql.lit(1).as('one'))
        .whereRef('pin.project_id', '=', 'p.id').where('pin.person_id', '=', personId)).as('is_pinned'),
      eb.selectFrom('project_contributors as mine').select('mine.role')
        .whereRef('mine.project_id', '=', 'p.id').where('mine.person_id', '=', personId)
        .limit(1).$asScalar().$castTo<ContributorRole | null>().as('my_role'),
      jsonArrayFrom(eb.selectFrom('notifications as n')
        .whereRef('n.project_id', '=', 'p.id')
        .where('n.person_id', '=', personId)
        .where('n.read', '=', sql.lit(false))
        .select(['n.id', 'n.action', 'n.read', 'n.read_at', 'n.inserted_at'])
        .orderBy('n.inserted_at', 'desc').orderBy('n.id')).as('notifications')
    ])
}

export type ProjectRow = NonNullable<Awaited<ReturnType<ReturnType<typeof projectSelection>['executeTakeFirst']>>>

const projectById = statement(['projectId', 'personId'], (db, { projectId, personId }: { projectId: string, personId: string }) =>
  projectSelection(db, personId).where('p.id', '=', projectId))

const projectsByIds = statement(['ids', 'personId'], (db, { ids, personId }: { ids: readonly string[], personId: string }) =>
  projectSelection(db, personId).where(sql<boolean>`p.id = any(${ids}::uuid[])`).orderBy('p.name').orderBy('p.id'))

/** The project as `personId` sees it, or null when it does not exist or they cannot see it. */
export async function findProject (db: Queryable, projectId: string, personId: string): Promise<ProjectRow | null> {
  const [row] = await projectById(db, { projectId, personId })
  return row !== undefined && row.level >= ACCESS.view ? row : null
}

export interface ProjectFilters {
  /** Only projects where the person holds one of these roles; null for any. */
  roles: ContributorRole[] | null
  spaceId: string | null
  goalId: string | null
  includeArchived: boolean
}

/**
 * Up to `limit` projects `personId` can see, by name then id, after `after`, and
 * whether more follow: the page's ids, then their Projects (two statements; as one,
 * PostgreSQL built every visible project before sorting them). Candidates come from where access can come from (the
 * person's company, their spaces, their contributions, public projects), each with
 * its index, so a page never judges every project of every company.
 */
export async function listProjects (db: Queryable, personId: string, filters: ProjectFilters,
  page: { after: { name: string, id: string } | null, limit: number }): Promise<{ rows: ProjectRow[], more: boolean }> {
  // The page's ids first, by name then id: the whole Project is built for them alone.
  const ids = await db.selectFrom('projects as p')
    .innerJoin('people as me', (join) => join.on('me.id', '=', personId))
    .where('p.id', 'in', (eb) => eb.selectFrom('projects as cp').select('cp.id')
      .where('cp.company_id', '=', (eb) => eb.selectFrom('people as cm').select('cm.company_id').where('cm.id', '=', personId))
      .union(eb.selectFrom('projects as cp').select('cp.id').where('cp.public_access', '>', sql.lit(0)))
      .union(eb.selectFrom('space_members as cs').innerJoin('projects as cp', 'cp.space_id', 'cs.space_id').select('cp.id').where('cs.person_id', '=', personId))
      .union(eb.selectFrom('project_contributors as cc').select('cc.project_id as id').where('cc.person_id', '=', personId)))
    .where((eb) => hasAccess(eb.table('p'), eb.table('me'), ACCESS.view))
    .$if(!filters.includeArchived, (qb) => qb.where('p.archived_at', 'is', null))
    .$if(filters.spaceId !== null, (qb) => qb.where('p.space_id', '=', filters.spaceId!))
    .$if(filters.goalId !== null, (qb) => qb.where('p.goal_id', '=', filters.goalId!))
    .$if(filters.roles !== null, (qb) => qb.where((eb) => eb.exists(eb.selectFrom('project_contributors as r')
      .select(sql.lit(1).as('one'))
      .whereRef('r.project_id', '=', 'p.id')
      .where('r.person_id', '=', personId)
      .where('r.role', 'in', filters.roles!))))
    .$if(page.after !== null, (qb) => qb.where(sql<boolean>`(p.name, p.id) > (${page.after!.name}, ${page.after!.id}::uuid)`))
    .select('p.id')
    .orderBy('p.name').orderBy('p.id')
    .limit(page.limit + 1)
    .execute()
  const more = ids.length > page.limit
  const wanted = ids.slice(0, page.limit).map((row) => row.id)
  if (wanted.length === 0) return { rows: [], more }
  const rows = await projectsByIds(db, { ids: wanted, personId })
  // One hidden from the person between the two statements is left out.
  return { rows: rows.filter((row) => row.level >= ACCESS.view), more }
}
