// POST /api/external/v1/projects/create: start a project in a space.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import type { Transaction } from 'kysely'
import { httpErrors } from '@fastify/sensible'
import type { Caller } from '../../auth/authenticate.js'
import type { Db } from '../../db/index.js'
import type { AccessLevel, Database } from '../../db/types.js'
import { jobsQueued } from '../../db/jobs.js'
import { invalidInput } from '../../errors.js'
import { decodeId, shortId, sluggedId } from '../../ids.js'
import { invalidExample, mutationErrors } from '../../http/responses.js'
import { Nullable } from '../../schemas/common.js'
import { ACCESS } from '../access.js'
import { recordActivity } from '../activity.js'
import { entityTag } from '../conditional.js'
import { findColleague, findGoal, spaceNotFound } from '../lookups.js'
import { mentionedPeople } from '../mentions.js'
import { projectTag, toProject } from '../presenter.js'
import { findProject } from '../query.js'
import { checkDescription, dayLabel, normalizeName, optionalId, requireId } from '../rules.js'
import { ACCESS_LEVELS, DESCRIPTION_MAX_BYTES, EXAMPLE_ID, NAME_MAX_LENGTH, NO_EDITABLE_SPACE, ProjectResponseSchema } from '../schemas.js'
import { findSpace } from '../space-access.js'
import { notifySubscribers, subscribeMentioned } from '../subscriptions.js'

const Level = (who: string, absent: string) => Type.Optional(Type.Union(ACCESS_LEVELS.map((level) => Type.Literal(level)), {
  description: `Access of ${who}: 0 none, 10 view, 40 comment, 70 edit, 100 full; absent: ${absent}`
}))
const OptionalId = (what: string) => Type.Optional(Nullable(Type.String({ description: `${what}; absent or null for none` })))

const CreateProjectBodySchema = Type.Object({
  space_id: Type.String({ description: 'The space the project belongs to' }),
  name: Type.String({ description: `Trimmed, 1 to ${NAME_MAX_LENGTH} characters, no control characters` }),
  champion_id: OptionalId('The champion, a person of the company'),
  reviewer_id: OptionalId('The reviewer, a person of the company other than the champion'),
  goal_id: OptionalId('The goal the project serves, of the company'),
  description: Type.Optional(Nullable(Type.String({ description: `JSON text (a rich-text document), as update_description takes it, at most ${DESCRIPTION_MAX_BYTES / 1024} KiB` }))),
  anonymous_access_level: Level('anyone: only 10 gives anything (view), as in Operately', '0'),
  company_access_level: Level("the company's members: 0 whatever is asked when the space gives its company no access", 'the level the space gives its company'),
  space_access_level: Level("the space's members", "the level the space gives its company, at least 40 (comment)")
}, {
  additionalProperties: false,
  examples: [{ space_id: '4mJ8nC2f0Y3kqf1Sg5bWQr', name: 'Pricing page', champion_id: EXAMPLE_ID.split('-').pop(), anonymous_access_level: 0, company_access_level: 40, space_access_level: 70 }]
})

interface NewProject {
  spaceId: string
  name: string
  championId: string | null
  reviewerId: string | null
  goalId: string | null
  description: string | null
  levels: { anonymous?: AccessLevel | undefined, company?: AccessLevel | undefined, space?: AccessLevel | undefined }
}

type Person = { id: string, full_name: string } | null

