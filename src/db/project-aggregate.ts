// The Project object of the external API, assembled in one query with Postgres
// JSON aggregation and shaped for the person who asks: the project's own columns,
// its children as kept built in project_children, and the person's own part. One selection serves
// projects/get (reading the projects table) and the mutations (reading the row
// their own statement has just written); both answer its entity tag too.
import { expressionBuilder, sql, type AliasableExpression, type AliasedExpression, type AliasedRawBuilder, type Expression, type Kysely, type RawBuilder, type Selectable } from 'kysely'
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres'
import { ACCESS, accessLevel, contributorLevel } from './access.js'
import { value } from './prepared.js'
import { prepareForCaller, runAs, type Actor } from './caller.js'
import { fenced, projectTag } from './project-etag.js'
import type { ContributorRole, Database, PersonJson, ProjectChildrenTable, ProjectsTable, SubscriptionListsTable, SubscriptionsTable } from './types.js'

/** The columns of a person as the aggregate nests them. */
const PERSON_COLUMNS = ['id', 'full_name', 'email', 'title', 'avatar_url', 'type'] as const

/** A person as the aggregate nests them (JSON: no Date columns). */
export type PersonRow = PersonJson

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

// The project's timeframe. Dates leave Postgres as text: a Date would shift them
// by the process time zone.
const TIMEFRAME_COLUMNS = [
  'p.timeframe_start_type', 'p.timeframe_start_value', sql<string | null>`p.timeframe_start_date::text`.as('timeframe_start_date'),
  'p.timeframe_end_type', 'p.timeframe_end_value', sql<string | null>`p.timeframe_end_date::text`.as('timeframe_end_date')
] as const

/**
 * SPEC part 7's `is_outdated`: an active project whose check-in is overdue by more
 * than 3 days. In SQL, so that it is judged by the clock the row was read against.
 */
export const isOutdated = sql<boolean>`p.state = 'active' AND p.next_check_in_scheduled_at < now() - interval '3 days'`

/**
 * What the part of a project's aggregate that every reader shares (all but
 * PERSONAL_COLUMNS) is made from, as text: the project's id, the versions of its
 * row and of its kept children (xmin, the transaction that wrote each; every
 * change writes a new one) and whether the clock makes it outdated, the one
 * input that is not a column. The same version is the same shared text, so a
 * server that holds the project written at it needs only the reader's part.
 * `p` is a projects row, `rowXmin` its xmin.
 */
export function sharedVersion (rowXmin: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`p.id::text || ' ' || ${rowXmin}::text || ' ' ||
  (SELECT kc.xmin::text FROM project_children kc WHERE kc.project_id = p.id) ||
  CASE WHEN ${isOutdated} THEN ' outdated' ELSE '' END`
}

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
 * Subscription lists (alias `sl`) and subscriptions (alias `sub`) as a statement
 * sees them after its own writes: CTEs of the tables' columns that add what the
 * statement has just written, which neither its snapshot nor the project's kept
 * children (project_children, refreshed when the statement ends) have yet.
 */
export interface SubscriptionSources {
  lists: AliasedRawBuilder<Selectable<SubscriptionListsTable>, 'sl'>
  subscriptions: AliasedRawBuilder<Selectable<SubscriptionsTable>, 'sub'>
  /**
   * Whether the statement wrote a list or a subscription. When it wrote none, the
   * contributors and the subscription list are those already built (kept in
   * project_children, or read by the statement before its change), and are taken
   * from there instead of being built again.
   */
  changed: Expression<boolean>
}

/**
 * Subscription sources named `lists` and `subscriptions`: CTEs of the tables' columns
 * and of what the statement wrote, which `newLists` and `newSubscriptions` (CTEs of
 * its INSERTs) hold.
 */
