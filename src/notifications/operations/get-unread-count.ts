// GET /api/external/v1/notifications/get_unread_count
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { queryErrors } from '../../http/responses.js'
import { unreadCount } from '../query.js'
import { WHOLE_INBOX } from '../common.js'
import { UnreadCountQuerySchema, UnreadCountResponseSchema } from '../schemas.js'

const getUnreadCount: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/get_unread_count', {
    schema: {
      operationId: 'getUnreadNotificationCount',
      tags: ['notifications'],
      summary: 'Count unread notifications',
      description: 'How many of the token\'s person\'s notifications are unread (as `notifications/list` shows them). ' +
        'Read-only tokens may call it.',
      security: [{ bearerAuth: [] }],
      querystring: UnreadCountQuerySchema,
      response: { 200: UnreadCountResponseSchema, ...queryErrors, 404: WHOLE_INBOX }
    }
  }, async (request) => ({ unread: await unreadCount(fastify.db, request.caller.personId) }))
}

export default getUnreadCount
