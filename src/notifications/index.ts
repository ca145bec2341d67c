// /api/external/v1/notifications/*: the token's person's notifications, Operately's
// names and shapes. A person sees and marks only their own: an id of someone
// else's notification is the same 404 as an unknown one.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../errors.js'
import { decodeId } from '../ids.js'
import { pageParameter } from '../http/paging.js'
import { invalidExample, mutationErrors, notFoundExample, nothingToFind, queryErrors } from '../http/responses.js'
import { requireId } from '../projects/rules.js'
import { listNotifications, markAllRead, markRead, unreadCount } from './query.js'
import { toNotificationItem } from './presenter.js'
import {
  EmptyResponseSchema, ListNotificationsQuerySchema, MarkAllAsReadBodySchema, MarkAsReadBodySchema, MarkManyAsReadBodySchema,
  NOTIFICATION_PAGE, NotificationListResponseSchema, UnreadCountQuerySchema, UnreadCountResponseSchema
} from './schemas.js'

const NOTIFICATION_NOT_FOUND = 'notification not found'
const notFound = () => new ApiError(404, 'not_found', NOTIFICATION_NOT_FOUND)
// Operations on the person's whole inbox name nothing that could be missing.
const WHOLE_INBOX = nothingToFind('it is about the token\'s person\'s own notifications, whichever there are.')

// Deep enough for any inbox; a page past it is refused rather than scanned.
const PAGE = { default: 1, max: 10_000 } as const

const notifications: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.addHook('onRequest', fastify.authenticate)

  fastify.get('/list', {
    compress: {},
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
  }, async (request) => {
    const page = pageParameter(request.query.page, '/page', PAGE)
    const perPage = pageParameter(request.query.per_page, '/per_page', NOTIFICATION_PAGE)
    const rows = await listNotifications(fastify.db, request.caller.personId, { limit: perPage, offset: (page - 1) * perPage })
    return { notifications: rows.map(toNotificationItem) }
  })

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

export default notifications
