// A change's record: the activity (the audit row, Operately's action names) and
// its webhook event, queued for every endpoint that takes it, in the change's
// transaction, so both commit with the change or not at all.
import type { Transaction } from 'kysely'
import type { Caller } from '../auth/authenticate.js'
import type { Database, WebhookEvent } from '../db/types.js'
import { enqueueEvent } from '../webhooks/enqueue.js'
import type { LockedProject } from './change.js'

export interface Recorded {
  activityId: string
  /** Webhook deliveries queued. */
  queued: number
}

export interface ActivityInput {
  action: string
  content: Record<string, unknown>
  event: { type: WebhookEvent, change: Record<string, unknown> }
  /** Recorded without the project's id: the activity of a deletion, which outlives its project and its cascade. */
  detached?: boolean
}

/** Records the caller's change of `project` (its row as written) and queues its webhook event. */
export async function recordActivity (trx: Transaction<Database>, caller: Caller, project: Pick<LockedProject, 'id' | 'name' | 'company_id'>, input: ActivityInput): Promise<Recorded> {
  const activity = await trx.insertInto('activities')
    .values({
      company_id: project.company_id,
      project_id: input.detached === true ? null : project.id,
      author_id: caller.personId,
      token_id: caller.tokenId,
      action: input.action,
      content: JSON.stringify(input.content)
    })
    .returning((eb) => ['id', 'inserted_at',
      eb.selectFrom('companies as c').where('c.id', '=', project.company_id).select('c.name').$asScalar().$notNull().as('company_name'),
      eb.selectFrom('people as actor').where('actor.id', '=', caller.personId).select('actor.full_name').$asScalar().$notNull().as('full_name')])
    .executeTakeFirstOrThrow()
  const queued = await enqueueEvent(trx, {
    companyId: project.company_id,
    eventId: activity.id,
    type: input.event.type,
    payload: {
      type: input.event.type,
      timestamp: activity.inserted_at.toISOString(),
      data: {
        project: { id: project.id, name: project.name },
        company: { id: project.company_id, name: activity.company_name },
        actor: { id: caller.personId, full_name: activity.full_name },
        change: input.event.change
      }
    }
  })
  return { activityId: activity.id, queued }
}
