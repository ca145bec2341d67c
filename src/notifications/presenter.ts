// A person's notification as notifications/list shows it: SPEC's Notification, with
// the project (its current name, in the API's id form) and the author it is about.
import { shortId, sluggedId } from '../ids.js'
import { iso, isoOrNull } from '../projects/presenter.js'
import type { NotificationRow } from './query.js'
import type { NotificationItem } from './schemas.js'

export function toNotificationItem (row: NotificationRow): NotificationItem {
  return {
    id: shortId(row.id),
    action: row.action,
    read: row.read,
    read_at: isoOrNull(row.read_at),
    inserted_at: iso(row.inserted_at),
    project: row.project_id === null ? null : { id: sluggedId(row.project_id, row.project_name!), name: row.project_name! },
    author: row.author_id === null
      ? null
      : { id: shortId(row.author_id), full_name: row.full_name!, email: row.email!, title: row.title, avatar_url: row.avatar_url, type: row.type! }
  }
}
