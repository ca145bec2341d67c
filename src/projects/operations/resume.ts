// POST /api/external/v1/projects/resume: resume a paused project.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { invalidInput } from '../../errors.js'
import { changeProject } from '../change.js'
import { recordActivity } from '../activity.js'
import { announce, audience, checkAudience } from '../announce.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { checkDescription, requireId } from '../rules.js'
import { NO_EDITABLE_PROJECT, ProjectResponseSchema, ResumeBodySchema, UpdateProjectHeadersSchema } from '../schemas.js'

const resume: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/resume', {
    schema: {
      operationId: 'resumeProject',
      tags: ['projects'],
      summary: 'Resume a paused project',
      description: 'Resumes a paused project the token\'s person may edit (access level 70 or more): its state becomes ' +
        '`active`, and a check-in that was due in the past (or never scheduled) is scheduled a week from now. Only a ' +
        'paused project can be resumed (400 otherwise; a closed one stays closed). `message`, `subscriber_ids` and ' +
        '`send_notifications_to_everyone` work as in projects/pause. A `project_resuming` activity and a ' +
        '`project.resumed` webhook event are recorded. Needs a write token. Answers the whole project as the person ' +
        `sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: ResumeBodySchema,
      response: { 200: ProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('', 'only a paused project can be resumed'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const message = checkDescription(request.body.message, '/message')
    const chosen = audience(request.body)
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      async write (trx, before) {
        if (before.state === 'closed') throw invalidInput('', 'a closed project cannot be resumed')
        if (before.state !== 'paused') throw invalidInput('', 'only a paused project can be resumed')
        await checkAudience(trx, before, chosen.chosen)
        await trx.updateTable('projects').set({
          state: 'active',
          next_check_in_scheduled_at: sql`CASE WHEN next_check_in_scheduled_at IS NULL OR next_check_in_scheduled_at < now()
            THEN now() + interval '7 days' ELSE next_check_in_scheduled_at END`,
          updated_at: sql`now()`
        }).where('id', '=', before.id).execute()
        const recorded = await recordActivity(trx, caller, before, {
          action: 'project_resuming',
          content: { message },
          event: { type: 'project.resumed', change: { old_state: 'paused', new_state: 'active' } }
        })
        await announce(trx, caller, before, { id: recorded.activityId, action: 'project_resuming' }, message, chosen)
        return recorded
      }
    })
    reply.header('etag', entityTag(etag))
    return { project }
  })
}

export default resume
