// POST /api/external/v1/projects/update_champion and update_reviewer: hand the
// project's champion or reviewer role to another person (leaders.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { ACCESS } from '../access.js'
import { changeProject } from '../change.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { personId, requireId } from '../rules.js'
import { handOver, type Leader } from '../leaders.js'
import { NO_EDITABLE_PROJECT, SuccessResponseSchema, UpdateChampionBodySchema, UpdateProjectHeadersSchema, UpdateReviewerBodySchema } from '../schemas.js'

const BODY = { champion: UpdateChampionBodySchema, reviewer: UpdateReviewerBodySchema }
const title = (role: Leader) => role.charAt(0).toUpperCase() + role.slice(1)

export function updateLeader (role: Leader): FastifyPluginAsyncTypebox {
  const field = `${role}_id` as const
  return async (fastify) => {
    fastify.post(`/update_${role}`, {
      schema: {
        operationId: `updateProject${title(role)}`,
        tags: ['projects'],
        summary: `Change a project's ${role}`,
        description: `Makes \`${field}\` the ${role} of a project the token's person has full access to (level 100; ` +
          `edit access is 403). The new ${role} must be a person of the project's company who is not suspended (400 ` +
          `otherwise); they become a contributor with the role ${role}, or their binding takes that role, and are ` +
          `subscribed to the project. The previous ${role} stays on as a contributor with full access. \`null\` leaves the ` +
          `project without a ${role}. A \`project_${role}_updating\` activity and a \`project.${role}_changed\` webhook ` +
          `event are recorded and the project's subscribers, the new ${role} among them, are notified; naming the ` +
          `current ${role} succeeds and records nothing. Needs a write token. Answers Operately's \`success\` and the ` +
          `whole project as the person sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
        security: [{ bearerAuth: [] }],
        headers: UpdateProjectHeadersSchema,
        body: BODY[role],
        response: { 200: SuccessResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample(`/${field}`, "must name a person of the project's company who is not suspended"), 404: NO_EDITABLE_PROJECT }
      }
    }, async (request, reply) => {
      const projectId = requireId(request.body.project_id, '/project_id')
      const given = (request.body as unknown as Record<typeof field, string | null>)[field]
      const leaderId = given === null ? null : personId(given, `/${field}`)
      const ifMatch = ifMatchTags(request.headers['if-match'])
      const caller = request.caller
      const { project, etag } = await changeProject(fastify.db, {
        caller,
        projectId,
        ifMatch,
        level: ACCESS.full,
        async write (trx, before) {
          return await handOver(trx, caller, before, role, leaderId) ?? { queued: 0 }
        }
      })
      reply.header('etag', entityTag(etag))
      return { success: true, project }
    })
  }
}
