// POST /api/external/v1/projects/delete_contributor: remove a person from a project.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { ACCESS } from '../access.js'
import { changeProject, projectNotFound } from '../change.js'
import { recordActivity } from '../activity.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { contributorOf, described, projectOfContributor, type Contributor } from '../contributors.js'
import { requireId } from '../rules.js'
import { ContributorResponseSchema, DeleteContributorBodySchema, NO_EDITABLE_PROJECT, UpdateProjectHeadersSchema } from '../schemas.js'

const deleteContributor: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/delete_contributor', {
    schema: {
      operationId: 'deleteProjectContributor',
      tags: ['projects'],
      summary: 'Remove a contributor from a project',
      description: 'Removes the contributor `contrib_id` (an id of the project\'s `contributors`) from a project the ' +
        'token\'s person has full access to (level 100; edit access is 403); a champion or reviewer removed leaves the ' +
        'role empty. An unknown contributor is the 404 of a project that cannot be seen. A ' +
        '`project_contributor_removed` activity and a `project.contributor_removed` webhook event are recorded. Needs ' +
        'a write token. Answers the contributor as it was (Operately\'s answer) and the whole project as the person ' +
        `sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: DeleteContributorBodySchema,
      response: { 200: ContributorResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/contrib_id', 'must not be blank'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const contribId = requireId(request.body.contrib_id, '/contrib_id')
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { contributorId, projectId } = await projectOfContributor(fastify.db, contribId)
    let shown: Contributor | undefined
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      level: ACCESS.full,
      async write (trx, before) {
        const found = await contributorOf(trx, before.id, contributorId)
        if (found === undefined) throw projectNotFound()
        await trx.deleteFrom('project_contributors').where('id', '=', contributorId).execute()
        shown = found
        return await recordActivity(trx, caller, before, {
          action: 'project_contributor_removed',
          content: { person_id: found.personId, contributor_id: contributorId, responsibility: found.responsibility, role: found.role },
          event: { type: 'project.contributor_removed', change: { contributor: described(found) } }
        })
      }
    })
    reply.header('etag', entityTag(etag))
    const { personId: _, ...contributor } = shown as Contributor & { personId: string }
    return { contributor, project }
  })
}

export default deleteContributor
