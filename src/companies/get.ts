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
        'suspended ones). Each of Operately\'s `include_*` flags (`true` or `false`) fills one field, null otherwise: ' +
        '`include_admins` its administrators and `include_owners` the people with full access to it (here the same: an ' +
        'admin has full access), each with `access_level`; `include_people` its people; `include_members_access_levels` ' +
        'its people, each with `access_level`; `include_permissions` what the token\'s person may do with it; ' +
        '`include_general_space` its company-wide space (null for a company without one). Read-only tokens may call it.',
      security: [{ bearerAuth: [] }],
      querystring: GetCompanyQuerySchema,
      response: {
        200: CompanyResponseSchema,
        ...queryErrors,
        404: notFoundExample(COMPANY_NOT_FOUND, 'Not answered: a token whose person (and with them their company) is gone is refused (401).')
      }
    }
  }, async (request) => {
    const asked = (flag: keyof typeof request.query) => request.query[flag] === 'true'
    const answer = {
      admins: asked('include_admins'),
      owners: asked('include_owners'),
      people: asked('include_people') || asked('include_members_access_levels'),
      accessLevels: asked('include_members_access_levels'),
      permissions: asked('include_permissions'),
      generalSpace: asked('include_general_space')
    }
    const company = await findCompany(fastify.db, request.caller.companyId, request.caller.personId, {
      admins: answer.admins || answer.owners, people: answer.people, generalSpace: answer.generalSpace
    })
    return { company: toCompany(company, answer) }
  })
}

export default companies