const createProject: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/create', {
    schema: {
      operationId: 'createProject',
      tags: ['projects'],
      summary: 'Create a project',
      description: 'Starts a project in a space the token\'s person may edit in (edit access to the space: a member with ' +
        'edit or full access, a company member when the space gives its company edit access, or a company admin). An ' +
        'unknown or invisible space is 404, a visible one without edit access 403. Champion and reviewer must be ' +
        'people of the company (400), the goal a goal of the company (404). As in Operately, the champion and reviewer ' +
        'become contributors with their roles, and the creator a contributor with full access unless one of them; the ' +
        'three are subscribed to the project (`invited`), and the people the description mentions too (`mentioned`). ' +
        'An access level left out is Operately\'s default for the space (as its MCP tool sets them): none for anyone, ' +
        'the space\'s own company level for the company, and that level but at least comment (40) for the space. ' +
        'The project starts today (a `day` start date), active, with Operately\'s task statuses. A `project_created` ' +
        'activity is recorded, the `project.created` webhook event queued and the subscribers but the creator ' +
        'notified. Needs a write token. Answers the whole project as the person sees it, with its `ETag`.',
      security: [{ bearerAuth: [] }],
      body: CreateProjectBodySchema,
      response: { 200: ProjectResponseSchema, ...mutationErrors, 400: invalidExample('/name', 'must not be blank'), 404: NO_EDITABLE_SPACE }
    }
  }, async (request, reply) => {
    const body = request.body
    const input: NewProject = {
      spaceId: requireId(body.space_id, '/space_id'),
      name: normalizeName(body.name),
      championId: optionalId(body.champion_id, '/champion_id'),
      reviewerId: optionalId(body.reviewer_id, '/reviewer_id'),
      goalId: optionalId(body.goal_id, '/goal_id'),
      description: body.description === undefined || body.description === null ? null : checkDescription(body.description),
      levels: { anonymous: body.anonymous_access_level, company: body.company_access_level, space: body.space_access_level }
    }
    const { project, etag } = await create(fastify.db, request.caller, input)
    reply.header('etag', entityTag(etag))
    return { project }
  })
}

/** The space the caller may create in: 404 when they cannot see it, 403 when they may not edit in it. */
async function spaceToCreateIn (trx: Transaction<Database>, spaceId: string, personId: string) {
  const id = decodeId(spaceId)
  const space = id === null ? null : await findSpace(trx, id, personId)
  if (space === null || space.level < ACCESS.view) throw spaceNotFound()
  if (space.level < ACCESS.edit) throw httpErrors.forbidden('you may view this space but not create a project in it')
  return space
}

/** The levels asked for, each one left out being Operately's default for a project of the space. */
function levelsIn (space: { company_access: AccessLevel }, asked: NewProject['levels']) {
  return {
    anonymous: asked.anonymous ?? 0,
    company: asked.company ?? space.company_access,
    space: asked.space ?? (Math.max(space.company_access, ACCESS.comment) as AccessLevel)
  }
}

/** Champion and reviewer: people of the company, not the same one (400 otherwise). */
async function staff (trx: Transaction<Database>, input: NewProject, companyId: string): Promise<{ champion: Person, reviewer: Person }> {
  const person = async (id: string | null, path: string) => {
    if (id === null) return null
    const found = await findColleague(trx, id, companyId)
    if (found === null) throw invalidInput(path, 'must be a person of the company')
    return found
  }
  const champion = await person(input.championId, '/champion_id')
  const reviewer = await person(input.reviewerId, '/reviewer_id')
  if (champion !== null && champion.id === reviewer?.id) throw invalidInput('/reviewer_id', 'must not be the champion')
  return { champion, reviewer }
}

/** The next Friday after today (UTC midnight): Operately's first check-in. */
function firstFriday (now: Date): Date {
  const days = ((5 - now.getUTCDay() + 7) % 7) || 7
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + days))
}

