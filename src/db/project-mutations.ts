// The two mutations of a project. Each is one statement, so the permission check,
// the row lock (an editor's only), the change of its one column, the audit activity
// and the aggregate of the project as it is afterwards commit and come back
// together, with no read-modify-write of the row and no second round trip.
import { sql, type Kysely } from 'kysely'
import { ACCESS, accessLevel } from './access.js'
import { prepare, value } from './prepared.js'
import { projectAggregate, projectSource, type AggregateRow, type ProjectView } from './project-aggregate.js'
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
  | { outcome: 'done', project: ProjectView } // changed with an activity recorded, or already so and untouched
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
  return prepare({
    value: value<string>(), projectId: value<string>(), personId: value<string>(), tokenId: value<string | null>()
  }, (db, change) => db
    // The value travels once, however many places use it (a description may be 512 KiB).
    .with('input', (qb) => qb.selectNoFrom(sql<string>`${change.value}::text`.as('value')))
    // Visibility and permission first, from the statement's snapshot, taking no lock:
    // a row held by another transaction must not keep (or time out) someone who may
    // not change it, nor tell them, by waiting, that the project exists.
    .with('access', (qb) => qb.selectFrom('projects as p')
      .innerJoin('people as me', (join) => join.on('me.id', '=', change.personId))
      .where('p.id', '=', change.projectId)
      .where('p.archived_at', 'is', null)
      .select((eb) => ['p.id', accessLevel(eb.table('p'), eb.table('me')).as('level')]))
    // Only an editor locks the row, so only an editor waits: for anyone else the id
    // looked up is NULL, which matches no row and locks nothing, whether PostgreSQL
    // materialises this CTE or not. The lock makes the old value in the activity the
    // one this update replaces, and READ COMMITTED hands back the latest committed
    // version of the row it waited for, rechecked (still not archived) and with the
    // level recomputed on it.
    .with('target', (qb) => qb.selectFrom('projects as p')
      .innerJoin('people as me', (join) => join.on('me.id', '=', change.personId))
      .where('p.id', '=', (eb) => eb.selectFrom('access').select('access.id').where('access.level', '>=', ACCESS.edit))
      .where('p.archived_at', 'is', null)
      .selectAll('p')
      .select((eb) => accessLevel(eb.table('p'), eb.table('me')).as('level'))
      .forUpdate('p'))
    .with('changed', (qb) => qb.updateTable('projects')
      .from(['target', 'input'])
      .set((eb) => field === 'name'
        ? { name: eb.ref('input.value'), updated_at: sql`now()` }
        : { description: eb.ref('input.value'), updated_at: sql`now()` })
      .whereRef('projects.id', '=', 'target.id')
      .where('target.level', '>=', ACCESS.edit)
      .where((eb) => eb(eb.ref(`target.${field}`), 'is distinct from', eb.ref('input.value')))
      .returningAll('projects')
      .returning('target.level'))
    .with('activity', (qb) => qb.insertInto('activities')
      .columns(['company_id', 'project_id', 'author_id', 'token_id', 'action', 'content'])
      .expression((eb) => eb.selectFrom('changed')
        .innerJoin('target', 'target.id', 'changed.id')
        .select((eb) => [
          'changed.company_id',
          'changed.id',
          sql<string>`${change.personId}::uuid`.as('author_id'),
          sql<string | null>`${change.tokenId}::uuid`.as('token_id'),
          sql.lit(names.action).as('action'),
          sql<string>`jsonb_build_object(${sql.lit(names.old)}, ${eb.ref(`target.${field}`)}, ${sql.lit(names.new)}, ${eb.ref(`changed.${field}`)})`.as('content')
        ])))
    // The row as it is after this statement: the one just written, else the locked
    // one; empty when the person may not edit, so no aggregate is built for them.
    .with('latest', (qb) => qb.selectFrom('changed').selectAll()
      .unionAll((eb) => eb.selectFrom('target').selectAll()
        .where('target.level', '>=', ACCESS.edit)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('changed').select(sql.lit(1).as('one')))))))
    .selectFrom('access')
    .leftJoin('target', (join) => join.onTrue())
    .leftJoin(projectAggregate(db, LATEST, change.personId).as('project'), (join) => join.onTrue())
    .selectAll('project')
    .select(['access.level', 'target.level as locked_level']))
}

const STATEMENTS = { name: updateStatement('name'), description: updateStatement('description') }

/**
 * Whether the left join found the project's aggregate: its id is never null when
 * it did, and every column then comes from that one row.
 */
function hasProject<R extends { id: string | null }> (row: R): row is R & AggregateRow {
  return row.id !== null
}

export async function updateProjectField (db: Kysely<Database>, change: UpdateProjectField): Promise<UpdateResult> {
  const { rows: [row] } = await db.executeQuery(STATEMENTS[change.field](change))

  // Decided without waiting for the row: who may not edit never waits for it.
  if (!row || row.level < ACCESS.view) return { outcome: 'not_found' }
  if (row.level < ACCESS.edit) return { outcome: 'forbidden' }
  // An editor waited for the row: the version the other transaction committed
  // decides. Gone or archived meanwhile: not found; no longer editable: forbidden.
  const { locked_level: level, ...aggregate } = row
  if (level === null || level < ACCESS.view) return { outcome: 'not_found' }
  if (level < ACCESS.edit) return { outcome: 'forbidden' }
  // `latest` has the row exactly when the locked row is editable, so the join found it.
  if (!hasProject(aggregate)) throw new Error('the project was editable but its row did not come back')
  return { outcome: 'done', project: { ...aggregate, level } }
}