export function subscriptionSources (lists: string, subscriptions: string, newLists: string, newSubscriptions: string): SubscriptionSources {
  return {
    lists: sql<Selectable<SubscriptionListsTable>>`${sql.table(lists)}`.as('sl'),
    subscriptions: sql<Selectable<SubscriptionsTable>>`${sql.table(subscriptions)}`.as('sub'),
    changed: sql<boolean>`(EXISTS (SELECT 1 FROM ${sql.table(newLists)}) OR EXISTS (SELECT 1 FROM ${sql.table(newSubscriptions)}))`
  }
}

/** The children a project keeps built (project_children), in the aggregate's order. */
export const KEPT_COLUMNS = [
  'contributors', 'goal', 'key_resources', 'last_check_in', 'milestones', 'milestones_ordering_state', 'subscription_list',
  'retrospective', 'task_statuses'
] as const satisfies ReadonlyArray<keyof ProjectChildrenTable>

export type KeptColumn = typeof KEPT_COLUMNS[number]

/** The aggregate's columns before the kept children's: the project's own, and its space's name. */
export const OWN_COLUMNS = [
  'id', 'name', 'description', 'goal_id', 'space_id', 'space_name', 'public_access', 'company_access', 'space_access',
  'archived_at', 'closed_at', 'inserted_at', 'updated_at', 'next_check_in_scheduled_at', 'next_update_scheduled_at',
  'state', 'success_status', 'tasks_kanban_state', 'timeframe_start_type', 'timeframe_start_value', 'timeframe_start_date',
  'timeframe_end_type', 'timeframe_end_value', 'timeframe_end_date', 'is_outdated'
] as const

/**
 * The aggregate's columns that depend on who reads the project, its last three: in
 * its JSON text, everything before `,"is_pinned":` is the same for every reader.
 */
export const PERSONAL_COLUMNS = ['is_pinned', 'my_role', 'notifications'] as const

/**
 * The aggregate's columns that its child rows and the reader make: everything but
 * the project's own columns. They hang on the row's id, space, goal and order of
 * milestones, which neither mutation changes, so a statement that has read them
 * for the row before its change can reuse them for the row after it.
 */
export const CHILD_COLUMNS = ['space_name', ...KEPT_COLUMNS, ...PERSONAL_COLUMNS] as const

export type ChildColumn = typeof CHILD_COLUMNS[number]

/**
 * Child columns already read in the statement, in the one row of its FROM item
 * `row` (named as the aggregate names them), for the same project and person:
 * the aggregate takes them from there instead, but those of `except` (which what
 * the statement wrote has changed).
 */
export interface BuiltChildren {
  row: string
  except?: readonly ChildColumn[]
}

/**
 * How the aggregate reads what is not the project's own: `written`, the
 * subscriptions as the statement has changed them, from which contributors (who is
 * subscribed) and the subscription list are built instead of kept ones when it has
 * changed them; `built`,
 * children the statement has already read.
 */
export interface AggregateSources {
  written?: SubscriptionSources
  built?: BuiltChildren
}

/**
 * The whole aggregate of the project row in `source`, for this person, minus the
 * access level (each caller knows it already). The project's own columns come
 * from `source`, so a mutation can pass the row it has just written; its children
 * as kept built in project_children, in the statement's snapshot; what depends on
 * the person (pinned, their role, their unread notifications) is read here. The
 * columns' order is the tag's (db/project-etag.ts): every way of reading the
 * aggregate gives the same row.
 */
