// What a project's change names besides the project: a goal and people, found
// within the project's company. Whatever is of another company, archived or
// suspended is not found, like what does not exist.
import { httpErrors } from '@fastify/sensible'
import { decodeId } from '../ids.js'
import type { Queryable } from './query.js'

export const goalNotFound = () => httpErrors.notFound('goal not found')
export const spaceNotFound = () => httpErrors.notFound('space not found')

/** The goal an id names in the company, unless archived; 404 otherwise, whatever the reason. */
export async function findGoal (db: Queryable, goalId: string, companyId: string): Promise<{ id: string, name: string }> {
  const id = decodeId(goalId)
  const goal = id === null
    ? undefined
    : await db.selectFrom('goals').select(['id', 'name'])
      .where('id', '=', id).where('company_id', '=', companyId).where('archived_at', 'is', null)
      .executeTakeFirst()
  if (goal === undefined) throw goalNotFound()
  return goal
}

/** The person an id names among the company's people who are not suspended, or null. */
export async function findColleague (db: Queryable, personId: string, companyId: string): Promise<{ id: string, full_name: string } | null> {
  const id = decodeId(personId)
  if (id === null) return null
  const person = await db.selectFrom('people').select(['id', 'full_name'])
    .where('id', '=', id).where('company_id', '=', companyId).where('suspended_at', 'is', null)
    .executeTakeFirst()
  return person ?? null
}
