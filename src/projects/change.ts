// How every change of a project runs, as Operately's handlers do: lock the project
// if the caller may change it (else 404 or 403), check If-Match, write (the
// operation's own step), and answer the project as the caller sees it after the
// change, all in one transaction. Who may not change it never waits for the row
// and learns nothing from waiting: only a row the caller may change is locked.
import { sql, type Transaction } from 'kysely'
import { httpErrors } from '@fastify/sensible'
import type { Caller } from '../auth/authenticate.js'
import type { Db } from '../db/index.js'
import type { Database, ProjectsTable } from '../db/types.js'
import type { Selectable, Updateable } from 'kysely'
import { decodeId } from '../ids.js'
import { jobsQueued } from '../db/jobs.js'
import { statement } from '../db/statements.js'
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

/** The caller's level on the project, or nothing when it is absent or archived. */
const levelOn = statement(['projectId', 'personId'], (db, { projectId, personId }: { projectId: string, personId: string }) =>
  db.selectFrom('projects as p')
    .innerJoin('people as me', (join) => join.on('me.id', '=', personId))
    .where('p.id', '=', projectId)
    .where('p.archived_at', 'is', null)
    .select((eb) => accessLevel(eb.table('p'), eb.table('me')).as('level')))

/**
 * The project's row, locked, when the caller holds `needed` on it. The condition is
 * in the WHERE clause, so only a row the caller may change is locked: who may not
 * never waits for it. Once the lock is granted, PostgreSQL judges the condition
 * again on the row's latest version.
 */
const lockIfAllowed = statement(['projectId', 'personId', 'needed'], (db, { projectId, personId, needed }: { projectId: string, personId: string, needed: number }) =>
  db.selectFrom('projects as p')
    .innerJoin('people as me', (join) => join.on('me.id', '=', personId))
    .where('p.id', '=', projectId)
    .where('p.archived_at', 'is', null)
    .where((eb) => eb(accessLevel(eb.table('p'), eb.table('me')), '>=', needed))
    .selectAll('p')
    .forUpdate('p'))

/** Why the caller may not change the project: 404 when they cannot see it, else 403. */
async function refusal (trx: Transaction<Database>, projectId: string, personId: string) {
  const [found] = await levelOn(trx, { projectId, personId })
  return found === undefined || found.level < ACCESS.view ? projectNotFound() : notEditable()
}

/** Runs a change; the project as the caller sees it afterwards, with its tag. */
export async function changeProject (db: Db, change: Change): Promise<{ project: Project, etag: string }> {
  const id = decodeId(change.projectId)
  if (id === null) throw projectNotFound()
  const needed = change.level ?? ACCESS.edit
  const personId = change.caller.personId
  const { answer, queued } = await db.transaction().execute(async (trx) => {
    const [locked] = await lockIfAllowed(trx, { projectId: id, personId, needed })
    if (locked === undefined) throw await refusal(trx, id, personId)
    if (change.ifMatch !== null) {
      const before = await findProject(trx, id, personId)
      if (before === null) throw projectNotFound()
      const tag = projectTag(toProject(before))
      if (!change.ifMatch.includes(tag)) throw preconditionFailed(tag)
    }
    const which = change.answer ?? 'after'
    const before = which === 'after' ? null : await findProject(trx, id, personId)
    const { queued } = await change.write(trx, locked)
    const after = which === 'before' ? before : (await findProject(trx, id, personId)) ?? before
    if (after === null) throw projectNotFound()
    return { answer: toProject(after), queued }
  })
  jobsQueued(queued)
  return { project: answer, etag: projectTag(answer) }
}

/** Writes one text column of a project, unless it holds the value already: the row as written, if it was. */
const setText = (column: 'name' | 'description') => statement(['id', 'value'], (db, { id, value }: { id: string, value: string }) =>
  db.updateTable('projects')
    .set({ [column]: value, updated_at: sql`now()` })
    .where('id', '=', id)
    .where(column, 'is distinct from', value)
    .returning(['id', 'name', 'company_id']))
const SET_TEXT = { name: setText('name'), description: setText('description') }

/**
 * Sets one of the locked project's own columns, unless it holds the value already
 * (then nothing is written, nor recorded): the row as written, or undefined.
 */
export async function setColumn (trx: Transaction<Database>, project: LockedProject, set: { name: string } | { description: string }) {
  const [column, value] = Object.entries(set)[0] as ['name' | 'description', string]
  const [row] = await SET_TEXT[column](trx, { id: project.id, value })
  return row
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
