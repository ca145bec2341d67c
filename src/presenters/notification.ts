// A person's notification as notifications/list shows it: SPEC's Notification, with
// the project (its current name, in the API's id form) and the author it is about.
import { parseNotifications, type NotificationPage, type NotificationRow } from '../db/notifications.js'
import { answerKey, type AnswerCache } from '../plugins/answers.js'
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

/**
 * notifications/list's answer for a page: the bytes written before from the same
 * page text, else written now and kept (plugins/answers.ts).
 */
export function notificationPageAnswer (answers: AnswerCache, page: NotificationPage): Buffer {
  const key = answerKey('notifications', page.items)
  let answer = answers.get<Buffer>(key)
  if (answer === undefined) {
    answer = Buffer.from(writeNotificationPage({ notifications: toNotificationItems(parseNotifications(page)) }))
    answers.set(key, answer)
  }
  return answer
}
