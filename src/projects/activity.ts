// A change's record: the activity (the audit row, Operately's action names) and
// its webhook event, queued for every endpoint that takes it, in the change's
// transaction, so both commit with the change or not at all.
import type { Transaction } from 'kysely'
import type { Caller } from '../auth/authenticate.js'
import type { Database, WebhookEvent } from '../db/types.js'
import { enqueueEvent } from '../webhooks/enqueue.js'
import { statement } from '../db/statements.js'
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

const insertActivity = statement(['companyId', 'projectId', 'authorId', 'tokenId', 'action', 'content'],
  (db, a: { companyId: string, projectId: string | null, authorId: string, tokenId: string, action: string, content: string }) => db
    .insertInto('activities')
    .values({ company_id: a.companyId, project_id: a.projectId, author_id: a.authorId, token_id: a.tokenId, action: a.action, content: a.content })
    .returning((eb) => ['id', 'inserted_at',
      eb.selectFrom('companies as c').where('c.id', '=', a.companyId).select('c.name').$asScalar().$notNull().as('company_name'),
      eb.selectFrom('people as actor').where('actor.id', '=', a.authorId).select('actor.full_name').$asScalar().$notNull().as('full_name')]))

/** Records the caller's change of `project` (its row as written) and queues its webhook event. */
export async function recordActivity (trx: Transaction<Database>, caller: Caller, project: Pick<LockedProject, 'id' | 'name' | 'company_id'>, input: ActivityInput): Promise<Recorded> {
  const [activity] = await insertActivity(trx, {
    companyId: project.company_id,
    projectId: input.detached === true ? null : project.id,
    authorId: caller.personId,
    tokenId: caller.tokenId,
    action: input.action,
    content: JSON.stringify(input.content)
  })
  if (activity === undefined) throw new Error('the activity was not recorded')
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
