// GET /api/external/v1/projects/get: one project, as the token's person sees it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidExample, queryErrors } from '../../http/responses.js'
import { decodeId } from '../../ids.js'
import { findProject, outdatedFrom } from '../query.js'
import { projectTag, toProject } from '../presenter.js'
import { projectNotFound } from '../change.js'
import { entityTag, ifNoneMatch, notModified } from '../conditional.js'
import { requireId } from '../rules.js'
import { GetProjectHeadersSchema, GetProjectQuerySchema, NO_PROJECT, NotModifiedSchema, ProjectWithMarkdownResponseSchema } from '../schemas.js'

const getProject: FastifyPluginAsyncTypebox = async (fastify) => {
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
    const personId = request.caller.personId
    return await fastify.answers.send(request, reply, { key: `projects/get\n${personId}\n${projectId}\n${markdown}` }, async () => {
      const row = projectId === null ? null : await findProject(fastify.db, projectId, personId)
      if (row === null) throw projectNotFound()
      const project = toProject(row)
      // Loaded by the first request that asks for Markdown: prosemirror and its schema are large.
      const body = markdown ? { project, markdown: (await import('../markdown.js')).projectMarkdown(project) } : { project }
      return { body: reply.serializeInput(body, '200') as string, etag: entityTag(projectTag(project), markdown), until: outdatedFrom([row]) }
    }, (answer) => {
      reply.header('etag', answer.etag)
      if (!notModified(condition, answer.etag!)) return true
      reply.code(304).send(undefined)
      return false
    })
  })
}

export default getProject
