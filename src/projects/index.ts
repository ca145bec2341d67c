// /api/external/v1/projects/*: one file per operation under operations/.
import type { FastifyPluginAsync } from 'fastify'
import getProject from './operations/get.js'
import listProjects from './operations/list.js'
import updateName from './operations/update-name.js'
import updateDescription from './operations/update-description.js'
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
