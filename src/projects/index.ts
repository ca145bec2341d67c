// /api/external/v1/projects/*: one file per operation under operations/.
import type { FastifyPluginAsync } from 'fastify'
import getProject from './operations/get.js'
import listProjects from './operations/list.js'
import updateName from './operations/update-name.js'
import updateDescription from './operations/update-description.js'
import createProject from './operations/create.js'
import updateStartDate from './operations/update-start-date.js'
import updateDueDate from './operations/update-due-date.js'
import updateParentGoal from './operations/update-parent-goal.js'
import moveToSpace from './operations/move-to-space.js'
import deleteProject from './operations/delete.js'
import pause from './operations/pause.js'
import resume from './operations/resume.js'
import close from './operations/close.js'
import updateChampion from './operations/update-champion.js'
import updateReviewer from './operations/update-reviewer.js'
import createContributor from './operations/create-contributor.js'
import updateContributor from './operations/update-contributor.js'
import deleteContributor from './operations/delete-contributor.js'

const projects: FastifyPluginAsync = async (fastify) => {
  fastify.addHook('onRequest', fastify.authenticate)
  await fastify.register(getProject)
  await fastify.register(listProjects)
  await fastify.register(updateName)
  await fastify.register(updateDescription)
  await fastify.register(createProject)
  await fastify.register(updateStartDate)
  await fastify.register(updateDueDate)
  await fastify.register(updateParentGoal)
  await fastify.register(moveToSpace)
  await fastify.register(deleteProject)
  await fastify.register(pause)
  await fastify.register(resume)
  await fastify.register(close)
  await fastify.register(updateChampion)
  await fastify.register(updateReviewer)
  await fastify.register(createContributor)
  await fastify.register(updateContributor)
  await fastify.register(deleteContributor)
}

export default projects
