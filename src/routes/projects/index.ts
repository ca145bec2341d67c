// /api/external/v1/projects/*: the two mutations, a project and a page of projects.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { httpErrors } from '@fastify/sensible'
import {
  DESCRIPTION_MAX_BYTES, DESCRIPTION_MAX_DEPTH, GetProjectHeadersSchema, GetProjectQuerySchema, LIST_LIMIT, NAME_MAX_LENGTH, ListProjectsQuerySchema,
  NotModifiedSchema, ProjectListResponseSchema, ProjectResponseSchema, ProjectWithMarkdownResponseSchema, UpdateDescriptionBodySchema,
  UpdateNameBodySchema, UpdateProjectHeadersSchema
} from '../../schemas/projects.js'
import { invalidInput } from '../../errors.js'
import { pageParameter } from '../paging.js'
import { invalidExample, mutationErrors, notFoundExample, nothingToFind, preconditionErrors, queryErrors } from '../responses.js'
import { decodeId } from '../../ids.js'
import { lazily } from '../../lazy.js'
import { findProject, parseProject } from '../../db/project-aggregate.js'
import { listProjects } from '../../db/project-list.js'
import { updateProjectField, type ProjectField } from '../../db/project-mutations.js'
import { heldChildren, heldProjects, projectAnswer, projectPageAnswer, toProject, writeProjectAnswer } from '../../presenters/project.js'
import type { Caller } from '../../plugins/auth.js'
import { sendAnswer, sendPage } from '../../plugins/answers.js'
import { checkDescription, normalizeName, requireId } from './rules.js'
import { mentionedPeople } from './mentions.js'
import { entityTag, ifMatchTags, ifNoneMatch, notModified, preconditionFailed } from './conditional.js'

const IF_MATCH = 'With `If-Match` (the `ETag` of a read, or `*`), the change is made only if the project is, as the ' +
  'person would read it right before the change, the version a listed tag names; otherwise the answer is 412 ' +
  '`precondition_failed` with the current `ETag`, and nothing is written. Weak tags never match. The check and ' +
  'the write are one statement: of two requests with the same tag, one succeeds. 404 and 403 come before 412.'

// The Markdown presenter (prosemirror-markdown and the schema it is built on, about
// 6 MB of memory once loaded) is loaded by the first request that asks for Markdown:
// a server nobody asks for Markdown never carries it.
const markdownPresenter = lazily(async () => await import('../../presenters/markdown.js'))

/** The same body whether the project is absent, archived or invisible: existence never leaks. */
const PROJECT_NOT_FOUND = 'project not found'
const projectNotFound = () => httpErrors.notFound(PROJECT_NOT_FOUND)
const NO_PROJECT = notFoundExample(PROJECT_NOT_FOUND, 'The project is unknown, its id cannot be decoded, or the person ' +
  'cannot see it: one body for all, so existence never leaks.')
const NO_EDITABLE_PROJECT = notFoundExample(PROJECT_NOT_FOUND, 'The project is unknown, its id cannot be decoded, it ' +
  'is archived, or the person cannot see it: one body for all, so existence never leaks.')

interface Update { rawId: string, field: ProjectField, value: string, ifMatch: string[] | null }

async function update (fastify: FastifyInstance, caller: Caller, reply: FastifyReply, { rawId, field, value, ifMatch }: Update): Promise<FastifyReply> {
  const { db, answers, recentChildren } = fastify
  const projectId = decodeId(rawId)
  if (projectId === null) throw projectNotFound()
  const held = heldChildren(answers, recentChildren, projectId)
  // One statement: the token's check, the checks (If-Match last), the write, the
  // activity, for a description the subscriptions and notifications, and the
  // project as it is now (without the children this server holds written).
  const result = await updateProjectField(db, {
    projectId, actor: caller, field, value, ifMatch, knownChildren: [...held.keys()],
    mentions: field === 'description' ? mentionedPeople(value) : undefined
  })
  if (result.outcome === 'not_found') throw projectNotFound()
  if (result.outcome === 'forbidden') throw httpErrors.forbidden('you may view this project but not edit it')
  if (result.outcome === 'precondition_failed') {
    // The statement's tag is exact unless it waited for a change committed meanwhile:
    // it saw that change's row, not what the change wrote elsewhere (notifications,
    // subscriptions). Only then is the project read again for its current tag.
    const tag = result.moved ? (await findProject(db, projectId, caller))?.etag : result.etag
    if (tag === undefined) throw projectNotFound()
    throw preconditionFailed(tag)
  }
  reply.header('etag', entityTag(result.project.etag))
  const answer = writeProjectAnswer(answers, result.project, held)
  recentChildren.remember(projectId, [{ id: projectId, version: result.project.childrenVersion }])
  return sendAnswer(reply, answer)
}

