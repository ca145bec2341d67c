// The Project object of the external API, assembled in one query with Postgres
// JSON aggregation and shaped for the person who asks. One selection serves
// projects/get (reading the projects table) and the mutations (reading the row
// their own statement has just written); both answer its entity tag too.
import { expressionBuilder, sql, type AliasableExpression, type AliasedExpression, type AliasedRawBuilder, type Expression, type Kysely, type RawBuilder, type Selectable } from 'kysely'
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres'
import { ACCESS, accessLevel, contributorLevel } from './access.js'
import { value } from './prepared.js'
import { prepareForCaller, runAs, type Actor } from './caller.js'
import { fenced, projectTag } from './project-etag.js'
import type { ContributorRole, Database, PeopleTable, ProjectsTable, SubscriptionListsTable, SubscriptionsTable } from './types.js'

/** The columns of a person as the aggregate nests them. */
const PERSON_COLUMNS = ['id', 'full_name', 'email', 'title', 'avatar_url', 'type'] as const

/** A person as the aggregate nests them (JSON: no Date columns). */
export type PersonRow = Pick<Selectable<PeopleTable>, typeof PERSON_COLUMNS[number]>

/** The person whose id `id` holds, as a JSON object. */
function person (id: Expression<string | null>): RawBuilder<PersonRow | null> {
  return jsonObjectFrom(expressionBuilder<Database>().selectFrom('people as pe')
    .select(PERSON_COLUMNS.map((column) => `pe.${column}` as const))
    .where('pe.id', '=', id))
}

/** The row of people joined as `alias`, as the same JSON object as person() makes, without looking it up again. */
function joinedPerson (alias: string): RawBuilder<PersonRow> {
  return sql<PersonRow>`(SELECT to_json(obj) FROM (SELECT ${sql.join(PERSON_COLUMNS.map((column) => sql.ref(`${alias}.${column}`)))}) AS obj)`
}

// Dates leave Postgres as text: a Date would shift them by the process time zone.
function timeframeColumns<A extends 'p' | 'g'> (alias: A) {
  return [
    `${alias}.timeframe_start_type` as `${A}.timeframe_start_type`,
    `${alias}.timeframe_start_value` as `${A}.timeframe_start_value`,
    sql<string | null>`${sql.ref(`${alias}.timeframe_start_date`)}::text`.as('timeframe_start_date'),
    `${alias}.timeframe_end_type` as `${A}.timeframe_end_type`,
    `${alias}.timeframe_end_value` as `${A}.timeframe_end_value`,
    sql<string | null>`${sql.ref(`${alias}.timeframe_end_date`)}::text`.as('timeframe_end_date')
  ] as const
}

/**
 * SPEC part 7's `is_outdated`: an active project whose check-in is overdue by more
 * than 3 days. In SQL, so that it is judged by the clock the row was read against.
 */
const isOutdated = sql<boolean>`p.state = 'active' AND p.next_check_in_scheduled_at < now() - interval '3 days'`

/** A project row, read by the aggregate from the table or from a CTE of the same shape. */
type ProjectRow = Selectable<ProjectsTable>

/** Where the aggregate reads the project's own columns, always aliased `p`. */
export type ProjectSource = AliasedRawBuilder<ProjectRow, 'p'>

/** `name` must be the projects table or a CTE that selects all of its columns. */
export function projectSource (name: string): ProjectSource {
  return sql<ProjectRow>`${sql.table(name)}`.as('p')
}

const PROJECTS = projectSource('projects')

/**
 * Where the aggregate reads subscription lists (alias `sl`) and subscriptions
 * (alias `sub`): the tables, or CTEs of the same columns that add what the
 * aggregate's own statement has just written (which its snapshot cannot see).
 */
export interface SubscriptionSources {
  lists: AliasedRawBuilder<Selectable<SubscriptionListsTable>, 'sl'>
  subscriptions: AliasedRawBuilder<Selectable<SubscriptionsTable>, 'sub'>
}