export function projectAggregate (db: Kysely<Database>, source: ProjectSource, personId: Expression<string>, { written, built }: AggregateSources = {}) {
  const fresh: readonly ChildColumn[] = written === undefined ? [] : ['contributors', 'subscription_list']
  const reused = (name: ChildColumn) => built !== undefined && built.except?.includes(name) !== true && !fresh.includes(name)
  // The kept row is joined when some column is taken from it.
  const readsKept = (['space_name', ...KEPT_COLUMNS] as const).some((name) => !reused(name) && !fresh.includes(name))
  const from = built === undefined
    ? db.selectFrom(source)
    : db.selectFrom(source).innerJoin(sql`${sql.table(built.row)}`.as('built'), (join) => join.onTrue())
  const withKept = readsKept ? from.innerJoin('project_children as pc', 'pc.project_id', 'p.id') : from
  const child = <N extends ChildColumn, T> (name: N, read: () => AliasableExpression<T>): AliasedExpression<T, N> =>
    reused(name) ? sql<T>`${sql.ref(`built.${name}`)}`.as(name) : read().as(name)
  const kept = <N extends ChildColumn & keyof ProjectChildrenTable> (name: N) =>
    child(name, () => sql<ProjectChildrenTable[N]>`${sql.ref(`pc.${name}`)}`)
  // A column that subscriptions make: kept, for a statement that cannot write any (a
  // rename); else built from what the statement wrote when it wrote some, and taken
  // as already built when it wrote none (the same text: see contributorsFrom). CASE
  // evaluates only the branch it takes, so an unchanged list is never built again.
  const fromWritten = <N extends 'contributors' | 'subscription_list'> (name: N, build: (sources: SubscriptionSources) => RawBuilder<ProjectChildrenTable[N]>) =>
    written === undefined
      ? kept(name)
      : sql<ProjectChildrenTable[N]>`CASE WHEN ${written.changed} THEN ${build(written)} ELSE ${sql.ref(`${built === undefined ? 'pc' : 'built'}.${name}`)} END`.as(name)
  return withKept
    .select((eb) => [
      'p.id', 'p.name', 'p.description', 'p.goal_id', 'p.space_id',
      kept('space_name'),
      'p.public_access', 'p.company_access', 'p.space_access',
      'p.archived_at', 'p.closed_at', 'p.inserted_at', 'p.updated_at',
      'p.next_check_in_scheduled_at', 'p.next_update_scheduled_at',
      'p.state', 'p.success_status',
      sql<string>`p.tasks_kanban_state::text`.as('tasks_kanban_state'),
      ...TIMEFRAME_COLUMNS,
      isOutdated.as('is_outdated'),
      fromWritten('contributors', contributorsFrom),
      kept('goal'),
      kept('key_resources'),
      kept('last_check_in'),
      kept('milestones'),
      kept('milestones_ordering_state'),

      fromWritten('subscription_list', subscriptionListFrom),
      kept('retrospective'),
      kept('task_statuses'),

      // The person's own part last (PERSONAL_COLUMNS): the text before it is the
      // same for everyone who reads the project (presenters/project.ts keeps the
      // answer's bytes by it).
      child('is_pinned', () => eb.exists(eb.selectFrom('project_pins as pin').select(sql.lit(1).as('one'))
        .whereRef('pin.project_id', '=', 'p.id').where('pin.person_id', '=', personId))),
      child('my_role', () => eb.selectFrom('project_contributors as c').select('c.role')
        .whereRef('c.project_id', '=', 'p.id').where('c.person_id', '=', personId).$asScalar().$castTo<ContributorRole | null>()),
      child('notifications', () => jsonArrayFrom(eb.selectFrom('notifications as n')
        .whereRef('n.project_id', '=', 'p.id')
        .where('n.person_id', '=', personId)
        // A literal, not a parameter: any plan, generic ones too, can then use the
        // partial index of unread notifications.
        .where('n.read', '=', sql.lit(false))
        .select(['n.id', 'n.action', 'n.read', 'n.read_at', 'n.inserted_at'])
        .orderBy('n.inserted_at', 'desc').orderBy('n.id')))
    ])
}

/**
 * The project's contributors (aliased `p`), built as project_children keeps them
 * (the migration's project_children_of: the two must write the same text), with
 * who is subscribed read from `subscriptions`. A description change answers with
 * these and the kept row then has the migration's: the tests that its answer and
 * tag are those of a later read (test/routes/projects/conditional.test.ts) compare
 * the two.
 */
