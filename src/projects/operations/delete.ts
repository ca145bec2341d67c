// POST /api/external/v1/projects/delete: delete a project for good.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { ACCESS } from '../access.js'
import { recordActivity } from '../activity.js'
import { changeProject } from '../change.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { requireId } from '../rules.js'
import { EXAMPLE_ID, NO_EDITABLE_PROJECT, ProjectResponseSchema, UpdateProjectHeadersSchema } from '../schemas.js'

const DeleteProjectBodySchema = Type.Object({
  project_id: Type.String({ description: 'Project id (or canonical UUID)' })
}, { additionalProperties: false, examples: [{ project_id: EXAMPLE_ID }] })

const deleteProject: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/delete', {
    schema: {
      operationId: 'deleteProject',
      tags: ['projects'],
      summary: 'Delete a project',
      description: 'Deletes a project the token\'s person has full access to (level 100), for good, as Operately does: ' +
        'the project and everything hanging off it (people, milestones, check-ins, subscriptions, pins), its ' +
        'activities, their notifications and their webhook deliveries not yet made. Afterwards it is 404 to every ' +
        'operation and absent from projects/list and notifications/list. A `project_deleted` activity is recorded ' +
        'without the project (it outlives it) and the `project.deleted` event queued. Needs a write token. Answers the ' +
        `whole project as the person saw it right before the deletion, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: DeleteProjectBodySchema,
      response: { 200: ProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/project_id', 'must not be blank'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      level: ACCESS.full,
      answer: 'before',
      async write (trx, before) {
        const recorded = await recordActivity(trx, caller, before, {
          action: 'project_deleted',
          content: { project_id: before.id, name: before.name, space_id: before.space_id },
          event: { type: 'project.deleted', change: {} },
          detached: true
        })
        await trx.deleteFrom('projects').where('id', '=', before.id).execute()
        return recorded
      }
    })
    reply.header('etag', entityTag(etag))
    return { project }
  })
}

export default deleteProject
