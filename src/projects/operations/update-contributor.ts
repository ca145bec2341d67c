// POST /api/external/v1/projects/update_contributor: change a contributor's
// responsibility, access or role, or hand a champion's or reviewer's binding to another person.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from 'typebox'
import { httpErrors } from '@fastify/sensible'
import type { Transaction, Updateable } from 'kysely'
import type { Database, ProjectContributorsTable } from '../../db/types.js'
import { invalidExample, mutationErrors, preconditionErrors } from '../../http/responses.js'
import { invalidInput } from '../../errors.js'
import { ACCESS } from '../access.js'
import { changeProject, projectNotFound, type LockedProject } from '../change.js'
import { recordActivity } from '../activity.js'
import { entityTag, ifMatchTags, IF_MATCH } from '../conditional.js'
import { contributorOf, described, grantable, levelOf, projectOfContributor, responsibility, roleFree, type Contributor } from '../contributors.js'
import { transferRole } from '../leaders.js'
import { personId, requireId } from '../rules.js'
import { ContributorResponseSchema, NO_EDITABLE_PROJECT, UpdateContributorBodySchema, UpdateProjectHeadersSchema } from '../schemas.js'

type Body = Static<typeof UpdateContributorBodySchema>
type Found = Contributor & { personId: string }

/** The binding's new columns; 403 when the caller may not set the access asked for. */
async function changes (trx: Transaction<Database>, project: LockedProject, found: Found, body: Body, callerId: string): Promise<Updateable<ProjectContributorsTable>> {
  const set: Updateable<ProjectContributorsTable> = {}
  if (body.responsibility != null) set.responsibility = responsibility(body.responsibility)
  if (body.permissions != null) {
    const callerLevel = await levelOf(trx, project.id, callerId)
    if (callerLevel < await levelOf(trx, project.id, found.personId)) throw httpErrors.forbidden('you may not change the access of someone who has more than you')
    set.access_level = grantable(body.permissions, callerLevel)
  }
  if (body.role != null && body.role !== found.role) {
    await roleFree(trx, project.id, body.role, null)
    set.role = body.role
    // A champion or reviewer who becomes a contributor keeps edit access unless told (Operately's default).
    if (body.role === 'contributor' && set.access_level === undefined) set.access_level = ACCESS.edit
  }
  return set
}

const updateContributor: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/update_contributor', {
    schema: {
      operationId: 'updateProjectContributor',
      tags: ['projects'],
      summary: "Change a project's contributor",
      description: 'Changes the contributor `contrib_id` (an id of the project\'s `contributors`) of a project the ' +
        'token\'s person may edit (access level 70 or more): its `responsibility`, its access (`permissions`: not more ' +
        'than the caller has, and only on someone who has no more than the caller: else 403) or its `role` (a champion ' +
        'or reviewer only when the project has none: else 400). `person_id` hands a champion\'s or reviewer\'s binding ' +
        'to another person of the company, who takes the role while the previous holder stays a contributor with full ' +
        'access (as update_champion does); a plain contributor\'s binding is not handed over (400). A ' +
        '`project_contributor_edited` activity and a `project.contributor_updated` webhook event are recorded, unless ' +
        'nothing changes. Needs a write token. Answers the contributor (Operately\'s answer; after a hand-over, the new ' +
        `holder) and the whole project as the person sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: UpdateContributorBodySchema,
      response: { 200: ContributorResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/role', 'the project has a champion already: change it with update_champion'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const body = request.body
    const contribId = requireId(body.contrib_id, '/contrib_id')
    const newPerson = body.person_id == null ? null : personId(body.person_id, '/person_id')
    if (body.responsibility != null) responsibility(body.responsibility)
    const ifMatch = ifMatchTags(request.headers['if-match'])
    const caller = request.caller
    const { contributorId, projectId } = await projectOfContributor(fastify.db, contribId)
    let shown: Found | undefined
    const { project, etag } = await changeProject(fastify.db, {
      caller,
      projectId,
      ifMatch,
      async write (trx, before) {
        const found = await contributorOf(trx, before.id, contributorId)
        if (found === undefined) throw projectNotFound()
        let shownId = contributorId
        if (newPerson !== null && newPerson !== found.personId) {
          if (found.role === 'contributor') throw invalidInput('/person_id', "only a champion's or a reviewer's binding is handed to another person")
          await transferRole(trx, before, found.role, newPerson, '/person_id')
          shownId = (await trx.selectFrom('project_contributors').select('id').where('project_id', '=', before.id).where('role', '=', found.role).executeTakeFirstOrThrow()).id
        }
        const set = await changes(trx, before, found, body, caller.personId)
        if (Object.keys(set).length > 0) await trx.updateTable('project_contributors').set(set).where('id', '=', shownId).execute()
        shown = await contributorOf(trx, before.id, shownId)
        const previous = described(found)
        const updated = described(shown!)
        if (JSON.stringify(previous) === JSON.stringify(updated)) return { queued: 0 }
        return await recordActivity(trx, caller, before, {
          action: 'project_contributor_edited',
          content: { previous_contributor: { person_id: found.personId, role: found.role, permissions: found.access_level }, updated_contributor: { person_id: shown!.personId, role: shown!.role, permissions: shown!.access_level } },
          event: { type: 'project.contributor_updated', change: { previous, updated } }
        })
      }
    })
    reply.header('etag', entityTag(etag))
    const { personId: _, ...contributor } = shown!
    return { contributor, project }
  })
}

export default updateContributor
