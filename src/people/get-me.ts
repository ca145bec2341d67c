// GET /api/external/v1/people/get_me: the token's person (the first call of Operately's CLI login).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { notFoundExample, queryErrors } from '../http/responses.js'
import { toPerson } from '../people/presenter.js'
import { GetMeQuerySchema, MeResponseSchema } from './schemas.js'

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
        404: notFoundExample(PERSON_NOT_FOUND, 'Not answered: a token whose person is gone is refused (401).')
      }
    }
  }, async (request) => {
    const me = await fastify.db.selectFrom('people')
      .where('id', '=', request.caller.personId)
      .select(['id', 'full_name', 'email', 'title', 'avatar_url', 'type'])
      .executeTakeFirstOrThrow()
    return { me: toPerson(me) }
  })
}

export default people
