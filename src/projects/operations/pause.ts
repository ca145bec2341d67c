// POST /api/external/v1/projects/pause: pause an active project.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { invalidInput } from '../../errors.js'
import { changeProject } from '../change.js'
import { recordActivity } from '../activity.js'
import { announce, audience, checkAudience } from '../announce.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { checkDescription, requireId } from '../rules.js'
import { NO_EDITABLE_PROJECT, PauseBodySchema, ProjectResponseSchema, UpdateProjectHeadersSchema } from '../schemas.js'

const pause: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/pause', {
    schema: {
      operationId: 'pauseProject',
      tags: ['projects'],
      summary: 'Pause a project',
      description: 'Pauses an active project the token\'s person may edit (access level 70 or more): its state becomes ' +
        '`paused`. A paused or closed project cannot be paused (400). `message` says why: a string holding JSON text ' +
        '(a rich-text document), checked as a description is; the people it mentions are subscribed to the project. ' +
        'The people of `subscriber_ids`, those mentioned, and with `send_notifications_to_everyone` the contributors ' +
        'are notified (if they can view the project; never the author). A `project_pausing` activity and a ' +
        '`project.paused` webhook event are recorded. Needs a write token. Answers the whole project as the person ' +
        `sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: PauseBodySchema,
      response: { 200: ProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('', 'a closed project cannot be paused'), 404: NO_EDITABLE_PROJECT }
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
        if (before.state === 'closed') throw invalidInput('', 'a closed project cannot be paused')
        if (before.state === 'paused') throw invalidInput('', 'the project is paused already')
        await checkAudience(trx, before, chosen.chosen)
        await trx.updateTable('projects').set({ state: 'paused', updated_at: sql`now()` }).where('id', '=', before.id).execute()
        const recorded = await recordActivity(trx, caller, before, {
          action: 'project_pausing',
          content: { message },
          event: { type: 'project.paused', change: { old_state: before.state, new_state: 'paused' } }
        })
        await announce(trx, caller, before, { id: recorded.activityId, action: 'project_pausing' }, message, chosen)
        return recorded
      }
    })
    reply.header('etag', entityTag(etag))
    return { project }
  })
}

export default pause
