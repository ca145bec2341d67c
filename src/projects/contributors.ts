// A project's contributors as create/update/delete_contributor change them
// (Operately's rules): who the caller is on the project, a contributor's binding as
// the API shows it, and the checks that keep the grants within the caller's own.
import { httpErrors } from '@fastify/sensible'
import type { Transaction } from 'kysely'
import type { Db } from '../db/index.js'
import type { AccessLevel, ContributorRole, Database } from '../db/types.js'
import { invalidInput } from '../errors.js'
import { wellFormed } from '../http/input.js'
import { decodeId, shortId } from '../ids.js'
import { toPerson } from '../people/presenter.js'
import { accessLevel, contributorLevel } from './access.js'
import { projectNotFound } from './change.js'
import { CONTRIBUTOR_PERMISSIONS, NAME_MAX_LENGTH } from './schemas.js'

export type Contributor = { id: string, role: ContributorRole, responsibility: string | null, access_level: number | null, person: ReturnType<typeof toPerson> }

/** The project a contributor's id belongs to (its UUID): 404, as for a project, when there is none. */
export async function projectOfContributor (db: Db, contribId: string): Promise<{ contributorId: string, projectId: string }> {
  const id = decodeId(contribId)
  if (id === null) throw projectNotFound()
  const row = await db.selectFrom('project_contributors').select('project_id').where('id', '=', id).executeTakeFirst()
  if (row === undefined) throw projectNotFound()
  return { contributorId: id, projectId: row.project_id }
}

/** The binding as the API shows it, or undefined when it is gone (or on another project). */
export async function contributorOf (trx: Transaction<Database>, projectId: string, contributorId: string): Promise<(Contributor & { personId: string }) | undefined> {
  const row = await trx.selectFrom('project_contributors as c').innerJoin('people as pe', 'pe.id', 'c.person_id')
    .select((eb) => ['c.id', 'c.role', 'c.responsibility', contributorLevel(eb.table('c')).as('access_level'),
      'pe.id as person_id', 'pe.full_name', 'pe.email', 'pe.title', 'pe.avatar_url', 'pe.type'])
    .where('c.id', '=', contributorId).where('c.project_id', '=', projectId)
    .executeTakeFirst()
  if (row === undefined) return undefined
  const { id, role, responsibility, access_level: level, person_id: personId, ...person } = row
  return { id: shortId(id), role, responsibility, access_level: level, person: toPerson({ id: personId, ...person }), personId }
}

/** `personId`'s access level on the project. */
export async function levelOf (trx: Transaction<Database>, projectId: string, personId: string): Promise<number> {
  const row = await trx.selectFrom('projects as p').innerJoin('people as me', (join) => join.on('me.id', '=', personId))
    .select((eb) => accessLevel(eb.table('p'), eb.table('me')).as('level'))
    .where('p.id', '=', projectId)
    .executeTakeFirst()
  return row?.level ?? 0
}

/** The level of Operately's access option; 403 when it is more than the caller has. */
export function grantable (permissions: keyof typeof CONTRIBUTOR_PERMISSIONS, callerLevel: number): AccessLevel {
  const level = CONTRIBUTOR_PERMISSIONS[permissions]
  if (level > callerLevel) throw httpErrors.forbidden('you may not grant more access than you have')
  return level
}

/** A responsibility: trimmed, at most 255 characters; null when blank. */
export function responsibility (value: string, path = '/responsibility'): string | null {
  const text = wellFormed(value, path).trim()
  if ([...text].length > NAME_MAX_LENGTH) throw invalidInput(path, `must be at most ${NAME_MAX_LENGTH} characters`)
  return text === '' ? null : text
}

/** 400 when the project has a `role` (champion or reviewer) other than the binding `except`. */
export async function roleFree (trx: Transaction<Database>, projectId: string, role: ContributorRole, except: string | null = null): Promise<void> {
  if (role === 'contributor') return
  const holder = await trx.selectFrom('project_contributors').select('id')
    .where('project_id', '=', projectId).where('role', '=', role)
    .$if(except !== null, (qb) => qb.where('id', '<>', except!))
    .executeTakeFirst()
  if (holder !== undefined) throw invalidInput('/role', `the project has a ${role} already: change it with update_${role}`)
}

/** A binding as activities and webhook events name it. */
export function described (c: Contributor): Record<string, unknown> {
  return { id: c.id, role: c.role, responsibility: c.responsibility, access_level: c.access_level, person: { id: c.person.id, full_name: c.person.full_name } }
}
