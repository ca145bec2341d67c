// POST /api/external/v1/notifications/mark_many_as_read
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { decodeId } from '../../ids.js'
import { invalidExample, mutationErrors, notFoundExample } from '../../http/responses.js'
import { requireId } from '../../http/input.js'
import { markRead } from '../query.js'
import { NOTIFICATION_NOT_FOUND, notFound } from '../common.js'
import { EmptyResponseSchema, MarkManyAsReadBodySchema } from '../schemas.js'

const markManyAsRead: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/mark_many_as_read', {
    schema: {
      operationId: 'markNotificationsAsRead',
      tags: ['notifications'],
      summary: 'Mark notifications as read',
      description: 'Marks the listed notifications of the token\'s person as read, all or none: when any id is unknown ' +
        'or someone else\'s, the answer is 404 and nothing is marked. Already read ones keep their `read_at`; an ' +
        'empty list does nothing. Needs a write token.',
      security: [{ bearerAuth: [] }],
      body: MarkManyAsReadBodySchema,
      response: {
        200: EmptyResponseSchema,
        ...mutationErrors,
        400: invalidExample('/ids/0', 'must not be blank'),
        404: notFoundExample(NOTIFICATION_NOT_FOUND, 'One of the notifications is unknown, its id cannot be decoded, or ' +
          'it is someone else\'s: nothing is marked, and one body for all, so no one learns which notifications exist.')
      }
    }
  }, async (request) => {
    const ids = new Set<string>()
    for (const [i, raw] of request.body.ids.entries()) {
      const id = decodeId(requireId(raw, `/ids/${i}`))
      if (id === null) throw notFound()
      ids.add(id)
    }
    if (!await markRead(fastify.db, request.caller.personId, [...ids])) throw notFound()
    return {}
  })
}

export default markManyAsRead
