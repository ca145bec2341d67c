// companies/get: the token's person's company.
import Type, { type Static } from 'typebox'
import { Id, Nullable, operatelyFlags, Shared } from '../schemas/common.js'
import { PersonSchema } from '../projects/schemas.js'

const flag = (description: string) => Type.Optional(Type.Enum(['true', 'false'], { description }))

export const GetCompanyQuerySchema = Type.Object({
  include_admins: flag('`true` fills `admins`'),
  include_people: flag('`true` fills `people`'),
  ...operatelyFlags('include_permissions', 'include_owners', 'include_general_space', 'include_members_access_levels')
}, { additionalProperties: false })

export const CompanySchema = Type.Object({
  id: Id,
  name: Type.String(),
  member_count: Type.Integer({ description: 'People of the company who are not suspended' }),
  admins: Nullable(Type.Array(Shared(PersonSchema), { description: 'Its administrators, by name; null unless include_admins=true' })),
  people: Nullable(Type.Array(Shared(PersonSchema), { description: 'Its people who are not suspended, by name; null unless include_people=true' }))
}, { additionalProperties: false, $id: 'Company', description: 'A company: the people who work in it, their spaces and projects' })

export type Company = Static<typeof CompanySchema>

export const CompanyResponseSchema = Type.Object({ company: Shared(CompanySchema) }, {
  additionalProperties: false,
  description: "The token's person's company",
  examples: [{
    company: {
      id: '3rXzCvvbL7y6UnFDcqBwWl',
      name: 'Acme Corp',
      member_count: 4,
      admins: [{ id: '6NZUsJ8JHMr98VzwbMu1jM', full_name: 'Erin Walsh', email: 'erin@acme.test', title: 'Chief Operating Officer', avatar_url: null, type: 'human' }],
      people: null
    }
  }]
})
