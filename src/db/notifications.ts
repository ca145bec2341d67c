// A person's notifications: a page of them, the unread count, and marking them as
// read. Each is one statement, which checks the token too (db/caller.ts). A notification about a project the person can no
// longer see is left out of the list and the count (its project's name could have
// changed since), though it stays theirs to mark.
import { expressionBuilder, sql, type Expression, type Kysely, type Selectable } from 'kysely'
import { jsonArrayFrom } from 'kysely/helpers/postgres'
import { ACCESS, hasAccess, type PersonRef } from './access.js'
import { value } from './prepared.js'
import { versionHeld, type PersonRow } from './project-aggregate.js'
import { CALLER_PERSON, prepareForCaller, runAs, type Actor } from './caller.js'
import { fenced } from './project-etag.js'
import type { Database, ProjectsTable } from './types.js'

/** The project with this id when `person` may view it. */
function visibleProject (projectId: Expression<string | null>, person: PersonRef) {
  return expressionBuilder<Database>().selectFrom('projects as p')
    .select(sql.lit(1).as('one'))
    .where('p.id', '=', projectId)
    .where((eb) => hasAccess(eb.table('p'), person, ACCESS.view))
}

// A notification's project, left-joined as `p`: there whenever the notification
// names one (the foreign key), which is when its access is asked for.
const JOINED_PROJECT = sql<Selectable<ProjectsTable>>`${sql.table('p')}`

// One row whenever the caller is valid, holding the page as one JSON array: a
// hundred rows would each cost the driver a row of its own, dates parsed into
// Date objects and two JSON texts parsed, for an answer that is JSON again. The
// array comes as text, parsed only when no answer was written from it
// (plugins/answers.ts), and not at all when the server says it holds the page
// written at its version (`known`).
//
// Each notification's project and author are looked up by their keys, the author
// only for the notifications of the page: joined as tables, the plan PostgreSQL
// keeps for every person (who may have a few notifications or thousands) read the
// whole of projects and activities into hash tables for each page, a cost that grew
// with every change anyone made. The author is the notification's own author_id,
// its activity's author: the activity itself is not read.
const PAGE_ROWS = (v: { limit: Expression<number>, offset: Expression<number> }) => expressionBuilder<Database>()
  .selectFrom('notifications as n')
  .innerJoin('people as me', 'me.id', 'n.person_id')
  // The project looked up once, for the person's access and for its name.
  .leftJoinLateral((eb) => fenced(eb.selectFrom('projects as np')
    .whereRef('np.id', '=', 'n.project_id')
    .select(['np.id', 'np.name', 'np.company_id', 'np.space_id', 'np.public_access', 'np.company_access', 'np.space_access', sql<string>`np.xmin::text`.as('version')])).as('p'),
  (join) => join.onTrue())
  .where('n.person_id', '=', CALLER_PERSON)
  .where((eb) => eb.or([eb('n.project_id', 'is', null), hasAccess(JOINED_PROJECT, eb.table('me'), ACCESS.view)]))
  .select([
    'n.id', 'n.action', 'n.read', 'n.read_at', 'n.inserted_at', 'n.author_id as notified_by', sql<string>`n.xmin::text`.as('version'),
    'p.id as project_id', 'p.name as project_name', 'p.version as project_version'
  ])
  .orderBy('n.inserted_at', 'desc').orderBy('n.id', 'desc')
  .limit(v.limit).offset(v.offset)

// The version of a page (`page` in scope): each notification's id and the xmin of
// its row, of its project's row and of its author's row, in the page's order,
// digested. A notification marked read, a project renamed or hidden, an author
// renamed, a notification added or gone: the version is another. The same version
// is the same page text, and only the person's own notifications are in it.
const PAGE_VERSION = sql<string | null>`md5(string_agg(page.id::text || ' ' || page.version || ' ' || coalesce(page.project_version, '-') || ' ' ||
  coalesce(page.author_version, '-'), ',' ORDER BY page.inserted_at DESC, page.id DESC))`

const LIST_NOTIFICATIONS = prepareForCaller('read', { limit: value<number>(), offset: value<number>(), known: value<string[]>() }, (withCaller, v) => withCaller
  // The page read once, for its version and, unless the server holds it, its text.
  .with((cte) => cte('page').materialized(), (qb) => qb.selectFrom(PAGE_ROWS(v).as('l'))
    // Fenced, so that each is looked up by its keys, not joined as tables.
    .leftJoinLateral((eb) => fenced(eb.selectFrom('people as pe')
      .whereRef('pe.id', '=', 'l.notified_by')
      .select(['pe.id', 'pe.full_name', 'pe.email', 'pe.title', 'pe.avatar_url', 'pe.type', sql<string>`pe.xmin::text`.as('author_version')])).as('au'),
    (join) => join.onTrue())
    .selectAll('l')
    .select(['au.id as author_id', 'au.full_name', 'au.email', 'au.title', 'au.avatar_url', 'au.type', 'au.author_version']))
  .selectFrom('caller')
  .leftJoinLateral(versionHeld(sql<string | null>`(SELECT ${PAGE_VERSION} FROM page)`, v.known).as('v'), (join) => join.onTrue())
  .select((eb) => ['v.version', eb.ref('v.kept').$notNull().as('kept'), sql<string | null>`CASE WHEN v.kept THEN NULL ELSE (${jsonArrayFrom(eb.selectFrom('page')
    .select([
      'page.id', 'page.action', 'page.read', 'page.read_at', 'page.inserted_at',
      sql<{ id: string, name: string } | null>`CASE WHEN page.project_id IS NOT NULL THEN json_build_object('id', page.project_id, 'name', page.project_name) END`.as('project'),
      sql<PersonRow | null>`CASE WHEN page.author_id IS NOT NULL THEN json_build_object('id', page.author_id, 'full_name', page.full_name,
        'email', page.email, 'title', page.title, 'avatar_url', page.avatar_url, 'type', page.type) END`.as('author')
    ])
    .orderBy('page.inserted_at', 'desc').orderBy('page.id', 'desc'))})::text END`.as('items')]))

