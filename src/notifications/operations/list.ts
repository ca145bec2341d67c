// GET /api/external/v1/notifications/list
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { pageParameter } from '../../http/paging.js'
import { invalidExample, queryErrors } from '../../http/responses.js'
import { listNotifications } from '../query.js'
import { toNotificationItem } from '../presenter.js'
import { WHOLE_INBOX } from '../common.js'
import { ListNotificationsQuerySchema, NOTIFICATION_PAGE, NotificationListResponseSchema } from '../schemas.js'
import { PAGE_COMPRESSION } from '../../schemas/common.js'

// Deep enough for any inbox; a page past it is refused rather than scanned.
const PAGE = { default: 1, max: 10_000 } as const

const listOperation: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/list', {
    compress: PAGE_COMPRESSION,
    schema: {
      operationId: 'listNotifications',
      tags: ['notifications'],
      summary: 'List notifications',
      description: 'The token\'s person\'s notifications, newest first, read ones too, each with the project and the ' +
        `author it is about. \`page\` (from 1, default 1) and \`per_page\` (1 to ${NOTIFICATION_PAGE.max}, default ` +
        `${NOTIFICATION_PAGE.default}) as in Operately. Notifications about a project the person can no longer see are ` +
        'left out. Read-only tokens may call it. Sent gzip-compressed (`Content-Encoding: gzip`) when the request\'s ' +
        '`Accept-Encoding` accepts gzip.',
      security: [{ bearerAuth: [] }],
      querystring: ListNotificationsQuerySchema,
      response: {
        200: NotificationListResponseSchema,
        ...queryErrors,
        400: invalidExample('/per_page', `must be from 1 to ${NOTIFICATION_PAGE.max}`),
        404: WHOLE_INBOX
      }
    }
  }, async (request, reply) => {
    const page = pageParameter(request.query.page, '/page', PAGE)
    const perPage = pageParameter(request.query.per_page, '/per_page', NOTIFICATION_PAGE)
    const personId = request.caller.personId
    return await fastify.answers.send(request, reply, { key: `notifications/list\n${personId}\n${page}\n${perPage}`, compressed: true }, async () => {
      const rows = await listNotifications(fastify.db, personId, { limit: perPage, offset: (page - 1) * perPage })
      return { body: reply.serializeInput({ notifications: rows.map(toNotificationItem) }, '200') as string, until: Infinity }
    })
  })
}

export default listOperation
