// POST /api/external/v1/projects/update_description: replace a project's description.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { changeProject, setColumn } from '../change.js'
import { recordActivity } from '../activity.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { checkDescription, requireId } from '../rules.js'
import { mentionedPeople } from '../mentions.js'
import { notifySubscribers, subscribeMentioned } from '../subscriptions.js'
import {
  DESCRIPTION_MAX_BYTES, DESCRIPTION_MAX_DEPTH, NO_EDITABLE_PROJECT, ProjectResponseSchema, UpdateDescriptionBodySchema, UpdateProjectHeadersSchema
} from '../schemas.js'

/** A webhook event carries a description up to this size; a longer one is flagged, without its text. */
export const WEBHOOK_DESCRIPTION_MAX_BYTES = 64 * 1024

const updateDescription: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/update_description', {
    schema: {
      operationId: 'updateProjectDescription',
      tags: ['projects'],
      summary: "Replace a project's description",
      description: 'Sets the description of a project the token\'s person may edit (access level 70 or more). The ' +
        'description is a string holding JSON text (usually a rich-text document, any JSON value but null), at most ' +
        `${DESCRIPTION_MAX_BYTES / 1024} KiB and nested at most ${DESCRIPTION_MAX_DEPTH} deep; every later read returns the very same string. Closed and paused ` +
        'projects may be described; archived ones are 404. A `project_description_changed` activity is recorded, ' +
        'unless the description is the current one: that succeeds and records nothing. The people the document ' +
        'mentions are subscribed to the project, and its subscribers are notified. Needs a write token. Answers ' +
        `the whole project as the person sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: UpdateDescriptionBodySchema,
      response: { 200: ProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/description', 'must be a JSON text'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const description = checkDescription(request.body.description)
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      async write (trx, before) {
        const changed = await setColumn(trx, before, { description })
        if (changed === undefined) return { queued: 0 }
        const mentioned = await subscribeMentioned(trx, changed, mentionedPeople(description))
        const bytes = Buffer.byteLength(description, 'utf8')
        const recorded = await recordActivity(trx, caller, changed, {
          action: 'project_description_changed',
          content: { old_description: before.description, new_description: description },
          event: {
            type: 'project.description_changed',
            change: {
              description: bytes <= WEBHOOK_DESCRIPTION_MAX_BYTES ? description : null,
              description_omitted: bytes > WEBHOOK_DESCRIPTION_MAX_BYTES,
              description_bytes: bytes
            }
          }
        })
        await notifySubscribers(trx, { id: recorded.activityId, projectId: changed.id, authorId: caller.personId, action: 'project_description_changed' }, mentioned)
        return recorded
      }
    })
    reply.header('etag', entityTag(etag))
    return { project }
  })
}

export default updateDescription
