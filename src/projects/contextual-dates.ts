// A project's start or due date (Operately's contextual date, or null), set the
// way both projects/update_start_date and projects/update_due_date set it: the
// date is checked (rules.ts), the edge's three timeframe columns are written
// unless they hold it already, and the change is recorded with the old and the
// new date. The two operations differ in their field, action, event and who is told.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import type { WebhookEvent } from '../db/types.js'
import { invalidExample, mutationErrors, preconditionErrors } from '../http/responses.js'
import { Nullable } from '../schemas/common.js'
import { recordActivity } from './activity.js'
import { changeProject, setColumns, type LockedProject } from './change.js'
import { entityTag, ifMatchTags, IF_MATCH } from './conditional.js'
import { checkContextualDate, requireId } from './rules.js'
import { ContextualDateInputSchema, EXAMPLE_ID, NO_EDITABLE_PROJECT, SuccessProjectResponseSchema, UpdateProjectHeadersSchema, type ContextualDateInput } from './schemas.js'
import { notifySubscribers } from './subscriptions.js'

export interface DateOperation {
  edge: 'start' | 'end'
  route: string
  operationId: string
  summary: string
  field: 'start_date' | 'due_date'
  action: string
  event: WebhookEvent
  /** Operately tells the subscribers of a new due date, and nobody of a new start date. */
  notify: boolean
}

/** The edge's date as stored, or null. */
function storedDate (row: LockedProject, edge: 'start' | 'end'): ContextualDateInput | null {
  const type = row[`timeframe_${edge}_type`]
  const value = row[`timeframe_${edge}_value`]
  const date = row[`timeframe_${edge}_date`]
  return type === null || value === null || date === null ? null : { date, date_type: type, value }
}

export function dateOperation (op: DateOperation): FastifyPluginAsyncTypebox {
  const body = Type.Object({
    project_id: Type.String({ description: 'Project id (or canonical UUID)' }),
    [op.field]: Nullable(ContextualDateInputSchema)
  }, { additionalProperties: false, examples: [{ project_id: EXAMPLE_ID, [op.field]: { date: '2027-03-31', date_type: 'quarter', value: 'Q1 2027' } }] })
  return async (fastify) => {
    fastify.post(op.route, {
      schema: {
        operationId: op.operationId,
        tags: ['projects'],
        summary: op.summary,
        description: `Sets the project's ${op.field === 'start_date' ? 'start' : 'due'} date (\`${op.field}\`, required): Operately's contextual date ` +
          '`{date, date_type, value}` or null for none, on a project the token\'s person may edit (access level 70 or more). ' +
          'The date must exist; a month, quarter or year must be labelled as its date gives it (`Jun 2026`, `Q2 2026`, ' +
          '`2026`); it is answered exactly as sent. As in Operately, a due date before the start date is accepted. A ' +
          `\`${op.action}\` activity is recorded and the \`${op.event}\` event queued${op.notify ? ', and the subscribers are notified' : ''}, ` +
          'unless the date is the current one: that succeeds and records nothing. Archived projects are 404. Needs a write ' +
          `token. Answers Operately's \`success\` and the whole project as the person sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
        security: [{ bearerAuth: [] }],
        headers: UpdateProjectHeadersSchema,
        body,
        response: { 200: SuccessProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample(`/${op.field}/date`, 'must be a calendar date (YYYY-MM-DD)'), 404: NO_EDITABLE_PROJECT }
      }
    }, async (request, reply) => {
      const input = request.body as { project_id: string } & Record<string, ContextualDateInput | null>
      const projectId = requireId(input.project_id, '/project_id')
      const date = checkContextualDate(input[op.field]!, `/${op.field}`)
      const ifMatch = ifMatchTags(request.headers['if-match'])
      const caller = request.caller
      const { project, etag } = await changeProject(fastify.db, {
        caller,
        projectId,
        ifMatch,
        async write (trx, before) {
          const old = storedDate(before, op.edge)
          const changed = await setColumns(trx, before, {
            [`timeframe_${op.edge}_type`]: date?.date_type ?? null,
            [`timeframe_${op.edge}_value`]: date?.value ?? null,
            [`timeframe_${op.edge}_date`]: date?.date ?? null
          })
          if (changed === undefined) return { queued: 0 }
          const change = { [`old_${op.field}`]: old, [`new_${op.field}`]: date }
          const recorded = await recordActivity(trx, caller, changed, { action: op.action, content: change, event: { type: op.event, change } })
          if (op.notify) await notifySubscribers(trx, { id: recorded.activityId, projectId: changed.id, authorId: caller.personId, action: op.action }, [])
          return recorded
        }
      })
      reply.header('etag', entityTag(etag))
      return { success: true, project }
    })
  }
}
