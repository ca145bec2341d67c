// POST /api/external/v1/projects/update_parent_goal: link a project to a goal, or unlink it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { sluggedId } from '../../ids.js'
import { mutationErrors, preconditionErrors, invalidExample } from '../../http/responses.js'
import { Nullable } from '../../schemas/common.js'
import { recordActivity } from '../activity.js'
import { changeProject, setColumns } from '../change.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { findGoal, goalNotFound } from '../lookups.js'
import { requireId } from '../rules.js'
import { EXAMPLE_ID, NO_EDITABLE_PROJECT, SuccessProjectResponseSchema, UpdateProjectHeadersSchema } from '../schemas.js'
import { notifySubscribers } from '../subscriptions.js'

const UpdateParentGoalBodySchema = Type.Object({
  project_id: Type.String({ description: 'Project id (or canonical UUID)' }),
  goal_id: Nullable(Type.String({ description: "A goal of the project's company; null unlinks the project" }))
}, { additionalProperties: false, examples: [{ project_id: EXAMPLE_ID, goal_id: null }] })

const updateParentGoal: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/update_parent_goal', {
    schema: {
      operationId: 'updateProjectParentGoal',
      tags: ['projects'],
      summary: "Set a project's goal",
      description: 'Links a project the token\'s person may edit (access level 70 or more) to a goal of its company ' +
        '(`goal_id`, required), or unlinks it (`null`). A goal that is unknown, of another company or archived is 404 ' +
        '`goal not found`, after the project\'s own checks. A `project_goal_connection` activity is recorded (Operately\'s ' +
        'name, for a link and an unlink alike), the `project.goal_changed` event queued and the subscribers notified, ' +
        'unless the goal is the current one: that succeeds and records nothing. Needs a write token. Answers ' +
        `Operately's \`success\` and the whole project as the person sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: UpdateParentGoalBodySchema,
      response: { 200: SuccessProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/goal_id', 'must not be blank'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const goalId = request.body.goal_id === null ? null : requireId(request.body.goal_id, '/goal_id')
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      async write (trx, before) {
        // Only a goal of the caller's company and the project's.
        if (goalId !== null && caller.companyId !== before.company_id) throw goalNotFound()
        const goal = goalId === null ? null : await findGoal(trx, goalId, before.company_id)
        const previous = before.goal_id === null ? null : await trx.selectFrom('goals').select(['id', 'name']).where('id', '=', before.goal_id).executeTakeFirst() ?? null
        const changed = await setColumns(trx, before, { goal_id: goal?.id ?? null })
        if (changed === undefined) return { queued: 0 }
        const named = (g: { id: string, name: string } | null) => g === null ? null : { id: sluggedId(g.id, g.name), name: g.name }
        const recorded = await recordActivity(trx, caller, changed, {
          action: 'project_goal_connection',
          content: { goal_id: goal?.id ?? null, goal_name: goal?.name ?? null, previous_goal_id: previous?.id ?? null, previous_goal_name: previous?.name ?? null },
          event: { type: 'project.goal_changed', change: { goal: named(goal), previous_goal: named(previous) } }
        })
        await notifySubscribers(trx, { id: recorded.activityId, projectId: changed.id, authorId: caller.personId, action: 'project_goal_connection' }, [])
        return recorded
      }
    })
    reply.header('etag', entityTag(etag))
    return { success: true, project }
  })
}

export default updateParentGoal
