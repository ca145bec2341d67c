// Who hears that a project was paused, resumed or closed (Operately's rules): the
// people the caller chose (subscriber_ids), the people the text mentions (who are
// also subscribed to the project, as a description's mentions are), and with
// send_notifications_to_everyone the project's contributors. Each is notified
// once, in the change's transaction, if they can view the project; never the author.
import type { Transaction } from 'kysely'
import type { Caller } from '../auth/authenticate.js'
import type { Database } from '../db/types.js'
import { invalidInput } from '../errors.js'
import type { LockedProject } from './change.js'
import { mentionedPeople } from './mentions.js'
import { personId } from './rules.js'
import { notifyPeople, subscribeMentioned } from './subscriptions.js'

export interface Audience {
  /** The chosen people's UUIDs, each once. */
  chosen: string[]
  everyone: boolean
}

/** The audience a request names; 400 for an id that is no person's id. */
export function audience (body: { subscriber_ids?: string[] | null, send_notifications_to_everyone?: boolean | null }): Audience {
  const ids = (body.subscriber_ids ?? []).map((id, i) => personId(id, `/subscriber_ids/${i}`))
  return { chosen: [...new Set(ids)], everyone: body.send_notifications_to_everyone === true }
}

/** 400 unless every chosen person belongs to the project's company. */
export async function checkAudience (trx: Transaction<Database>, project: LockedProject, chosen: string[]): Promise<void> {
  if (chosen.length === 0) return
  const found = await trx.selectFrom('people').select('id')
    .where('company_id', '=', project.company_id).where('id', 'in', chosen).execute()
  if (found.length !== chosen.length) throw invalidInput('/subscriber_ids', "must name people of the project's company")
}

/** Subscribes who `text` mentions and notifies the audience of the activity. */
export async function announce (trx: Transaction<Database>, caller: Caller, project: LockedProject,
  activity: { id: string, action: string }, text: string, chosen: Audience): Promise<void> {
  const mentioned = await subscribeMentioned(trx, project, mentionedPeople(text))
  const contributors = chosen.everyone
    ? (await trx.selectFrom('project_contributors').select('person_id').where('project_id', '=', project.id).execute()).map((c) => c.person_id)
    : []
  await notifyPeople(trx, { id: activity.id, projectId: project.id, authorId: caller.personId, action: activity.action },
    [...chosen.chosen, ...mentioned, ...contributors])
}
