// POST /api/external/v1/projects/update_champion: hand the project's champion role to another person.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { ACCESS } from '../access.js'
import { changeProject } from '../change.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { handOver } from '../leaders.js'
import { personId, requireId } from '../rules.js'
import { NO_EDITABLE_PROJECT, SuccessResponseSchema, UpdateChampionBodySchema, UpdateProjectHeadersSchema } from '../schemas.js'

const updateChampion: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/update_champion', {
    schema: {
      operationId: 'updateProjectChampion',
      tags: ['projects'],
      summary: "Change a project's champion",
      description: 'Makes `champion_id` the champion of a project the token\'s person has full access to (level 100; ' +
        'edit access is 403). The new champion must be a person of the project\'s company who is not suspended (400 ' +
        'otherwise); they become a contributor with the role champion, or their binding takes that role, and are ' +
        'subscribed to the project. The previous champion stays on as a contributor with full access. `null` leaves the ' +
        'project without a champion. A `project_champion_updating` activity and a `project.champion_changed` webhook ' +
        'event are recorded and the project\'s subscribers, the new champion among them, are notified; naming the ' +
        'current champion succeeds and records nothing. Needs a write token. Answers Operately\'s `success` and the ' +
        `whole project as the person sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: UpdateChampionBodySchema,
      response: { 200: SuccessResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/champion_id', "must name a person of the project's company who is not suspended"), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const championId = request.body.champion_id === null ? null : personId(request.body.champion_id, '/champion_id')
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      level: ACCESS.full,
      async write (trx, before) {
        return await handOver(trx, caller, before, 'champion', championId) ?? { queued: 0 }
      }
    })
    reply.header('etag', entityTag(etag))
    return { success: true, project }
  })
}

export default updateChampion
