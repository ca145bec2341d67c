// The two mutations of a project. Each is one statement, so the permission check,
// the change of its one column and the audit activity commit together or not at
// all, with no read-modify-write of the row.
import { sql, type Kysely } from 'kysely'
import { ACCESS, accessLevel } from './access.js'
import type { Database } from './types.js'

export type ProjectField = 'name' | 'description'

const ACTIONS = {
  name: { action: 'project_renamed', old: 'old_name', new: 'new_name' },
  description: { action: 'project_description_changed', old: 'old_description', new: 'new_description' }
} as const

export type UpdateOutcome =
  | 'updated' // the value changed and an activity was recorded
  | 'unchanged' // it already had this value: nothing written
  | 'forbidden' // visible to the person, not editable by them
  | 'not_found' // absent, archived, or invisible to the person

export interface UpdateProjectField {
  projectId: string
  personId: string
  tokenId: string | null
  field: ProjectField
  value: string
}

export async function updateProjectField (db: Kysely<Database>, change: UpdateProjectField): Promise<UpdateOutcome> {
  const { field, value } = change
  const names = ACTIONS[field]
  const row = await db
    // The lock makes the old value in the activity the one this update replaces.
    .with('target', (qb) => qb.selectFrom('projects as p')
      .innerJoin('people as me', (join) => join.on('me.id', '=', change.personId))
      .where('p.id', '=', change.projectId)
      .where('p.archived_at', 'is', null)
      .select(['p.id', 'p.company_id', `p.${field} as old_value`, accessLevel.as('level')])
      .forUpdate('p'))
    .with('changed', (qb) => qb.updateTable('projects')
      .from('target')
      .set({ [field]: value, updated_at: sql`now()` })
      .whereRef('projects.id', '=', 'target.id')
      .where('target.level', '>=', ACCESS.edit)
      .where(sql<boolean>`target.old_value IS DISTINCT FROM ${value}`)
      .returning(['projects.id', 'target.company_id', 'target.old_value']))
    .with('activity', (qb) => qb.insertInto('activities')
      .columns(['company_id', 'project_id', 'author_id', 'token_id', 'action', 'content'])
      .expression((eb) => eb.selectFrom('changed').select([
        'changed.company_id',
        'changed.id',
        sql<string>`${change.personId}::uuid`.as('author_id'),
        sql<string | null>`${change.tokenId}::uuid`.as('token_id'),
        sql.lit(names.action).as('action'),
        sql`jsonb_build_object(${sql.lit(names.old)}, changed.old_value, ${sql.lit(names.new)}, ${value}::text)`.as('content')
      ]))
      .returning('activities.id'))
    .selectFrom('target')
    .select((eb) => ['target.level', eb.exists(eb.selectFrom('activity').select('activity.id')).as('changed')])
    .executeTakeFirst()

  if (!row || row.level < ACCESS.view) return 'not_found'
  if (row.level < ACCESS.edit) return 'forbidden'
  return row.changed === true ? 'updated' : 'unchanged'
}
