// A person's notifications: a page of them, the unread count, and marking them as
// read. Each is one statement. A notification about a project the person can no
// longer see is left out of the list and the count (its project's name could have
// changed since), though it stays theirs to mark.
import { expressionBuilder, sql, type Expression, type Kysely } from 'kysely'
import { jsonObjectFrom } from 'kysely/helpers/postgres'
import { ACCESS, accessLevel, type PersonRef } from './access.js'
import { prepare, value } from './prepared.js'
import type { Database } from './types.js'

/** The project with this id when `person` may view it. */
function visibleProject (projectId: Expression<string | null>, person: PersonRef) {
  return expressionBuilder<Database>().selectFrom('projects as p')
    .select(sql.lit(1).as('one'))
    .where('p.id', '=', projectId)
    .where((eb) => eb(accessLevel(eb.table('p'), person), '>=', ACCESS.view))
}

const LIST_NOTIFICATIONS = prepare({ personId: value<string>(), limit: value<number>(), offset: value<number>() }, (db, v) => db
  .selectFrom('notifications as n')
  .innerJoin('people as me', 'me.id', 'n.person_id')
  .leftJoin('activities as a', 'a.id', 'n.activity_id')
  .where('n.person_id', '=', v.personId)
  .where((eb) => eb.or([eb('n.project_id', 'is', null), eb.exists(visibleProject(eb.ref('n.project_id'), eb.table('me')))]))
  .select((eb) => [
    'n.id', 'n.action', 'n.read', 'n.read_at', 'n.inserted_at',
    jsonObjectFrom(eb.selectFrom('projects as p').select(['p.id', 'p.name']).whereRef('p.id', '=', 'n.project_id')).as('project'),
    jsonObjectFrom(eb.selectFrom('people as pe')
      .select(['pe.id', 'pe.full_name', 'pe.email', 'pe.title', 'pe.avatar_url', 'pe.type'])
      .whereRef('pe.id', '=', 'a.author_id')).as('author')
  ])
  .orderBy('n.inserted_at', 'desc').orderBy('n.id', 'desc')
  .limit(v.limit).offset(v.offset))

export type NotificationRow = Awaited<ReturnType<typeof listNotifications>>[number]

/** A page of the person's notifications, newest first. */
export async function listNotifications (db: Kysely<Database>, personId: string, page: { limit: number, offset: number }) {
  const { rows } = await db.executeQuery(LIST_NOTIFICATIONS({ personId, ...page }))
  return rows
}

const UNREAD_COUNT = prepare({ personId: value<string>() }, (db, v) => db
  .selectFrom('notifications as n')
  .innerJoin('people as me', 'me.id', 'n.person_id')
  .where('n.person_id', '=', v.personId)
  // A literal, so that any plan can use the partial index of unread notifications.
  .where('n.read', '=', sql.lit(false))
  .where((eb) => eb.or([eb('n.project_id', 'is', null), eb.exists(visibleProject(eb.ref('n.project_id'), eb.table('me')))]))
  .select(sql<number>`count(*)::int`.as('unread')))

/** How many of the person's notifications are unread. */
export async function unreadCount (db: Kysely<Database>, personId: string): Promise<number> {
  const { rows: [row] } = await db.executeQuery(UNREAD_COUNT({ personId }))
  return row?.unread ?? 0
}

// Marks the named notifications read when every one of them is the person's, and
// none when any is not; answers how many of them are the person's. Already read
// ones keep their read_at.
const MARK_READ = prepare({ personId: value<string>(), ids: value<string[]>() }, (db, v) => db
  .with('own', (qb) => qb.selectFrom('notifications as n')
    .where(sql<boolean>`n.id = ANY(${v.ids}::uuid[])`)
    .where('n.person_id', '=', v.personId)
    .select(['n.id', 'n.read']))
  .with('marked', (qb) => qb.updateTable('notifications')
    .from('own')
    .set({ read: true, read_at: sql`now()` })
    .whereRef('notifications.id', '=', 'own.id')
    .where('own.read', '=', false)
    .where((eb) => eb(eb.selectFrom('own').select(sql<number>`count(*)::int`.as('n')), '=', sql<number>`cardinality(${v.ids}::uuid[])`))
    .returning('notifications.id'))
  .selectFrom('own')
  .select(sql<number>`count(*)::int`.as('own')))

/**
 * Marks these notifications (distinct canonical ids) as read: all of them when
 * each is the person's, else none. Whether each was the person's.
 */
export async function markRead (db: Kysely<Database>, personId: string, ids: string[]): Promise<boolean> {
  const { rows: [row] } = await db.executeQuery(MARK_READ({ personId, ids }))
  return (row?.own ?? 0) === ids.length
}

const MARK_ALL_READ = prepare({ personId: value<string>() }, (db, v) => db
  .updateTable('notifications')
  .set({ read: true, read_at: sql`now()` })
  .where('person_id', '=', v.personId)
  .where('read', '=', sql.lit(false)))

/** Marks every unread notification of the person as read. */
export async function markAllRead (db: Kysely<Database>, personId: string): Promise<void> {
  await db.executeQuery(MARK_ALL_READ({ personId }))
}