function contributorsFrom (subscriptions: SubscriptionSources): RawBuilder<ProjectChildrenTable['contributors']> {
  const eb = expressionBuilder<Database & { p: ProjectRow }, 'p'>()
  return jsonArrayFrom(eb.selectFrom('project_contributors as c')
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
        .where('sub.canceled', '=', sql.lit(false))).as('is_subscribed')
    ])
    .orderBy(sql`CASE c.role WHEN 'champion' THEN 0 WHEN 'reviewer' THEN 1 ELSE 2 END`)
    .orderBy('cp.full_name').orderBy('c.id')) as RawBuilder<ProjectChildrenTable['contributors']>
}

/** The project's (aliased `p`) subscription list, built as project_children keeps it (as contributorsFrom), from `subscriptions`. */
function subscriptionListFrom (subscriptions: SubscriptionSources): RawBuilder<ProjectChildrenTable['subscription_list']> {
  const eb = expressionBuilder<Database & { p: ProjectRow }, 'p'>()
  return jsonObjectFrom(eb.selectFrom(subscriptions.lists)
    .whereRef('sl.project_id', '=', 'p.id')
    .select((eb) => [
      'sl.id', 'sl.send_to_everyone',
      jsonArrayFrom(eb.selectFrom(subscriptions.subscriptions)
        .whereRef('sub.subscription_list_id', '=', 'sl.id')
        .select((eb) => ['sub.id', 'sub.type', 'sub.canceled', person(eb.ref('sub.person_id')).$notNull().as('person')])
        .orderBy('sub.inserted_at').orderBy('sub.id')).as('subscriptions')
    ])) as RawBuilder<ProjectChildrenTable['subscription_list']>
}

export type AggregateRow = NonNullable<Awaited<ReturnType<ReturnType<typeof projectAggregate>['executeTakeFirst']>>>

// The access level first, from the row alone; the aggregate only for a person who
// may see the project, fenced so that the answer and its tag share one computation.
// One row whenever the caller is valid: the aggregate is null when there is no
// project they can see.
// A project at a version the server says it holds (`known`, sharedVersion) comes
// back as its reader's part only, as on a page of projects/list; its tag is the
// whole row's all the same.
const FIND_PROJECT = prepareForCaller('read', { projectId: value<string>(), known: value<string[]>() }, (withCaller, { projectId, known }, db) => withCaller
  .selectFrom('caller')
  .innerJoin('people as me', 'me.id', 'caller.person_id')
  .leftJoinLateral((eb) => fenced(eb.selectFrom('projects as p')
    .where('p.id', '=', projectId)
    .select((eb) => [accessLevel(eb.table('p'), eb.table('me')).as('level'), sharedVersion(sql`p.xmin`).as('version')]))
    .as('acc'), (join) => join.onTrue())
  .leftJoinLateral(versionHeld(sql<string | null>`acc.version`, known).as('held'), (join) => join.onTrue())
  .leftJoinLateral(fenced(projectAggregate(db, PROJECTS, sql<string>`me.id`)
    .where('p.id', '=', projectId)
    .where(sql<boolean>`acc.level >= ${sql.lit(ACCESS.view)}`)).as('project'), (join) => join.onTrue())
  .select((eb) => ['acc.level', 'held.version', sql<boolean>`coalesce(held.kept, false)`.as('kept'), projectTag('project', eb.ref('acc.level')).as('etag'),
    projectText('project', sql<boolean>`held.kept`).as('aggregate')]))

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

/** A read project that may have come back as its reader's part alone. */
export interface VersionedProject extends ProjectText {
  /** What its shared part is made from (sharedVersion); null when the statement could not tell. */
  version: string | null
  /** Whether it was at a version the server said it holds: then `aggregate` is the reader's part alone. */
  kept: boolean
}

/** A project as projects/get reads it, with its entity tag. */
export interface FoundProject extends VersionedProject {
  etag: string
}

