// A project's champion and reviewer, handed over as Operately does: the one who
// held the role stays on as a contributor with full access; the new one, a person
// of the project's company who is not suspended, takes the role (as a new
// contributor, or their binding changes role) and is subscribed to the project;
// the change is recorded, and the project's subscribers, the new one included, are
// notified.
import type { Transaction } from 'kysely'
import type { Caller } from '../auth/authenticate.js'
import type { Database } from '../db/types.js'
import { invalidInput } from '../errors.js'
import { shortId } from '../ids.js'
import { ACCESS } from './access.js'
import { recordActivity, type Recorded } from './activity.js'
import type { LockedProject } from './change.js'
import { notifySubscribers, subscribeInvited } from './subscriptions.js'

export type Leader = 'champion' | 'reviewer'

/** A person of the company who is not suspended, as events name them; 400 at `path` when there is none. */
export async function companyPerson (trx: Transaction<Database>, companyId: string, personId: string, path: string) {
  const person = await trx.selectFrom('people').select(['id', 'full_name'])
    .where('id', '=', personId).where('company_id', '=', companyId).where('suspended_at', 'is', null)
    .executeTakeFirst()
  if (person === undefined) throw invalidInput(path, "must name a person of the project's company who is not suspended")
  return person
}

/** The one who held the role and the one who holds it now. */
interface Transfer { from: { id: string, full_name: string } | null, to: { id: string, full_name: string } | null }

/** Gives `role` to `personId` (null: to nobody), unless they hold it already (then null). Records nothing. */
export async function transferRole (trx: Transaction<Database>, project: LockedProject, role: Leader, personId: string | null, path = `/${role}_id`): Promise<Transfer | null> {
  const current = await trx.selectFrom('project_contributors as c').innerJoin('people as pe', 'pe.id', 'c.person_id')
    .select(['c.id', 'c.person_id', 'pe.full_name'])
    .where('c.project_id', '=', project.id).where('c.role', '=', role)
    .executeTakeFirst()
  if ((current?.person_id ?? null) === personId) return null
  const next = personId === null ? null : await companyPerson(trx, project.company_id, personId, path)
  if (current !== undefined) {
    await trx.updateTable('project_contributors').set({ role: 'contributor', access_level: ACCESS.full }).where('id', '=', current.id).execute()
  }
  if (next !== null) {
    await trx.insertInto('project_contributors')
      .values({ project_id: project.id, person_id: next.id, role, responsibility: null, access_level: null })
      .onConflict((oc) => oc.columns(['project_id', 'person_id']).doUpdateSet({ role }))
      .execute()
    await subscribeInvited(trx, project.id, next.id)
  }
  return { from: current === undefined ? null : { id: current.person_id, full_name: current.full_name }, to: next }
}

/** Gives `role` to `personId` and records it; nothing is written or recorded when they hold it already. */
export async function handOver (trx: Transaction<Database>, caller: Caller, project: LockedProject, role: Leader, personId: string | null): Promise<Recorded | null> {
  const moved = await transferRole(trx, project, role, personId)
  if (moved === null) return null
  const action = `project_${role}_updating`
  const named = (person: { id: string, full_name: string } | null) => person === null ? null : { id: shortId(person.id), full_name: person.full_name }
  const recorded = await recordActivity(trx, caller, project, {
    action,
    content: { [`old_${role}_id`]: moved.from?.id ?? null, [`new_${role}_id`]: moved.to?.id ?? null },
    event: { type: `project.${role}_changed`, change: { [`old_${role}`]: named(moved.from), [`new_${role}`]: named(moved.to) } }
  })
  await notifySubscribers(trx, { id: recorded.activityId, projectId: project.id, authorId: caller.personId, action }, moved.to === null ? [] : [moved.to.id])
  return recorded
}