/** A notification of a page, as the page's JSON holds it (timestamps as text). */
export type NotificationRow = {
  id: string
  action: string
  read: boolean
  read_at: string | null
  inserted_at: string
  project: { id: string, name: string } | null
  author: PersonRow | null
}

/** A page of the caller's notifications, newest first. */
export interface NotificationPage {
  /** What the page is made from (PAGE_VERSION); null for an empty page. */
  version: string | null
  /** Whether the page is at a version the server said it holds: then `items` is null. */
  kept: boolean
  /** The page as JSON text, unless kept. */
  items: string | null
}

/**
 * A page of the caller's notifications, newest first; told the versions of the
 * page the server holds written (`known`), it leaves out the text of a page at one.
 */
export async function listNotifications (db: Kysely<Database>, actor: Actor, page: { limit: number, offset: number }, known: readonly string[] = []): Promise<NotificationPage> {
  const [row] = await runAs(db, LIST_NOTIFICATIONS, actor, { ...page, known: [...known] })
  return row!
}

/** The notifications of a page, parsed. */
export function parseNotifications (page: NotificationPage): NotificationRow[] {
  if (page.items === null) throw new Error('parseNotifications: the page came without its text (kept)')
  return JSON.parse(page.items) as NotificationRow[]
}

const UNREAD_COUNT = prepareForCaller('read', {}, (withCaller) => withCaller
  .selectFrom('caller')
  .innerJoin('people as me', 'me.id', 'caller.person_id')
  .select((eb) => eb.selectFrom('notifications as n')
    .whereRef('n.person_id', '=', 'me.id')
    // A literal, so that any plan can use the partial index of unread notifications.
    .where('n.read', '=', sql.lit(false))
    .where((eb) => eb.or([eb('n.project_id', 'is', null), eb.exists(visibleProject(eb.ref('n.project_id'), eb.table('me')))]))
    .select(sql<number>`count(*)::int`.as('n'))
    .$asScalar().$notNull().as('unread')))

/** How many of the caller's notifications are unread. */
export async function unreadCount (db: Kysely<Database>, actor: Actor): Promise<number> {
  const [row] = await runAs(db, UNREAD_COUNT, actor, {})
  return row!.unread
}

// Marks the named notifications read when every one of them is the caller's, and
// none when any is not; answers how many of them are the caller's. Already read
// ones keep their read_at.
const MARK_READ = prepareForCaller('write', { ids: value<string[]>() }, (withCaller, v) => withCaller
  .with('own', (qb) => qb.selectFrom('notifications as n')
    .where(sql<boolean>`n.id = ANY(${v.ids}::uuid[])`)
    .where('n.person_id', '=', CALLER_PERSON)
    .select(['n.id', 'n.read']))
  .with('marked', (qb) => qb.updateTable('notifications')
    .from('own')
    .set({ read: true, read_at: sql`now()` })
    .whereRef('notifications.id', '=', 'own.id')
    .where('own.read', '=', false)
    .where((eb) => eb(eb.selectFrom('own').select(sql<number>`count(*)::int`.as('n')), '=', sql<number>`cardinality(${v.ids}::uuid[])`))
    .returning('notifications.id'))
  .selectFrom('caller')
  .select((eb) => eb.selectFrom('own').select(sql<number>`count(*)::int`.as('n')).$asScalar().$notNull().as('own')))

/**
 * Marks these notifications (distinct canonical ids) as read: all of them when
 * each is the caller's, else none. Whether each was the caller's (an empty list:
 * true, and the token is still checked).
 */
export async function markRead (db: Kysely<Database>, actor: Actor, ids: string[]): Promise<boolean> {
  const [row] = await runAs(db, MARK_READ, actor, { ids })
  return row!.own === ids.length
}

const MARK_ALL_READ = prepareForCaller('write', {}, (withCaller) => withCaller
  .with('marked', (qb) => qb.updateTable('notifications')
    .set({ read: true, read_at: sql`now()` })
    .where('person_id', '=', CALLER_PERSON)
    .where('read', '=', sql.lit(false)))
  .selectFrom('caller')
  .select('caller.person_id'))

/** Marks every unread notification of the caller as read. */
export async function markAllRead (db: Kysely<Database>, actor: Actor): Promise<void> {
  await runAs(db, MARK_ALL_READ, actor, {})
}
