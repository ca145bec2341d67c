// GET /api/external/v1/projects/list: a page of the projects the person can see.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidInput } from '../../errors.js'
import { decodeId } from '../../ids.js'
import { pageParameter } from '../../http/paging.js'
import { invalidExample, nothingToFind, queryErrors } from '../../http/responses.js'
import { listProjects, outdatedFrom, type ProjectFilters } from '../query.js'
import { toProject } from '../presenter.js'
import { requireId } from '../rules.js'
import { LIST_LIMIT, ListProjectsQuerySchema, ProjectListResponseSchema } from '../schemas.js'
import { PAGE_COMPRESSION } from '../../schemas/common.js'

/** A filter's id as a UUID; an id that stands for nothing is a 400 (it cannot be a typo of anything). */
function filterId (id: string | undefined, path: string): string | null {
  if (id === undefined) return null
  const uuid = decodeId(requireId(id, path))
  if (uuid === null) throw invalidInput(path, 'is not an id')
  return uuid
}

const notThisCursor = () => invalidInput('/cursor', 'is not a cursor of this list: pass next_cursor as it came, with the same filters')

/** Where the previous page ended, from a cursor issued for this person and these filters. */
function listPosition (position: unknown): { name: string, id: string } {
  if (typeof position === 'object' && position !== null && 'name' in position && 'id' in position &&
    typeof position.name === 'string' && typeof position.id === 'string' && decodeId(position.id) === position.id) {
    return { name: position.name, id: position.id }
  }
  throw notThisCursor()
}

const listProjectsOperation: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/list', {
    compress: PAGE_COMPRESSION,
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
    const personId = request.caller.personId
    const filters: ProjectFilters = {
      spaceId: filterId(query.space_id, '/space_id'),
      goalId: filterId(query.goal_id, '/goal_id'),
      roles: query.only_reviewed_by_me === 'true' ? ['reviewer'] : query.only_my_projects === 'true' ? ['champion', 'contributor'] : null,
      includeArchived: query.include_archived === 'true'
    }
    const limit = pageParameter(query.limit, '/limit', LIST_LIMIT)
    const codec = await fastify.cursors()
    // A cursor continues only the list of the person and filters it was issued for.
    const scope = `projects/list\n${personId}\n${JSON.stringify(filters)}`
    const after = query.cursor === undefined ? null : listPosition(codec.decode(scope, query.cursor))
    return await fastify.answers.send(request, reply, { key: `${scope}\n${limit}\n${query.cursor ?? ''}`, compressed: true }, async () => {
      const { rows, more } = await listProjects(fastify.db, personId, filters, { after, limit })
      const last = rows.at(-1)
      const nextCursor = more && last !== undefined ? codec.encode(scope, { name: last.name, id: last.id }) : null
      return { body: reply.serializeInput({ projects: rows.map(toProject), next_cursor: nextCursor }, '200') as string, until: outdatedFrom(rows) }
    })
  })
}

export default listProjectsOperation
