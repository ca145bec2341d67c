// A person's notification as notifications/list shows it: SPEC's Notification, with
// the project (its current name, in the API's id form) and the author it is about.
import { parseNotifications, type NotificationPage, type NotificationRow } from '../db/notifications.js'
import { answerKey, heldAt, heldVersion, keep, type AnswerCache, type AnswerPart, type RecentVersions } from '../plugins/answers.js'
import type { Deflated } from '../gzip.js'
import type { Actor } from '../db/caller.js'
import { writeNotificationPage } from '../schemas/serializer.js'
import { shortId, sluggedId } from '../ids.js'
import type { NotificationItem } from '../schemas/notifications.js'
import { iso, isoOrNull, personIn, type PeopleSeen } from './project.js'

type ProjectRef = NonNullable<NotificationItem['project']>

/**
 * The projects a page has already named, by UUID (a page is one statement's
 * snapshot: one name each): a page of a hundred notifications names a few projects
 * again and again. One object each, its id encoded once.
 */
type ProjectsSeen = Map<string, ProjectRef>

function projectIn (seen: ProjectsSeen, project: { id: string, name: string }): ProjectRef {
  let ref = seen.get(project.id)
  if (ref === undefined) {
    ref = { id: sluggedId(project.id, project.name), name: project.name }
    seen.set(project.id, ref)
  }
  return ref
}

// SPEC's Notification fields written out here, not spread from toNotification: a
// page is a hundred of them, and the spread built each one twice.
function toNotificationItem (row: NotificationRow, people: PeopleSeen, projects: ProjectsSeen): NotificationItem {
  return {
    id: shortId(row.id),
    action: row.action,
    read: row.read,
    read_at: isoOrNull(row.read_at),
    inserted_at: iso(row.inserted_at),
    project: row.project === null ? null : projectIn(projects, row.project),
    author: row.author === null ? null : personIn(people, row.author)
  }
}

/** A page of notifications: its authors and projects written once each. */
export function toNotificationItems (rows: readonly NotificationRow[]): NotificationItem[] {
  const people: PeopleSeen = new Map()
  const projects: ProjectsSeen = new Map()
  return rows.map((row) => toNotificationItem(row, people, projects))
}

/** Where a page of notifications written at a version (db/notifications.ts, PAGE_VERSION) is kept. */
const pageVersionKey = (version: string) => `notifications ${version}`

/**
 * Where the version of a page of an actor's notifications is remembered
 * (plugins/answers.ts, RecentVersions): the token's digest (or the person acted
 * for without one), the page's size and its start.
 */
export function inboxScope (actor: Actor, page: { limit: number, offset: number }): string {
  const who = 'digest' in actor ? actor.digest.toString('base64') : `person ${actor.personId}`
  return `${who} ${page.limit} ${page.offset}`
}

/** The page of `scope` this server holds written, at the version it last showed, by version. */
export function heldPages (answers: AnswerCache, recent: RecentVersions, scope: string): Map<string, Deflated> {
  return heldAt<Deflated>(answers, recent, scope, pageVersionKey)
}

/**
 * notifications/list's answer for a page: the bytes `held` at the version the
 * statement confirmed, or written before at the page's version (or from the same
 * text, for a page without one), else written now and kept, compressed
 * (plugins/answers.ts).
 */
export function notificationPageAnswer (answers: AnswerCache, page: NotificationPage, held: ReadonlyMap<string, Deflated>): AnswerPart[] {
  if (page.kept) {
    const kept = heldVersion(held, page.version, 'a page of notifications')
    // Counted and made recent as a hit.
    answers.get(pageVersionKey(page.version!))
    return [kept]
  }
  const key = page.version === null ? answerKey('notifications', page.items!) : pageVersionKey(page.version)
  const kept = answers.get<Deflated>(key)
  if (kept !== undefined) return [kept]
  const written = Buffer.from(writeNotificationPage({ notifications: toNotificationItems(parseNotifications(page)) }))
  // A page too large to keep (answers.mayKeep) is sent as written.
  if (!answers.mayKeep(written.length)) return [written]
  const keeping = keep(written)
  answers.set(key, keeping)
  return [keeping]
}
