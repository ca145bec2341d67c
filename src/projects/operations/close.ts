// POST /api/external/v1/projects/close: close a project with its retrospective.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { invalidInput } from '../../errors.js'
import { shortId } from '../../ids.js'
import { changeProject } from '../change.js'
import { recordActivity } from '../activity.js'
import { announce, audience, checkAudience } from '../announce.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { checkDescription, requireId } from '../rules.js'
import { CloseBodySchema, CloseResponseSchema, NO_EDITABLE_PROJECT, UpdateProjectHeadersSchema } from '../schemas.js'

const close: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/close', {
    schema: {
      operationId: 'closeProject',
      tags: ['projects'],
      summary: 'Close a project',
      description: 'Closes an active or paused project the token\'s person may edit (access level 70 or more): its ' +
        'state becomes `closed`, with `closed_at` and `success_status` (`achieved` or `missed`), and its retrospective ' +
        'is written (`retrospective`: a string holding JSON text, a rich-text document, checked as a description is). ' +
        'A closed project cannot be closed again (400). `subscriber_ids` and `send_notifications_to_everyone` work as ' +
        'in projects/pause. A `project_closed` activity and a `project.closed` webhook event are recorded. Needs a write ' +
        'token. Answers the retrospective (Operately\'s answer) and the whole project as the person sees it after the ' +
        `change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: CloseBodySchema,
      response: { 200: CloseResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('', 'the project is closed already'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const content = checkDescription(request.body.retrospective, '/retrospective')
    const successStatus = request.body.success_status
    const chosen = audience(request.body)
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      async write (trx, before) {
        if (before.state === 'closed') throw invalidInput('', 'the project is closed already')
        await checkAudience(trx, before, chosen.chosen)
        const closed = await trx.updateTable('projects')
          .set({ state: 'closed', success_status: successStatus, closed_at: sql`now()`, updated_at: sql`now()` })
          .where('id', '=', before.id)
          .returning('closed_at')
          .executeTakeFirstOrThrow()
        const retrospective = await trx.insertInto('project_retrospectives')
          .values({ project_id: before.id, author_id: caller.personId, content, success_status: successStatus, closed_at: closed.closed_at })
          .returning('id')
          .executeTakeFirstOrThrow()
        const recorded = await recordActivity(trx, caller, before, {
          action: 'project_closed',
          content: { retrospective_id: retrospective.id, success_status: successStatus },
          event: { type: 'project.closed', change: { old_state: before.state, new_state: 'closed', success_status: successStatus, retrospective_id: shortId(retrospective.id) } }
        })
        await announce(trx, caller, before, { id: recorded.activityId, action: 'project_closed' }, content, chosen)
        return recorded
      }
    })
    reply.header('etag', entityTag(etag))
    return { retrospective: { ...project.retrospective!, champion: project.champion, reviewer: project.reviewer }, project }
  })
}

export default close
