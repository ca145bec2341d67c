// POST /api/external/v1/projects/update_name: rename a project.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { changeProject, setColumn } from '../change.js'
import { recordActivity } from '../activity.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { normalizeName, requireId } from '../rules.js'
import { NAME_MAX_LENGTH, NO_EDITABLE_PROJECT, ProjectResponseSchema, UpdateNameBodySchema, UpdateProjectHeadersSchema } from '../schemas.js'

const updateName: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/update_name', {
    schema: {
      operationId: 'updateProjectName',
      tags: ['projects'],
      summary: 'Rename a project',
      description: 'Sets the name of a project the token\'s person may edit (access level 70 or more). The name is ' +
        `trimmed and must then be 1 to ${NAME_MAX_LENGTH} characters without control characters. Closed and paused projects may be ` +
        'renamed; archived ones are 404. A `project_renamed` activity is recorded, unless the name is the current ' +
        'one: that succeeds and records nothing. Needs a write token. Answers the whole project as the person sees ' +
        `it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: UpdateNameBodySchema,
      response: { 200: ProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/name', 'must not be blank'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const name = normalizeName(request.body.name)
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      async write (trx, before) {
        const renamed = await setColumn(trx, before, { name })
        if (renamed === undefined) return { queued: 0 }
        return await recordActivity(trx, caller, renamed, {
          action: 'project_renamed',
          content: { old_name: before.name, new_name: name },
          event: { type: 'project.renamed', change: { old_name: before.name, new_name: name } }
        })
      }
    })
    reply.header('etag', entityTag(etag))
    return { project }
  })
}

export default updateName
