// GET /api/external/v1/companies/get: the token's person's company.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { notFoundExample, queryErrors } from '../http/responses.js'
import { findCompany } from './query.js'
import { toCompany } from './presenter.js'
import { CompanyResponseSchema, GetCompanyQuerySchema } from './schemas.js'

const COMPANY_NOT_FOUND = 'company not found'

const companies: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.addHook('onRequest', fastify.authenticate)

  fastify.get('/get', {
    schema: {
      operationId: 'getCompany',
      tags: ['companies'],
      summary: "The token's person's company",
      description: 'The company the token\'s person belongs to: its id, name and how many people it has (not counting ' +
        'suspended ones). `include_admins=true` adds its administrators and `include_people=true` its people, each ' +
        'by name; otherwise they are null. Operately\'s other `include_*` flags (`true` or `false`) are accepted and ' +
        'change nothing. Read-only tokens may call it.',
      security: [{ bearerAuth: [] }],
      querystring: GetCompanyQuerySchema,
      response: {
        200: CompanyResponseSchema,
        ...queryErrors,
        404: notFoundExample(COMPANY_NOT_FOUND, 'Not answered: a token whose person (and with them their company) is gone is refused (401).')
      }
    }
  }, async (request) => {
    const company = await findCompany(fastify.db, request.caller.companyId, {
      admins: request.query.include_admins === 'true',
      people: request.query.include_people === 'true'
    })
    return { company: toCompany(company) }
  })
}

export default companies