async function create (db: Db, caller: Caller, input: NewProject) {
  const { answer, queued } = await db.transaction().execute(async (trx) => {
    const space = await spaceToCreateIn(trx, input.spaceId, caller.personId)
    const { champion, reviewer } = await staff(trx, input, space.company_id)
    const goal = input.goalId === null ? null : await findGoal(trx, input.goalId, space.company_id)
    const today = new Date().toISOString().slice(0, 10)
    const levels = levelsIn(space, input.levels)
    const row = await trx.insertInto('projects').values({
      company_id: space.company_id,
      space_id: space.id,
      goal_id: goal?.id ?? null,
      name: input.name,
      description: input.description,
      // Operately gives anyone view access or none, and its company none in a space closed to it.
      public_access: levels.anonymous === ACCESS.view ? ACCESS.view : 0,
      company_access: space.company_access === 0 ? 0 : levels.company,
      space_access: levels.space,
      next_check_in_scheduled_at: firstFriday(new Date()),
      tasks_kanban_state: JSON.stringify({ pending: [], in_progress: [], done: [], canceled: [] }),
      timeframe_start_type: 'day',
      timeframe_start_value: dayLabel(today),
      timeframe_start_date: today,
      timeframe_end_type: null,
      timeframe_end_value: null,
      timeframe_end_date: null
    }).returning(['id', 'name', 'company_id']).executeTakeFirstOrThrow()
    const mentioned = await staffProject(trx, row, caller.personId, { champion, reviewer }, input.description)
    const recorded = await recordActivity(trx, caller, row, {
      action: 'project_created',
      content: { name: row.name, space_id: space.id, goal_id: goal?.id ?? null, champion_id: champion?.id ?? null, reviewer_id: reviewer?.id ?? null, description: input.description },
      event: {
        type: 'project.created',
        change: {
          space: { id: shortId(space.id), name: space.name },
          goal: goal === null ? null : { id: sluggedId(goal.id, goal.name), name: goal.name },
          champion: champion === null ? null : { id: shortId(champion.id), full_name: champion.full_name },
          reviewer: reviewer === null ? null : { id: shortId(reviewer.id), full_name: reviewer.full_name }
        }
      }
    })
    await notifySubscribers(trx, { id: recorded.activityId, projectId: row.id, authorId: caller.personId, action: 'project_created' }, mentioned)
    const after = await findProject(trx, row.id, caller.personId)
    if (after === null) throw new Error('a created project is visible to its creator')
    return { answer: toProject(after), queued: recorded.queued }
  })
  jobsQueued(queued)
  return { project: answer, etag: projectTag(answer) }
}

/**
 * Operately's people of a new project: champion and reviewer as contributors with
 * their roles, the creator a contributor with full access unless one of them;
 * the three subscribed (`invited`), then those the description mentions
 * (`mentioned`); its task statuses. The mentioned people's ids.
 */
async function staffProject (trx: Transaction<Database>, project: { id: string, company_id: string }, creatorId: string,
  people: { champion: Person, reviewer: Person }, description: string | null): Promise<string[]> {
  const { champion, reviewer } = people
  const contributors = [
    ...(champion === null ? [] : [{ person_id: champion.id, role: 'champion' as const, responsibility: null }]),
    ...(reviewer === null ? [] : [{ person_id: reviewer.id, role: 'reviewer' as const, responsibility: null }]),
    ...(creatorId === champion?.id || creatorId === reviewer?.id ? [] : [{ person_id: creatorId, role: 'contributor' as const, responsibility: 'Contributor' }])
  ]
  await trx.insertInto('project_contributors')
    .values(contributors.map((c) => ({ ...c, project_id: project.id, access_level: ACCESS.full })))
    .execute()
  const list = await trx.insertInto('subscription_lists').values({ project_id: project.id }).returning('id').executeTakeFirstOrThrow()
  await trx.insertInto('subscriptions')
    .values(contributors.map((c) => ({ subscription_list_id: list.id, person_id: c.person_id, type: 'invited' as const })))
    .execute()
  await trx.insertInto('project_task_statuses').values([
    { project_id: project.id, label: 'Not started', color: 'gray', index: 0, value: 'pending', closed: false },
    { project_id: project.id, label: 'In progress', color: 'blue', index: 1, value: 'in_progress', closed: false },
    { project_id: project.id, label: 'Done', color: 'green', index: 2, value: 'done', closed: true },
    { project_id: project.id, label: 'Canceled', color: 'red', index: 3, value: 'canceled', closed: true }
  ]).execute()
  return description === null ? [] : await subscribeMentioned(trx, project, mentionedPeople(description))
}

export default createProject