const projects: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.addHook('onRequest', fastify.authenticate)

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
    return update(fastify, request.caller, reply, { rawId: projectId, field: 'name', value: name, ifMatch })
  })

  fastify.post('/update_description', {
    schema: {
      operationId: 'updateProjectDescription',
      tags: ['projects'],
      summary: "Replace a project's description",
      description: 'Sets the description of a project the token\'s person may edit (access level 70 or more). The ' +
        'description is a string holding JSON text (usually a rich-text document, any JSON value but null), at most ' +
        `${DESCRIPTION_MAX_BYTES / 1024} KiB and nested at most ${DESCRIPTION_MAX_DEPTH} deep; every later read returns the very same string. Closed and paused ` +
        'projects may be described; archived ones are 404. A `project_description_changed` activity is recorded, ' +
        'unless the description is the current one: that succeeds and records nothing. Needs a write token. Answers ' +
        `the whole project as the person sees it after the change, with its \`ETag\`. ${IF_MATCH}`,
      security: [{ bearerAuth: [] }],
      headers: UpdateProjectHeadersSchema,
      body: UpdateDescriptionBodySchema,
      response: { 200: ProjectResponseSchema, ...mutationErrors, ...preconditionErrors, 400: invalidExample('/description', 'must be a JSON text'), 404: NO_EDITABLE_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const description = checkDescription(request.body.description)
    const ifMatch = ifMatchTags(request.headers['if-match'])
    return update(fastify, request.caller, reply, { rawId: projectId, field: 'description', value: description, ifMatch })
  })

  fastify.get('/get', {
    schema: {
      operationId: 'getProject',
      tags: ['projects'],
      summary: 'Get a project',
      description: 'The whole project as the token\'s person sees it; read-only tokens may call it. A project the ' +
        'person cannot see is 404, like one that does not exist. With `include_markdown=true` the answer also has ' +
        '`markdown`: the project rendered as Markdown for people and language models (title, status, space, goal, ' +
        'timeframe, people, description, key resources, milestones, last check-in, retrospective). Operately\'s other ' +
        '`include_*` flags (`true` or `false`, e.g. `include_milestones=true`) are accepted and change nothing: the ' +
        'whole project is always returned. Any other query parameter is 400. The answer carries an `ETag`: with ' +
        '`If-None-Match` naming it (or `*`), the answer is 304 with the `ETag` and no body. A project the person cannot ' +
        'see is 404 whatever the header says. The Markdown answer has a tag of its own (the project\'s with `.md` ' +
        'appended); a mutation\'s `If-Match` accepts either.',
      security: [{ bearerAuth: [] }],
      querystring: GetProjectQuerySchema,
      headers: GetProjectHeadersSchema,
      response: { 200: ProjectWithMarkdownResponseSchema, 304: NotModifiedSchema, ...queryErrors, 400: invalidExample('/id', 'must not be blank'), 404: NO_PROJECT }
    }
  }, async (request, reply) => {
    const projectId = decodeId(requireId(request.query.id, '/id'))
    const condition = ifNoneMatch(request.headers['if-none-match'])
    const markdown = request.query.include_markdown === 'true'
    // The Markdown is made from the whole project: the database is told of nothing held.
    const held = projectId === null || markdown ? new Map() : heldProjects(fastify.answers, fastify.recentProjects, projectId)
    const row = projectId === null ? null : await findProject(fastify.db, projectId, request.caller, [...held.keys()])
    if (!row || projectId === null) throw projectNotFound()
    const etag = entityTag(row.etag, markdown)
    reply.header('etag', etag)
    if (notModified(condition, etag)) return reply.code(304).send(undefined)
    if (markdown) {
      const { projectMarkdown } = await markdownPresenter.get()
      const project = toProject(parseProject(row))
      return { project, markdown: projectMarkdown(project) }
    }
    const answer = projectAnswer(fastify.answers, row, held)
    fastify.recentProjects.remember(projectId, [{ id: projectId, version: row.version }])
    return sendAnswer(reply, answer)
  })

  fastify.get('/list', {
    schema: {
      operationId: 'listProjects',
      tags: ['projects'],
      summary: 'List the projects the person can see',
      description: 'A page of the projects the token\'s person can see, each the whole project as they see it, ordered ' +
        `by name, then id. Archived projects are left out unless \`include_archived=true\`. Filters: \`space_id\`, ` +
        '`goal_id`, `only_my_projects=true` (champion or contributor), `only_reviewed_by_me=true` (reviewer; wins over ' +
        `only_my_projects). \`limit\` is the page size, 1 to ${LIST_LIMIT.max} (default ${LIST_LIMIT.default}); the ` +
        'answer\'s `next_cursor`, passed as `cursor` with the same filters, gives the next page, and is null on the last ' +
        'one. A cursor is opaque and belongs to the person and the filters it was issued for: any other is 400. A ' +
        'client that knows nothing of paging gets the first page. Operately\'s `include_*` flags are accepted and ' +
        'change nothing. Read-only tokens may call it. Sent gzip-compressed (`Content-Encoding: gzip`) when the ' +
        'request\'s `Accept-Encoding` accepts gzip, as Operately\'s CLI asks: a page of 20 whole projects is often ' +
        'most of a megabyte.',
      security: [{ bearerAuth: [] }],
      querystring: ListProjectsQuerySchema,
      response: {
        200: ProjectListResponseSchema,
        ...queryErrors,
        400: invalidExample('/cursor', 'is not a cursor of this list'),
        404: nothingToFind('a filter\'s id that names nothing the person can see gives an empty page (one that cannot be decoded, 400).')
      }
    }
  }, async (request, reply) => {
    const query = request.query
    const filters = {
      space_id: filterId(query.space_id, '/space_id'),
      goal_id: filterId(query.goal_id, '/goal_id'),
      roles: query.only_reviewed_by_me === 'true' ? ['reviewer' as const] : query.only_my_projects === 'true' ? ['champion' as const, 'contributor' as const] : null,
      include_archived: query.include_archived === 'true'
    }
    const limit = pageParameter(query.limit, '/limit', LIST_LIMIT)
    const codec = await fastify.cursors()
    // The person is not known before the statement: the cursor carries the one it
    // was issued to (under its MAC), and the statement reads a page only for them.
    const scope = `projects/list\n${JSON.stringify(filters)}`
    const after = query.cursor === undefined ? null : listPosition(codec.decode(scope, query.cursor))
    // The projects this page showed lately that the server holds written: the
    // statement sends only their readers' parts when they have not changed since.
    const pageScope = `${scope}\n${query.cursor ?? ''}\n${limit}`
    const held = heldProjects(fastify.answers, fastify.recentPages, pageScope)
    const result = await listProjects(fastify.db, request.caller, {
      roles: filters.roles, spaceId: filters.space_id, goalId: filters.goal_id,
      includeArchived: filters.include_archived, after, limit, known: [...held.keys()]
    })
    if (!result.ownCursor) throw notThisCursor()
    const page = result.projects
    const last = page.at(-1)
    const nextCursor = result.more && last !== undefined
      ? codec.encode(scope, { name: last.name, id: last.id, person: result.personId })
      : null
    const answer = projectPageAnswer(fastify.answers, page, nextCursor, held)
    fastify.recentPages.remember(pageScope, page)
    return sendPage(reply, answer)
  })
}

/** A filter's id as a UUID; an id that stands for nothing is a 400 (it cannot be a typo of anything). */
function filterId (id: string | undefined, path: string): string | null {
  if (id === undefined) return null
  const uuid = decodeId(requireId(id, path))
  if (uuid === null) throw invalidInput(path, 'is not an id')
  return uuid
}

const notThisCursor = () => invalidInput('/cursor', 'is not a cursor of this list: pass next_cursor as it came, with the same filters')

/**
 * Where the previous page ended and whose list it was, from its cursor; a cursor
 * issued for anything else is a 400 (one issued to another person, once the
 * statement has found who the caller is).
 */
function listPosition (position: unknown): { name: string, id: string, person: string } {
  if (typeof position === 'object' && position !== null && 'name' in position && 'id' in position && 'person' in position &&
    typeof position.name === 'string' && typeof position.id === 'string' && decodeId(position.id) === position.id &&
    typeof position.person === 'string' && decodeId(position.person) === position.person) {
    return { name: position.name, id: position.id, person: position.person }
  }
  throw notThisCursor()
}

export default projects
