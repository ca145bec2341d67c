// /api/external/v1/projects/*: the two mutations and the query.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { ErrorRef } from '../../schemas/common.js'
import {
  GetProjectQuerySchema, ProjectResponseSchema, UpdateDescriptionBodySchema, UpdateNameBodySchema
} from '../../schemas/projects.js'
import { projectNotFound, ApiError, invalidInput } from '../../errors.js'
import { decodeId } from '../../ids.js'
import { findProject } from '../../db/project-aggregate.js'
import { updateProjectField, type ProjectField } from '../../db/project-mutations.js'
import type { Project } from '../../schemas/projects.js'
import { toProject } from '../../presenters/project.js'
import type { Caller } from '../../plugins/auth.js'
import type { Db } from '../../db/index.js'
import { checkDescription, normalizeName, requireId } from './rules.js'

// Every status an operation may answer besides 200, each with the error envelope;
// plugins/swagger.ts describes them in the document. A GET has no body (no 413 or
// 415) and is open to read-only tokens (no 403).
const errors = {
  query: { 400: ErrorRef, 401: ErrorRef, 404: ErrorRef, 429: ErrorRef, 500: ErrorRef, 503: ErrorRef },
  mutation: { 400: ErrorRef, 401: ErrorRef, 403: ErrorRef, 404: ErrorRef, 408: ErrorRef, 413: ErrorRef, 415: ErrorRef, 429: ErrorRef, 500: ErrorRef, 503: ErrorRef },
  /** The envelope with this operation's typical 400 as the document's example. */
  invalid: (path: string, message: string) => Type.Ref('Error', { examples: [invalidInput(path, message).body()] })
}

async function update (db: Db, caller: Caller, rawId: string, field: ProjectField, value: string): Promise<{ project: Project }> {
  const projectId = decodeId(rawId)
  if (projectId === null) throw projectNotFound()
  // One statement: the check, the write, the activity and the project as it is now.
  const result = await updateProjectField(db, {
    projectId, personId: caller.personId, tokenId: caller.tokenId, field, value
  })
  if (result.outcome === 'not_found') throw projectNotFound()
  if (result.outcome === 'forbidden') throw new ApiError(403, 'forbidden', 'you may view this project but not edit it')
  return { project: toProject(result.project) }
}

const projects: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.addHook('onRequest', fastify.authenticate)

  fastify.post('/update_name', {
    schema: {
      operationId: 'updateProjectName',
      tags: ['projects'],
      summary: 'Rename a project',
      description: 'Sets the name of a project the token\'s person may edit (access level 70 or more). The name is ' +
        'trimmed and must then be 1 to 255 characters without control characters. Closed and paused projects may be ' +
        'renamed; archived ones are 404. A `project_renamed` activity is recorded, unless the name is the current ' +
        'one: that succeeds and records nothing. Needs a write token. Answers the whole project as the person sees ' +
        'it after the change.',
      security: [{ bearerAuth: [] }],
      body: UpdateNameBodySchema,
      response: { 200: ProjectResponseSchema, ...errors.mutation, 400: errors.invalid('/name', 'must not be blank') }
    }
  }, async (request) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const name = normalizeName(request.body.name)
    return update(fastify.db, request.caller, projectId, 'name', name)
  })

  fastify.post('/update_description', {
    schema: {
      operationId: 'updateProjectDescription',
      tags: ['projects'],
      summary: "Replace a project's description",
      description: 'Sets the description of a project the token\'s person may edit (access level 70 or more). The ' +
        'description is a string holding JSON text (usually a rich-text document, any JSON value but null), at most ' +
        '512 KiB and nested at most 64 deep; every later read returns the very same string. Closed and paused ' +
        'projects may be described; archived ones are 404. A `project_description_changed` activity is recorded, ' +
        'unless the description is the current one: that succeeds and records nothing. Needs a write token. Answers ' +
        'the whole project as the person sees it after the change.',
      security: [{ bearerAuth: [] }],
      body: UpdateDescriptionBodySchema,
      response: { 200: ProjectResponseSchema, ...errors.mutation, 400: errors.invalid('/description', 'must be a JSON text') }
    }
  }, async (request) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const description = checkDescription(request.body.description)
    return update(fastify.db, request.caller, projectId, 'description', description)
  })

  fastify.get('/get', {
    schema: {
      operationId: 'getProject',
      tags: ['projects'],
      summary: 'Get a project',
      description: 'The whole project as the token\'s person sees it; read-only tokens may call it. A project the ' +
        'person cannot see is 404, like one that does not exist. Operately\'s `include_*` flags (`true` or `false`, ' +
        'e.g. `include_milestones=true`) are accepted and change nothing: the whole project is always returned. ' +
        'Any other query parameter is 400.',
      security: [{ bearerAuth: [] }],
      querystring: GetProjectQuerySchema,
      response: { 200: ProjectResponseSchema, ...errors.query, 400: errors.invalid('/id', 'must not be blank') }
    }
  }, async (request) => {
    const projectId = decodeId(requireId(request.query.id, '/id'))
    const project = projectId === null ? null : await findProject(fastify.db, projectId, request.caller.personId)
    if (!project) throw projectNotFound()
    return { project: toProject(project) }
  })
}

export default projects
