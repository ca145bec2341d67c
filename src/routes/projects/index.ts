// /api/external/v1/projects/*: the two mutations and the query.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorRef } from '../../schemas/common.js'
import {
  GetProjectQuerySchema, ProjectResponseSchema, UpdateDescriptionBodySchema, UpdateNameBodySchema
} from '../../schemas/projects.js'
import { projectNotFound, ApiError } from '../../errors.js'
import { decodeId } from '../../ids.js'
import { findProject } from '../../db/project-aggregate.js'
import { updateProjectField, type ProjectField } from '../../db/project-mutations.js'
import type { Project } from '../../schemas/projects.js'
import type { Caller } from '../../plugins/auth.js'
import type { Db } from '../../db/index.js'
import { checkDescription, normalizeName, requireId } from './rules.js'

const errors = { 400: ErrorRef, 401: ErrorRef, 403: ErrorRef, 404: ErrorRef, 413: ErrorRef, 415: ErrorRef, 503: ErrorRef }

async function update (db: Db, caller: Caller, rawId: string, field: ProjectField, value: string): Promise<{ project: Project }> {
  const projectId = decodeId(rawId)
  if (projectId === null) throw projectNotFound()
  const outcome = await updateProjectField(db, {
    projectId, personId: caller.personId, tokenId: caller.tokenId, field, value
  })
  if (outcome === 'not_found') throw projectNotFound()
  if (outcome === 'forbidden') throw new ApiError(403, 'forbidden', 'you may view this project but not edit it')
  // Read after the commit: the project as the caller sees it now.
  const project = await findProject(db, projectId, caller.personId)
  if (!project) throw projectNotFound()
  return { project }
}

const projects: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.addHook('onRequest', fastify.authenticate)

  fastify.post('/update_name', {
    schema: {
      summary: 'Rename a project',
      body: UpdateNameBodySchema,
      response: { 200: ProjectResponseSchema, ...errors }
    }
  }, async (request) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const name = normalizeName(request.body.name)
    return update(fastify.db, request.caller, projectId, 'name', name)
  })

  fastify.post('/update_description', {
    schema: {
      summary: "Replace a project's description",
      body: UpdateDescriptionBodySchema,
      response: { 200: ProjectResponseSchema, ...errors }
    }
  }, async (request) => {
    const projectId = requireId(request.body.project_id, '/project_id')
    const description = checkDescription(request.body.description)
    return update(fastify.db, request.caller, projectId, 'description', description)
  })

  fastify.get('/get', {
    schema: {
      summary: 'Get a project',
      querystring: GetProjectQuerySchema,
      response: { 200: ProjectResponseSchema, ...errors }
    }
  }, async (request) => {
    const projectId = decodeId(requireId(request.query.id, '/id'))
    const project = projectId === null ? null : await findProject(fastify.db, projectId, request.caller.personId)
    if (!project) throw projectNotFound()
    return { project }
  })
}

export default projects
