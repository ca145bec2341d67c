// A person's notifications: a page of them, the unread count, and marking them as
// read. A notification about a project the person can no longer see is left out
// of the list and the count (its project's name could have changed since), though
// it stays theirs to mark.
import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/types.js'
import { ACCESS, hasAccess } from '../projects/access.js'

/**
 * A page of the person's notifications, newest first, each with its activity,
 * project and author looked up by key (joined as tables, the plan read the whole
 * of projects into a hash for each page).
 */
export async function listNotifications (db: Kysely<Database>, personId: string, page: { limit: number, offset: number }) {
  return await db.selectFrom('notifications as n')
    .innerJoin('people as me', 'me.id', 'n.person_id')
    .leftJoin('projects as p', 'p.id', 'n.project_id')
    .leftJoin('people as au', 'au.id', 'n.author_id')
    .leftJoin('activities as a', 'a.id', 'n.activity_id')
    .where('n.person_id', '=', personId)
    .where((eb) => eb.or([eb('n.project_id', 'is', null), hasAccess(eb.table('p') as never, eb.table('me'), ACCESS.view)]))
    .select([
      'n.id', 'n.action', 'n.read', 'n.read_at', 'n.inserted_at',
      'a.id as activity_id', 'a.action as activity_action', 'a.inserted_at as activity_inserted_at', 'a.content as activity_content',
      'p.id as project_id', 'p.name as project_name',
      'au.id as author_id', 'au.full_name', 'au.email', 'au.title', 'au.avatar_url', 'au.type'
    ])
    .orderBy('n.inserted_at', 'desc').orderBy('n.id', 'desc')
    .limit(page.limit).offset(page.offset)
    .execute()
}

export type NotificationRow = Awaited<ReturnType<typeof listNotifications>>[number]

/** How many of the person's notifications are unread (as the list shows them). */
export async function unreadCount (db: Kysely<Database>, personId: string): Promise<number> {
  const row = await db.selectFrom('notifications as n')
    .innerJoin('people as me', 'me.id', 'n.person_id')
    .leftJoin('projects as p', 'p.id', 'n.project_id')
    .where('n.person_id', '=', personId)
    // A literal, so that any plan can use the partial index of unread notifications.
    .where('n.read', '=', sql.lit(false))
    .where((eb) => eb.or([eb('n.project_id', 'is', null), hasAccess(eb.table('p') as never, eb.table('me'), ACCESS.view)]))
    .select(sql<number>`count(*)::int`.as('unread'))
    .executeTakeFirstOrThrow()
  return row.unread
}

/**
 * Marks these notifications (distinct canonical ids) as read: all of them when
 * each is the person's, else none. Whether each was the person's. Already read
 * ones keep their read_at.
 */
export async function markRead (db: Kysely<Database>, personId: string, ids: string[]): Promise<boolean> {
  if (ids.length === 0) return true
  return await db.transaction().execute(async (trx) => {
    const own = await trx.selectFrom('notifications')
      .where('id', 'in', ids)
      .where('person_id', '=', personId)
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow()
    if (own.n !== ids.length) return false
    await trx.updateTable('notifications')
      .set({ read: true, read_at: sql`now()` })
      .where('id', 'in', ids)
      .where('read', '=', false)
      .execute()
    return true
  })
}

/** Marks every unread notification of the person as read. */
export async function markAllRead (db: Kysely<Database>, personId: string): Promise<void> {
  await db.updateTable('notifications')
    .set({ read: true, read_at: sql`now()` })
    .where('person_id', '=', personId)
    .where('read', '=', sql.lit(false))
    .execute()
}
