// POST /api/external/v1/notifications/mark_as_read
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { decodeId } from '../../ids.js'
import { invalidExample, mutationErrors, notFoundExample } from '../../http/responses.js'
import { requireId } from '../../http/input.js'
import { markRead } from '../query.js'
import { NOTIFICATION_NOT_FOUND, notFound } from '../common.js'
import { EmptyResponseSchema, MarkAsReadBodySchema } from '../schemas.js'

const markAsRead: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/mark_as_read', {
    schema: {
      operationId: 'markNotificationAsRead',
      tags: ['notifications'],
      summary: 'Mark a notification as read',
      description: 'Marks one of the token\'s person\'s notifications as read, recording when; marking a read one ' +
        'again changes nothing. An unknown id, or one of someone else\'s notifications, is 404. Needs a write token.',
      security: [{ bearerAuth: [] }],
      body: MarkAsReadBodySchema,
      response: {
        200: EmptyResponseSchema,
        ...mutationErrors,
        400: invalidExample('/id', 'must not be blank'),
        404: notFoundExample(NOTIFICATION_NOT_FOUND, 'The notification is unknown, its id cannot be decoded, or it is ' +
          'someone else\'s: one body for all, so no one learns which notifications exist.')
      }
    }
  }, async (request) => {
    const id = decodeId(requireId(request.body.id, '/id'))
    if (id === null || !await markRead(fastify.db, request.caller.personId, [id])) throw notFound()
    return {}
  })
}

export default markAsRead