/** Subscription sources named `lists` and `subscriptions`: the tables or CTEs of their columns. */
export function subscriptionSources (lists: string, subscriptions: string): SubscriptionSources {
  return {
    lists: sql<Selectable<SubscriptionListsTable>>`${sql.table(lists)}`.as('sl'),
    subscriptions: sql<Selectable<SubscriptionsTable>>`${sql.table(subscriptions)}`.as('sub')
  }
}

/** The aggregate's subscriptions read from their tables. */
export const SUBSCRIPTION_TABLES = subscriptionSources('subscription_lists', 'subscriptions')

/**
 * The aggregate's columns that its child rows and the reader make: everything but
 * the project's own columns. They hang on the row's id, space, goal and order of
 * milestones, which neither mutation changes, so a statement that has built them
 * for the row before its change can reuse them for the row after it.
 */
export const CHILD_COLUMNS = [
  'space_name', 'is_pinned', 'my_role', 'contributors', 'goal', 'key_resources', 'last_check_in',
  'milestones', 'milestones_ordering_state', 'notifications', 'subscription_list', 'retrospective', 'task_statuses'
] as const

export type ChildColumn = typeof CHILD_COLUMNS[number]

/**
 * Child columns already built in the statement, in the one row of its FROM item
 * `row` (named as the aggregate names them), for the same project and person:
 * the aggregate takes them from there instead of building them again, but those
 * of `except` (which what the statement wrote has changed).
 */
export interface BuiltChildren {
  row: string
  except?: readonly ChildColumn[]
}

/**
 * The whole aggregate of the project row in `source`, for this person, minus the
 * access level (each caller knows it already). Child rows come from the statement's
 * snapshot; the project's own columns from `source`, so a mutation can pass the row
 * it has just written. The columns' order is the tag's (db/project-etag.ts): every
 * way of building the aggregate gives the same row.
 */
