// POST /api/external/v1/projects/create_contributor: add a person to a project.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { invalidInput } from '../../errors.js'
import { changeProject } from '../change.js'
import { recordActivity } from '../activity.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { contributorOf, described, grantable, levelOf, responsibility, roleFree, type Contributor } from '../contributors.js'
import { companyPerson } from '../leaders.js'
import { personId, requireId } from '../rules.js'
import { notifyPeople, subscribeInvited } from '../subscriptions.js'
import { ContributorResponseSchema, CreateContributorBodySchema, NO_EDITABLE_PROJECT, UpdateProjectHeadersSchema } from '../schemas.js'

const createContributor: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/create_contributor', {
    schema: {
      operationId: 'createProjectContributor',
      tags: ['projects'],
      summary: 'Add a contributor to a project',
      description: 'Adds `person_id` (a person of the project\'s company, not suspended, not yet on the project: else ' +
        '400) to a project the token\'s person may edit (access level 70 or more), with a `responsibility` and the ' +
        'access `permissions` give (`view_access` 10, `comment_access` 40, `edit_access` 70, `full_access` 100; more ' +
        'than the caller has is 403). `role` is `contributor` unless given; a champion or reviewer is added only ' +
        'when the project has none (else 400: use update_champion or update_reviewer). The person is subscribed to the ' +
        'project and notified. A `project_contributor_addition` activity and a `project.contributor_added` webhook ' +
        'event are recorded. Needs a write token. Answers the contributor (Operately\'s answer) and the whole project ' +
        `as the person sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: CreateContributorBodySchema,
      response: { 200: ContributorResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/person_id', 'is a contributor of the project already'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const body = request.body
    const projectId = requireId(body.project_id, '/project_id')
    const personUuid = personId(body.person_id, '/person_id')
    const duty = responsibility(body.responsibility)
    const role = body.role ?? 'contributor'
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    let shown: Contributor | undefined
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      async write (trx, before) {
        const person = await companyPerson(trx, before.company_id, personUuid, '/person_id')
        const level = grantable(body.permissions, await levelOf(trx, before.id, caller.personId))
        const existing = await trx.selectFrom('project_contributors').select('id').where('project_id', '=', before.id).where('person_id', '=', person.id).executeTakeFirst()
        if (existing !== undefined) throw invalidInput('/person_id', 'is a contributor of the project already')
        await roleFree(trx, before.id, role)
        const inserted = await trx.insertInto('project_contributors')
          .values({ project_id: before.id, person_id: person.id, role, responsibility: duty, access_level: level })
          .returning('id').executeTakeFirstOrThrow()
        await subscribeInvited(trx, before.id, person.id)
        shown = await contributorOf(trx, before.id, inserted.id)
        const recorded = await recordActivity(trx, caller, before, {
          action: 'project_contributor_addition',
          content: { person_id: person.id, contributor_id: inserted.id, responsibility: duty, role },
          event: { type: 'project.contributor_added', change: { contributor: described(shown!) } }
        })
        await notifyPeople(trx, { id: recorded.activityId, projectId: before.id, authorId: caller.personId, action: 'project_contributor_addition' }, [person.id])
        return recorded
      }
    })
    reply.header('etag', entityTag(etag))
    const { personId: _, ...contributor } = shown as Contributor & { personId: string }
    return { contributor, project }
  })
}

export default createContributor