/**
 * The whole FROM item `row` (an aggregate) as JSON text: the driver leaves text
 * unparsed, so a read whose answer is already written never parses it.
 */
export function aggregateText (row: string): RawBuilder<string | null> {
  return sql<string | null>`to_json(${sql.table(row)})::text`
}

/**
 * The version of the kept children the aggregate `row` was made from, unless
 * `built` (the statement built some of them itself): its project's id and the xmin
 * of its project_children row in the statement's snapshot, the last part of
 * sharedVersion (childrenVersionOf). The same version is the same children's text.
 */
function childrenVersion (row: string, built?: Expression<boolean>): RawBuilder<string | null> {
  const version = projectChildrenVersion(sql.ref(`${row}.id`))
  return built === undefined ? version : sql<string | null>`CASE WHEN ${built} THEN NULL ELSE ${version} END`
}

/** The version of the kept children of the project whose id is `projectId`, as they are in the statement's snapshot (childrenVersion). */
export function projectChildrenVersion (projectId: Expression<string>): RawBuilder<string | null> {
  return sql<string | null>`(SELECT ${projectId}::text || ' ' || kc.xmin::text FROM project_children kc WHERE kc.project_id = ${projectId})`
}

/** The version of a project's kept children within its version (sharedVersion), or null. */
export function childrenVersionOf (version: string | null): string | null {
  const [id, , children] = version?.split(' ') ?? []
  return id === undefined || children === undefined ? null : `${id} ${children}`
}

/**
 * The version of a changed project's kept children (childrenVersion, for its
 * aggregate `row`), and whether the server holds them written at it (`known`):
 * then the change's answer leaves them out (changedProjectColumns), and has the
 * project's own columns and the reader's, in the aggregate's order, which
 * presenters/project.ts writes around the children it holds.
 */
export function childrenHeld (row: string, known: Expression<string[]>, built?: Expression<boolean>): RawBuilder<VersionHeld> {
  return versionHeld(childrenVersion(row, built), known)
}

/** A version, and whether the server said it holds what is written at it. */
export interface VersionHeld {
  version: string | null
  kept: boolean
}

/**
 * A FROM item of one row: `version`, computed once, and `kept`, whether it is one
 * of `known` (the versions the server says it holds written). Fenced (OFFSET 0):
 * inlined, each reference to the version would compute it again.
 */
export function versionHeld (version: Expression<string | null>, known: Expression<string[]>): RawBuilder<VersionHeld> {
  return sql`(SELECT v.version, coalesce(v.version = ANY(${known}::text[]), false) AS kept
    FROM (SELECT ${version} AS version OFFSET 0) v)`
}

/**
 * The columns a change's statement answers for its aggregate `row`, with
 * childrenHeld's FROM item `held`: the aggregate as text, without its children
 * when held; their version; whether they were left out.
 */
export function changedProjectColumns (row: string, held: string) {
  const rest = sql.join([...OWN_COLUMNS, ...PERSONAL_COLUMNS].map((column) => sql.ref(`${row}.${column}`)))
  return [
    sql<string | null>`CASE WHEN ${sql.ref(`${row}.id`)} IS NULL THEN NULL
      WHEN ${sql.ref(`${held}.kept`)} THEN (SELECT to_json(r)::text FROM (SELECT ${rest}) r)
      ELSE ${aggregateText(row)} END`.as('aggregate'),
    sql<string | null>`${sql.ref(`${held}.version`)}`.as('children_version'),
    sql<boolean>`coalesce(${sql.ref(`${held}.kept`)}, false)`.as('children_kept')
  ] as const
}

/** The reader's part of the aggregate `row` (PERSONAL_COLUMNS) as JSON text: `{"is_pinned":…,"my_role":…,"notifications":…}`. */
function readerText (row: string): RawBuilder<string> {
  return sql<string>`json_build_object(${sql.join(PERSONAL_COLUMNS.map((column) =>
    sql`${sql.lit(column)}::text, ${sql.ref(`${row}.${column}`)}`))})::text`
}

