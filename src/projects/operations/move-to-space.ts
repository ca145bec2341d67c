// POST /api/external/v1/projects/move_to_space: move a project to another space of its company.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { decodeId, shortId } from '../../ids.js'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { ACCESS } from '../access.js'
import { recordActivity } from '../activity.js'
import { changeProject, setColumns } from '../change.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { spaceNotFound } from '../lookups.js'
import { requireId } from '../rules.js'
import { EXAMPLE_ID, NO_EDITABLE_PROJECT, ProjectResponseSchema, UpdateProjectHeadersSchema } from '../schemas.js'
import { findSpace } from '../space-access.js'
import { notifySubscribers } from '../subscriptions.js'

const MoveToSpaceBodySchema = Type.Object({
  project_id: Type.String({ description: 'Project id (or canonical UUID)' }),
  space_id: Type.String({ description: "The target space, of the project's company" })
}, { additionalProperties: false, examples: [{ project_id: EXAMPLE_ID, space_id: '4mJ8nC2f0Y3kqf1Sg5bWQr' }] })

const moveToSpace: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/move_to_space', {
    schema: {
      operationId: 'moveProjectToSpace',
      tags: ['projects'],
      summary: 'Move a project to another space',
      description: 'Moves a project the token\'s person has full access to (level 100) to a space of its company they ' +
        'can view. A target space that is unknown, of another company or invisible to them is 404 `space not found`, ' +
        'after the project\'s own checks. The project keeps its access levels: its `space` level now applies to the ' +
        'members of the new space, as in Operately. A `project_moved` activity is recorded, the `project.moved` event ' +
        'queued and the subscribers notified; moving a project to its own space succeeds and records nothing. Needs a ' +
        'write token. Answers the whole project as the person sees it after the move, with its `ETag`; when the move ' +
        'took it out of their sight (its space level was their only access), as they saw it right before. ' + IF_MATCH,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: MoveToSpaceBodySchema,
      response: { 200: ProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/space_id', 'must not be blank'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const spaceId = requireId(request.body.space_id, '/space_id')
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      level: ACCESS.full,
      answer: 'after_or_before',
      async write (trx, before) {
        const id = decodeId(spaceId)
        const target = id === null ? null : await findSpace(trx, id, caller.personId)
        if (target === null || target.level < ACCESS.view || target.company_id !== before.company_id) throw spaceNotFound()
        const old = await trx.selectFrom('spaces').select(['id', 'name']).where('id', '=', before.space_id).executeTakeFirstOrThrow()
        const moved = await setColumns(trx, before, { space_id: target.id })
        if (moved === undefined) return { queued: 0 }
        const recorded = await recordActivity(trx, caller, moved, {
          action: 'project_moved',
          content: { old_space_id: old.id, new_space_id: target.id },
          event: { type: 'project.moved', change: { old_space: { id: shortId(old.id), name: old.name }, new_space: { id: shortId(target.id), name: target.name } } }
        })
        await notifySubscribers(trx, { id: recorded.activityId, projectId: moved.id, authorId: caller.personId, action: 'project_moved' }, [])
        return recorded
      }
    })
    reply.header('etag', entityTag(etag))
    return { project }
  })
}

export default moveToSpace