export function projectAggregate (db: Kysely<Database>, source: ProjectSource, personId: Expression<string>,
  subscriptions: SubscriptionSources = SUBSCRIPTION_TABLES, built?: BuiltChildren) {
  const from = built === undefined
    ? db.selectFrom(source)
    : db.selectFrom(source).innerJoin(sql`${sql.table(built.row)}`.as('built'), (join) => join.onTrue())
  const child = <N extends ChildColumn, T> (name: N, build: () => AliasableExpression<T>): AliasedExpression<T, N> =>
    built !== undefined && built.except?.includes(name) !== true
      ? sql<T>`${sql.ref(`built.${name}`)}`.as(name)
      : build().as(name)
  return from
    .select((eb) => [
      'p.id', 'p.name', 'p.description', 'p.goal_id', 'p.space_id',
      // A subquery, not a join: joining spaces to a mutation's CTE row, the planner
      // chose to scan every space.
      child('space_name', () => eb.selectFrom('spaces as s').select('s.name').whereRef('s.id', '=', 'p.space_id').$asScalar().$notNull()),
      'p.public_access', 'p.company_access', 'p.space_access',
      'p.archived_at', 'p.closed_at', 'p.inserted_at', 'p.updated_at',
      'p.next_check_in_scheduled_at', 'p.next_update_scheduled_at',
      'p.state', 'p.success_status',
      sql<string>`p.tasks_kanban_state::text`.as('tasks_kanban_state'),
      ...timeframeColumns('p'),
      isOutdated.as('is_outdated'),
      child('is_pinned', () => eb.exists(eb.selectFrom('project_pins as pin').select(sql.lit(1).as('one'))
        .whereRef('pin.project_id', '=', 'p.id').where('pin.person_id', '=', personId))),
      child('my_role', () => eb.selectFrom('project_contributors as c').select('c.role')
        .whereRef('c.project_id', '=', 'p.id').where('c.person_id', '=', personId).$asScalar().$castTo<ContributorRole | null>()),

      child('contributors', () => jsonArrayFrom(eb.selectFrom('project_contributors as c')
        .innerJoin('people as cp', 'cp.id', 'c.person_id')
        .whereRef('c.project_id', '=', 'p.id')
        .where('cp.suspended_at', 'is', null)
        .select((eb) => [
          'c.id', 'c.role', 'c.responsibility', contributorLevel(eb.table('c')).as('access_level'),
          joinedPerson('cp').as('person'),
          eb.exists(eb.selectFrom(subscriptions.lists)
            .innerJoin(subscriptions.subscriptions, 'sub.subscription_list_id', 'sl.id')
            .select(sql.lit(1).as('one'))
            .whereRef('sl.project_id', '=', 'p.id')
            .whereRef('sub.person_id', '=', 'c.person_id')
            .where('sub.canceled', '=', false)).as('is_subscribed')
        ])
        .orderBy(sql`CASE c.role WHEN 'champion' THEN 0 WHEN 'reviewer' THEN 1 ELSE 2 END`)
        .orderBy('cp.full_name').orderBy('c.id'))),

      child('goal', () => jsonObjectFrom(eb.selectFrom('goals as g')
        .whereRef('g.id', '=', 'p.goal_id')
        .select(['g.id', 'g.name', 'g.status', 'g.closed_at', 'g.archived_at', 'g.inserted_at', 'g.updated_at', ...timeframeColumns('g')]))),

      child('key_resources', () => jsonArrayFrom(eb.selectFrom('project_key_resources as kr')
        .whereRef('kr.project_id', '=', 'p.id')
        .select(['kr.id', 'kr.title', 'kr.link', 'kr.resource_type'])
        .orderBy('kr.inserted_at').orderBy('kr.id'))),

      child('last_check_in', () => jsonObjectFrom(eb.selectFrom('project_check_ins as ci')
        .whereRef('ci.project_id', '=', 'p.id')
        .select((eb) => [
          'ci.id', 'ci.status', 'ci.description', 'ci.inserted_at', 'ci.acknowledged_at',
          person(eb.ref('ci.author_id')).$notNull().as('author'),
          person(eb.ref('ci.acknowledged_by_id')).as('acknowledged_by')
        ])
        .orderBy('ci.inserted_at', 'desc').orderBy('ci.id', 'desc')
        .limit(1))),

      child('milestones', () => jsonArrayFrom(eb.selectFrom('project_milestones as m')
        .whereRef('m.project_id', '=', 'p.id')
        .select(['m.id', 'm.title', 'm.status', 'm.description', sql<string | null>`m.due_date::text`.as('due_date'), 'm.completed_at', 'm.inserted_at'])
        .orderBy(sql`array_position(p.milestones_ordering_state, m.id)`, (ob) => ob.asc().nullsLast())
        .orderBy('m.due_date', (ob) => ob.asc().nullsLast())
        .orderBy('m.inserted_at').orderBy('m.id'))),

      child('milestones_ordering_state', () => sql<string[]>`to_json(ARRAY(
        SELECT o.id FROM unnest(p.milestones_ordering_state) WITH ORDINALITY AS o(id, n)
        WHERE EXISTS (SELECT 1 FROM project_milestones m WHERE m.id = o.id AND m.project_id = p.id)
        ORDER BY o.n))`),

      child('notifications', () => jsonArrayFrom(eb.selectFrom('notifications as n')
        .whereRef('n.project_id', '=', 'p.id')
        .where('n.person_id', '=', personId)
        // A literal, not a parameter: any plan, generic ones too, can then use the
        // partial index of unread notifications.
        .where('n.read', '=', sql.lit(false))
        .select(['n.id', 'n.action', 'n.read', 'n.read_at', 'n.inserted_at'])
        .orderBy('n.inserted_at', 'desc').orderBy('n.id'))),

      child('subscription_list', () => jsonObjectFrom(eb.selectFrom(subscriptions.lists)
        .whereRef('sl.project_id', '=', 'p.id')
        .select((eb) => [
          'sl.id', 'sl.send_to_everyone',
          jsonArrayFrom(eb.selectFrom(subscriptions.subscriptions)
            .whereRef('sub.subscription_list_id', '=', 'sl.id')
            .select((eb) => ['sub.id', 'sub.type', 'sub.canceled', person(eb.ref('sub.person_id')).$notNull().as('person')])
            .orderBy('sub.inserted_at').orderBy('sub.id')).as('subscriptions')
        ]))),

      child('retrospective', () => jsonObjectFrom(eb.selectFrom('project_retrospectives as r')
        .whereRef('r.project_id', '=', 'p.id')
        .select((eb) => ['r.id', 'r.content', 'r.closed_at', 'r.success_status', person(eb.ref('r.author_id')).$notNull().as('author')]))),

      child('task_statuses', () => jsonArrayFrom(eb.selectFrom('project_task_statuses as ts')
        .whereRef('ts.project_id', '=', 'p.id')
        .select(['ts.id', 'ts.label', 'ts.color', 'ts.index', 'ts.value', 'ts.closed'])
        .orderBy('ts.index').orderBy('ts.id')))
    ])
}

