// POST /api/external/v1/notifications/mark_all_as_read
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { mutationErrors } from '../../http/responses.js'
import { markAllRead } from '../query.js'
import { WHOLE_INBOX } from '../common.js'
import { EmptyResponseSchema, MarkAllAsReadBodySchema } from '../schemas.js'

const markAllAsRead: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/mark_all_as_read', {
    schema: {
      operationId: 'markAllNotificationsAsRead',
      tags: ['notifications'],
      summary: 'Mark every notification as read',
      description: 'Marks every unread notification of the token\'s person as read. Needs a write token.',
      security: [{ bearerAuth: [] }],
      body: MarkAllAsReadBodySchema,
      response: { 200: EmptyResponseSchema, ...mutationErrors, 404: WHOLE_INBOX }
    }
  }, async (request) => {
    await markAllRead(fastify.db, request.caller.personId)
    return {}
  })
}

export default markAllAsRead
