// A person's notification as notifications/list shows it: SPEC's Notification, with
// the project (its current name, in the API's id form) and the author it is about.
import type { NotificationRow } from '../db/notifications.js'
import { sluggedId } from '../ids.js'
import type { NotificationItem } from '../schemas/notifications.js'
import { toNotification, toPerson } from './project.js'

export function toNotificationItem (row: NotificationRow): NotificationItem {
  return {
    ...toNotification(row),
    project: row.project === null ? null : { id: sluggedId(row.project.id, row.project.name), name: row.project.name },
    author: row.author === null ? null : toPerson(row.author)
  }
}
