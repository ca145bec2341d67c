// /api/external/v1/notifications/*: the token's person's notifications, Operately's
// names and shapes. A person sees and marks only their own: an id of someone
// else's notification is the same 404 as an unknown one. One file per operation.
import type { FastifyPluginAsync } from 'fastify'
import listOperation from './operations/list.js'
import getUnreadCount from './operations/get-unread-count.js'
import markAsRead from './operations/mark-as-read.js'
import markManyAsRead from './operations/mark-many-as-read.js'
import markAllAsRead from './operations/mark-all-as-read.js'

const notifications: FastifyPluginAsync = async (fastify) => {
  fastify.addHook('onRequest', fastify.authenticate)
  await fastify.register(listOperation)
  await fastify.register(getUnreadCount)
  await fastify.register(markAsRead)
  await fastify.register(markManyAsRead)
  await fastify.register(markAllAsRead)
}

export default notifications
