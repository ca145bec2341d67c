// What the tests of a project's lifecycle operations share: a call of an operation,
// rich text, and Operately's permission tables (company, space and project levels
// of the caller -> 404, 403 or 200), each row built as people and projects.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import type { Db } from '../../../src/db/index.js'
import type { AccessLevel } from '../../../src/db/types.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, createPerson, createProject, createSpace, tokenFor } from '../../helper.js'
import { insertWebhook } from '../../webhooks/support.js'

/** POSTs `body` to projects/<op> with the token (and extra headers). */
export function post (app: FastifyInstance, token: string, op: string, body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: `/api/external/v1/projects/${op}`, headers: { authorization: `Bearer ${token}`, ...headers }, payload: body as object })
}

/** A rich-text document with one paragraph of `text`, mentioning `mentions` (person UUIDs). */
export function richText (text: string, mentions: string[] = []): string {
  return JSON.stringify({
    type: 'doc',
    content: [{ type: 'paragraph', content: [{ type: 'text', text }, ...mentions.map((id) => ({ type: 'mention', attrs: { id: shortId(id), label: 'Someone' } }))] }]
  })
}

const LEVEL: Record<string, AccessLevel> = { no_access: 0, view_access: 10, comment_access: 40, edit_access: 70, full_access: 100 }

export interface PermissionRow { company: AccessLevel, space: AccessLevel, project: AccessLevel, expected: number }

/** Operately's table, one `company space project expected` row a line (access option names). */
export function permissionTable (text: string): PermissionRow[] {
  return text.trim().split('\n').map((line) => {
    const [company, space, project, expected] = line.trim().split(/\s+/)
    return { company: LEVEL[company!]!, space: LEVEL[space!]!, project: LEVEL[project!]!, expected: Number(expected) }
  })
}

/**
 * A caller who holds the row's levels on a fresh project of the company: the
 * project's company level; its space level, the caller a member of its space; a
 * contributor binding of the project level. The project has a champion.
 */
export async function callerWithLevels (db: Db, companyId: string, champion: { id: string }, row: PermissionRow) {
  const caller = await createPerson(db, companyId)
  const space = await createSpace(db, companyId, row.space > 0 ? [caller.id] : [])
  const project = await createProject(db, space, { access: { company: row.company, space: row.space } })
  await addContributor(db, project.id, champion.id, 'champion')
  if (row.project > 0) await addContributor(db, project.id, caller.id, 'contributor', row.project)
  const token = await tokenFor(db, caller.email)
  return { caller, project, token: token.token }
}

/** A webhook endpoint of the company taking every event: a change queues a delivery for it. */
export async function everyEventWebhook (db: Db, companyId: string) {
  return await insertWebhook(db, companyId, 'https://hooks.example.com/lifecycle', {
    events: ['project.renamed', 'project.description_changed', 'project.champion_changed', 'project.reviewer_changed',
      'project.contributor_added', 'project.contributor_updated', 'project.contributor_removed', 'project.paused', 'project.resumed', 'project.closed']
  })
}

/** The deliveries queued for an event type. */
export async function deliveries (db: Db, webhookId: string, type: string) {
  return await db.selectFrom('webhook_deliveries').select(['event_id', 'event_type', 'payload']).where('webhook_id', '=', webhookId).where('event_type', '=', type as never).execute()
}

/** The notifications of an activity: whom, each once. */
export async function notified (db: Db, activityId: string): Promise<string[]> {
  return (await db.selectFrom('notifications').select('person_id').where('activity_id', '=', activityId).execute()).map((n) => n.person_id).sort()
}

/** The 400 invalid_input envelope. */
export function expect400 (t: Test, res: LightMyRequestResponse, message?: RegExp): void {
  t.equal(res.statusCode, 400, `400 (${res.body.slice(0, 160)})`)
  t.match(res.json(), { statusCode: 400, error: 'Bad Request', code: 'invalid_input' })
  if (message !== undefined) t.match(res.json().message, message)
}