/**
 * The aggregate `row` as text: its reader's part alone when `kept` holds (the
 * server holds the rest written), else the whole; null when there is no row. CASE
 * evaluates only the branch it takes.
 */
export function projectText (row: string, kept: Expression<boolean>): RawBuilder<string | null> {
  return sql<string | null>`CASE WHEN ${sql.ref(`${row}.id`)} IS NULL THEN NULL
        WHEN ${kept} THEN ${readerText(row)}
        ELSE ${aggregateText(row)} END`
}

/** The aggregate of a read project, parsed. */
export function parseProject (project: ProjectText): ProjectView {
  return { ...JSON.parse(project.aggregate) as AsJson<AggregateRow>, level: project.level }
}

/** What of a read project is the reader's own: PERSONAL_COLUMNS and the access level. */
export type ReaderPart = Pick<ProjectView, typeof PERSONAL_COLUMNS[number] | 'level'>

/**
 * A read project's text cut where the reader's own part begins: `shared`, the same
 * for everyone who reads the project (the aggregate's columns before
 * PERSONAL_COLUMNS, its last), and `reader`, the rest, parsed. Null if the text
 * is not an aggregate's.
 */
export function cutProject (project: ProjectText): { shared: string, reader: () => ReaderPart } | null {
  // PostgreSQL writes a row's columns as `{"name":value,…}` in their order, and
  // every quote inside a string as `\"`: the last `,"is_pinned":` is the column's.
  const at = project.aggregate.lastIndexOf(READER_START)
  if (at < 0) return null
  return {
    shared: project.aggregate.slice(0, at),
    reader: () => readerPart({ level: project.level, aggregate: `{${project.aggregate.slice(at + 1)}` })
  }
}

/** The reader's part of a read project whose text is that part alone, `{"is_pinned":…,"my_role":…,"notifications":…}`, parsed. */
export function readerPart (project: ProjectText): ReaderPart {
  return { ...JSON.parse(project.aggregate) as Omit<ReaderPart, 'level'>, level: project.level }
}

const READER_START = `,"${PERSONAL_COLUMNS[0]}":`

const CHILDREN_START = `,"${KEPT_COLUMNS[0]}":`

/**
 * A read project's text cut around its children's columns (KEPT_COLUMNS, between
 * the project's own and the reader's): `children`, their text, and `rest`, the
 * other columns, parsed. Null if the text is not an aggregate's.
 */
export function cutChildren (project: ProjectText): { children: string, rest: () => Omit<ProjectView, KeptColumn> } | null {
  // As in cutProject: `,"` is never inside a string, and the first column with a
  // nested value is the first child's, so its key is the first `,"contributors":`.
  const text = project.aggregate
  const start = text.indexOf(CHILDREN_START)
  const end = text.lastIndexOf(READER_START)
  if (start < 0 || end < start) return null
  return {
    children: text.slice(start, end),
    rest: () => ({ ...JSON.parse(text.slice(0, start) + text.slice(end)) as Omit<AsJson<AggregateRow>, KeptColumn>, level: project.level })
  }
}

/**
 * The project as the caller sees it (db/caller.ts), or null when it does not exist
 * or they cannot see it. The token's check is this statement's: NoCaller when it fails.
 */
export async function findProject (db: Kysely<Database>, projectId: string, actor: Actor | string, known: readonly string[] = []): Promise<FoundProject | null> {
  const [row] = await runAs(db, FIND_PROJECT, typeof actor === 'string' ? { personId: actor } : actor, { projectId, known: [...known] })
  if (row === undefined || row.aggregate === null || row.level === null || row.etag === null) return null
  return { etag: row.etag, level: row.level, aggregate: row.aggregate, version: row.version, kept: row.kept === true }
}
