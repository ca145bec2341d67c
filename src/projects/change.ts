// How every change of a project runs, as Operately's handlers do: find the project
// with the caller's access level, check it, lock the row, check If-Match, write
// (the operation's own step), and answer the project as the caller sees it after
// the change, all in one transaction. Who may not edit never waits for the row
// and learns nothing from waiting: the access check takes no lock.
import { sql, type Transaction } from 'kysely'
import { httpErrors } from '@fastify/sensible'
import type { Caller } from '../auth/authenticate.js'
import type { Db } from '../db/index.js'
import type { Database, ProjectsTable } from '../db/types.js'
import type { Selectable, Updateable } from 'kysely'
import { decodeId } from '../ids.js'
import { jobsQueued } from '../db/jobs.js'
import { ACCESS, accessLevel } from './access.js'
import { findProject } from './query.js'
import { projectTag, toProject } from './presenter.js'
import { preconditionFailed } from './conditional.js'
import type { Project } from './schemas.js'

/** The same body whether the project is absent, archived or invisible: existence never leaks. */
export const projectNotFound = () => httpErrors.notFound('project not found')
export const notEditable = () => httpErrors.forbidden('you may view this project but not edit it')

/** The locked row of the project being changed. */
export type LockedProject = Selectable<ProjectsTable>

/** What an operation's write step did: how many webhook deliveries it queued. */
export interface Written { queued: number }

export interface Change {
  caller: Caller
  /** The project's id as the client sent it. */
  projectId: string
  /** If-Match's strong tags (conditional.ts); null: unconditional. */
  ifMatch: string[] | null
  /** The level the change needs (edit, or full access). */
  level?: number
  /**
   * Which project the answer is: as it is after the write (the default); as it was
   * right before it (a deletion); or after it, unless the write took it out of the
   * caller's sight (a move to a space they are no member of), then before it.
   */
  answer?: 'after' | 'before' | 'after_or_before'
  write: (trx: Transaction<Database>, project: LockedProject) => Promise<Written>
}

/** The caller's level on the project (no lock), or null when it is absent or archived. */
async function levelOn (trx: Transaction<Database>, projectId: string, personId: string, lock: boolean): Promise<{ level: number, row: LockedProject } | null> {
  const found = await trx.selectFrom('projects as p')
    .innerJoin('people as me', (join) => join.on('me.id', '=', personId))
    .where('p.id', '=', projectId)
    .where('p.archived_at', 'is', null)
    .selectAll('p')
    .select((eb) => accessLevel(eb.table('p'), eb.table('me')).as('level'))
    .$if(lock, (qb) => qb.forUpdate('p'))
    .executeTakeFirst()
  if (found === undefined) return null
  const { level, ...row } = found
  return { level, row }
}

function judge (found: { level: number } | null, needed: number): void {
  if (found === null || found.level < ACCESS.view) throw projectNotFound()
  if (found.level < needed) throw notEditable()
}

/** Runs a change; the project as the caller sees it afterwards, with its tag. */
export async function changeProject (db: Db, change: Change): Promise<{ project: Project, etag: string }> {
  const id = decodeId(change.projectId)
  if (id === null) throw projectNotFound()
  const needed = change.level ?? ACCESS.edit
  const personId = change.caller.personId
  const { answer, queued } = await db.transaction().execute(async (trx) => {
    judge(await levelOn(trx, id, personId, false), needed)
    // Only an editor locks the row. READ COMMITTED gives the latest committed
    // version once the lock is granted, judged again.
    const locked = await levelOn(trx, id, personId, true)
    judge(locked, needed)
    if (change.ifMatch !== null) {
      const before = await findProject(trx, id, personId)
      if (before === null) throw projectNotFound()
      const tag = projectTag(toProject(before))
      if (!change.ifMatch.includes(tag)) throw preconditionFailed(tag)
    }
    const answer = change.answer ?? 'after'
    const before = answer === 'after' ? null : await findProject(trx, id, personId)
    const { queued } = await change.write(trx, locked!.row)
    const after = answer === 'before' ? before : (await findProject(trx, id, personId)) ?? before
    if (after === null) throw projectNotFound()
    return { answer: toProject(after), queued }
  })
  jobsQueued(queued)
  return { project: answer, etag: projectTag(answer) }
}

/**
 * Sets one of the locked project's own columns, unless it holds the value already
 * (then nothing is written, nor recorded): the row as written, or undefined.
 */
export async function setColumn (trx: Transaction<Database>, project: LockedProject, set: { name: string } | { description: string }) {
  const [column, value] = Object.entries(set)[0] as ['name' | 'description', string]
  return await trx.updateTable('projects')
    .set({ ...set, updated_at: sql`now()` })
    .where('id', '=', project.id)
    .where(column, 'is distinct from', value)
    .returning(['id', 'name', 'company_id'])
    .executeTakeFirst()
}

/**
 * Sets some of the locked project's own columns, unless each holds its value
 * already (then nothing is written, nor recorded): the row as written, or undefined.
 */
export async function setColumns (trx: Transaction<Database>, project: LockedProject, set: Updateable<ProjectsTable>) {
  const entries = Object.entries(set) as Array<[keyof ProjectsTable & string, unknown]>
  return await trx.updateTable('projects')
    .set({ ...set, updated_at: sql`now()` })
    .where('id', '=', project.id)
    .where((eb) => eb.or(entries.map(([column, value]) => eb(column, 'is distinct from', value as never))))
    .returning(['id', 'name', 'company_id'])
    .executeTakeFirst()
}
