// A person's notification as notifications/list shows it: SPEC's Notification, with
// the project (its current name, in the API's id form) and the author it is about,
// and Operately's nested `activity`: what happened, by whom, with the action's
// content in Operately's field names.
import { shortId, sluggedId } from '../ids.js'
import { iso, isoOrNull } from '../projects/presenter.js'
import type { NotificationRow } from './query.js'
import type { NotificationActivity, NotificationItem } from './schemas.js'

type ProjectRef = NotificationItem['project']

/** Operately's content of an action from what the activity recorded; an action it names no fields for keeps the recorded ones. */
function activityContent (action: string, recorded: Record<string, unknown>, project: ProjectRef): NotificationActivity['content'] & Record<string, unknown> {
  if (action === 'project_renamed') {
    return { project, old_name: recorded.old_name ?? null, new_name: recorded.new_name ?? null }
  }
  if (action === 'project_description_changed') {
    const description = recorded.new_description ?? null
    return { project, project_name: project?.name ?? null, has_description: description !== null, description }
  }
  return { ...recorded, project }
}

export function toNotificationItem (row: NotificationRow): NotificationItem {
  const project = row.project_id === null ? null : { id: sluggedId(row.project_id, row.project_name!), name: row.project_name! }
  const author = row.author_id === null
    ? null
    : { id: shortId(row.author_id), full_name: row.full_name!, email: row.email!, title: row.title, avatar_url: row.avatar_url, type: row.type! }
  return {
    id: shortId(row.id),
    action: row.action,
    read: row.read,
    read_at: isoOrNull(row.read_at),
    inserted_at: iso(row.inserted_at),
    project,
    author,
    activity: row.activity_id === null
      ? null
      : {
          id: shortId(row.activity_id),
          action: row.activity_action!,
          inserted_at: iso(row.activity_inserted_at!),
          author,
          content: activityContent(row.activity_action!, row.activity_content ?? {}, project)
        }
  }
}
