// /api/external/v1/people/*: the token's person (the first call of Operately's CLI login).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findPerson } from '../../db/people.js'
import { toPerson } from '../../presenters/project.js'
import { GetMeQuerySchema, MeResponseSchema } from '../../schemas/people.js'
import { notFoundExample, queryErrors } from '../responses.js'

const PERSON_NOT_FOUND = 'person not found'

const people: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.addHook('onRequest', fastify.authenticate)

  fastify.get('/get_me', {
    schema: {
      operationId: 'getMe',
      tags: ['people'],
      summary: "The token's person",
      description: 'Who the token acts for. Read-only tokens may call it. `include_manager` and Operately\'s `include_*` ' +
        'flags (`true` or `false`) are accepted and change nothing. Any other query parameter is 400.',
      security: [{ bearerAuth: [] }],
      querystring: GetMeQuerySchema,
      response: {
        200: MeResponseSchema,
        ...queryErrors,
        404: notFoundExample(PERSON_NOT_FOUND, 'The token\'s person was deleted between the token\'s check and this ' +
          'read; from then on the token is refused (401).')
      }
    }
  }, async (request) => {
    // The token lookup has just found this person, not suspended; only a deletion in between makes this miss.
    const person = await findPerson(fastify.db, request.caller.personId)
    if (person === null) throw fastify.httpErrors.notFound(PERSON_NOT_FOUND)
    return { me: toPerson(person) }
  })
}

export default people