export type AggregateRow = NonNullable<Awaited<ReturnType<ReturnType<typeof projectAggregate>['executeTakeFirst']>>>

// The access level first, from the row alone; the aggregate only for a person who
// may see the project, fenced so that the answer and its tag share one computation.
// One row whenever the caller is valid: the aggregate is null when there is no
// project they can see.
const FIND_PROJECT = prepareForCaller('read', { projectId: value<string>() }, (withCaller, { projectId }, db) => withCaller
  .selectFrom('caller')
  .innerJoin('people as me', 'me.id', 'caller.person_id')
  .leftJoinLateral((eb) => eb.selectFrom('projects as p')
    .where('p.id', '=', projectId)
    .select((eb) => accessLevel(eb.table('p'), eb.table('me')).as('level'))
    .as('acc'), (join) => join.onTrue())
  .leftJoinLateral(fenced(projectAggregate(db, PROJECTS, sql<string>`me.id`)
    .where('p.id', '=', projectId)
    .where(sql<boolean>`acc.level >= ${sql.lit(ACCESS.view)}`)).as('project'), (join) => join.onTrue())
  .select((eb) => ['acc.level', projectTag('project', eb.ref('acc.level')).as('etag'), aggregateText('project').as('aggregate')]))

/**
 * A row's columns as its JSON text has them: timestamps as PostgreSQL writes them
 * in JSON (UTC, `2026-11-24T10:00:00.123456+00:00`), the rest as they are.
 */
type AsJson<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] }

/** The aggregate of a project, parsed from its JSON text, with the access level of the person it was read for. */
export type ProjectView = AsJson<AggregateRow> & { level: number }

/**
 * A read project: the reader's access level and the aggregate as JSON text,
 * parsed (parseProject) only when its answer is not already written
 * (plugins/answers.ts).
 */
export interface ProjectText {
  level: number
  aggregate: string
}

/**
 * The whole FROM item `row` (an aggregate) as JSON text: the driver leaves text
 * unparsed, so a read whose answer is already written never parses it.
 */
export function aggregateText (row: string): RawBuilder<string | null> {
  return sql<string | null>`to_json(${sql.table(row)})::text`
}

/** The aggregate of a read project, parsed. */
export function parseProject (project: ProjectText): ProjectView {
  return { ...JSON.parse(project.aggregate) as AsJson<AggregateRow>, level: project.level }
}

/**
 * The project as the caller sees it (db/caller.ts), or null when it does not exist
 * or they cannot see it. The token's check is this statement's: NoCaller when it fails.
 */
export async function findProject (db: Kysely<Database>, projectId: string, actor: Actor | string): Promise<ProjectText & { etag: string } | null> {
  const [row] = await runAs(db, FIND_PROJECT, typeof actor === 'string' ? { personId: actor } : actor, { projectId })
  if (row === undefined || row.aggregate === null || row.level === null || row.etag === null) return null
  return { etag: row.etag, level: row.level, aggregate: row.aggregate }
}
