// /api/external/v1/people/*: the token's person (the first call of Operately's CLI login).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findMe } from '../../db/people.js'
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
        404: notFoundExample(PERSON_NOT_FOUND, 'Not answered: the token\'s check and this read are one statement, and ' +
          'a token whose person is gone is refused (401).')
      }
    }
  }, async (request) => {
    // The token's check found this person, not suspended, in the same statement.
    return { me: toPerson(await findMe(fastify.db, request.caller)) }
  })
}

export default people
