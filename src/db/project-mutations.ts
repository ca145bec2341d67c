// The two mutations of a project. Each is one statement, so the permission check,
// the change of its one column, the audit activity and the aggregate of the project
// as it is afterwards commit and come back together, with no read-modify-write of
// the row and no second round trip.
import { sql, type Kysely } from 'kysely'
import { ACCESS, accessLevel } from './access.js'
import { prepare } from './prepared.js'
import { projectAggregate, projectSource, type ProjectView } from './project-aggregate.js'
import type { Database } from './types.js'

export type ProjectField = 'name' | 'description'

const ACTIONS = {
  name: { action: 'project_renamed', old: 'old_name', new: 'new_name' },
  description: { action: 'project_description_changed', old: 'old_description', new: 'new_description' }
} as const

// All CTEs of a statement share one snapshot, in which `projects` still holds the
// old row: the aggregate reads the project's own columns from this CTE instead.
const LATEST = projectSource('latest')

export type UpdateResult =
  | { outcome: 'updated', project: ProjectView } // the value changed and an activity was recorded
  | { outcome: 'unchanged', project: ProjectView } // it already had this value: nothing written
  | { outcome: 'forbidden' } // visible to the person, not editable by them
  | { outcome: 'not_found' } // absent, archived, or invisible to the person

export interface UpdateProjectField {
  projectId: string
  personId: string
  tokenId: string | null
  field: ProjectField
  value: string
}

function updateStatement (field: ProjectField) {
  const names = ACTIONS[field]
  return prepare(['value', 'projectId', 'personId', 'tokenId'], (db, change) => db
    // The value travels once, however many places use it (a description may be 512 KiB).
    .with('input', (qb) => qb.selectNoFrom(sql<string>`${change.value}::text`.as('value')))
    // The lock makes the old value in the activity the one this update replaces, and
    // READ COMMITTED hands back the latest committed version of the row it waited for.
    .with('target', (qb) => qb.selectFrom('projects as p')
      .innerJoin('people as me', (join) => join.on('me.id', '=', change.personId))
      .where('p.id', '=', change.projectId)
      .where('p.archived_at', 'is', null)
      .selectAll('p')
      .select(accessLevel.as('level'))
      .forUpdate('p'))
    .with('changed', (qb) => qb.updateTable('projects')
      .from(['target', 'input'])
      .set((eb) => ({ [field]: eb.ref('input.value'), updated_at: sql`now()` }))
      .whereRef('projects.id', '=', 'target.id')
      .where('target.level', '>=', ACCESS.edit)
      .where(sql<boolean>`${sql.ref(`target.${field}`)} IS DISTINCT FROM input.value`)
      .returningAll('projects')
      .returning('target.level'))
    .with('activity', (qb) => qb.insertInto('activities')
      .columns(['company_id', 'project_id', 'author_id', 'token_id', 'action', 'content'])
      .expression((eb) => eb.selectFrom('changed')
        .innerJoin('target', 'target.id', 'changed.id')
        .select([
          'changed.company_id',
          'changed.id',
          sql<string>`${change.personId}::uuid`.as('author_id'),
          sql<string | null>`${change.tokenId}::uuid`.as('token_id'),
          sql.lit(names.action).as('action'),
          sql`jsonb_build_object(${sql.lit(names.old)}, ${sql.ref(`target.${field}`)}, ${sql.lit(names.new)}, ${sql.ref(`changed.${field}`)})`.as('content')
        ]))
      .returning('activities.id'))
    // The row as it is after this statement: the one just written, else the locked
    // one; empty when the person may not edit, so no aggregate is built for them.
    .with('latest', (qb) => qb.selectFrom('changed').selectAll()
      .unionAll((eb) => eb.selectFrom('target').selectAll()
        .where('target.level', '>=', ACCESS.edit)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('changed').select(sql.lit(1).as('one')))))))
    .selectFrom('target')
    .leftJoin(projectAggregate(db, LATEST, change.personId).as('project'), (join) => join.onTrue())
    .selectAll('project')
    .select((eb) => ['target.level', eb.exists(eb.selectFrom('activity').select('activity.id')).as('updated')]))
}

const STATEMENTS = { name: updateStatement('name'), description: updateStatement('description') }

export async function updateProjectField (db: Kysely<Database>, change: UpdateProjectField): Promise<UpdateResult> {
  const { rows: [row] } = await db.executeQuery(STATEMENTS[change.field](change))

  if (!row || row.level < ACCESS.view) return { outcome: 'not_found' }
  if (row.level < ACCESS.edit) return { outcome: 'forbidden' }
  const { updated, ...aggregate } = row
  // `latest` has the row exactly when the person may edit, so the join found it.
  const project = aggregate as ProjectView
  return updated === true ? { outcome: 'updated', project } : { outcome: 'unchanged', project }
}
