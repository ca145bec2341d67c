// companies/get: the token's person's company, with what Operately's include_* flags add.
import Type, { type Static } from 'typebox'
import { Id, Nullable, Shared } from '../schemas/common.js'
import { PersonSchema } from '../projects/schemas.js'

const flag = (description: string) => Type.Optional(Type.Enum(['true', 'false'], { description }))

export const GetCompanyQuerySchema = Type.Object({
  include_admins: flag('`true` fills `admins`'),
  include_owners: flag('`true` fills `owners`'),
  include_people: flag('`true` fills `people`'),
  include_members_access_levels: flag('`true` fills `people`, each with its `access_level`'),
  include_permissions: flag("`true` fills `permissions` (the token's person's)"),
  include_general_space: flag('`true` fills `general_space`')
}, { additionalProperties: false })

/** Operately's levels on a company: 100 full access (its admins here), 10 view (its other people). */
export const COMPANY_LEVEL = { view: 10, edit: 70, admin: 90, full: 100 } as const

export const CompanyMemberSchema = Type.Object({
  ...PersonSchema.properties,
  access_level: Type.Optional(Type.Integer({
    description: 'Their level on the company: 100 (full access) for an admin, 10 (view) for anyone else. On admins and owners always; ' +
      'on people with include_members_access_levels=true'
  }))
}, { additionalProperties: false, $id: 'CompanyMember', description: 'A person of the company, with their level on it where asked' })

export const CompanyPermissionsSchema = Type.Object(Object.fromEntries([
  'can_view', 'is_admin', 'can_manage_billing', 'can_edit_trusted_email_domains', 'can_invite_members', 'can_edit_members',
  'can_remove_members', 'can_restore_members', 'can_create_space', 'can_manage_admins', 'can_manage_owners', 'can_edit_details',
  'can_edit_members_access_levels'
].map((name) => [name, Type.Boolean()])) as Record<CompanyPermission, ReturnType<typeof Type.Boolean>>, {
  additionalProperties: false,
  $id: 'CompanyPermissions',
  description: "What the token's person may do with the company, by Operately's rules: can_view from view (10), " +
    'can_create_space from edit (70), is_admin and the member and billing permissions from admin (90), can_manage_admins, ' +
    'can_manage_owners and can_edit_trusted_email_domains from full access (100). An admin here has full access, anyone else view.'
})

export type CompanyPermission = 'can_view' | 'is_admin' | 'can_manage_billing' | 'can_edit_trusted_email_domains' | 'can_invite_members' |
  'can_edit_members' | 'can_remove_members' | 'can_restore_members' | 'can_create_space' | 'can_manage_admins' | 'can_manage_owners' |
  'can_edit_details' | 'can_edit_members_access_levels'

export const GeneralSpaceSchema = Type.Object({
  id: Id,
  name: Type.String(),
  is_member: Type.Boolean({ description: "Whether the token's person is a member of it" }),
  is_company_space: Type.Boolean({ description: 'Always true: it is the company-wide space' })
}, { additionalProperties: false, $id: 'GeneralSpace', description: "The company-wide space (Operately's \"General\"), made with the company" })

const members = (description: string) => Nullable(Type.Array(Shared(CompanyMemberSchema), { description }))

export const CompanySchema = Type.Object({
  id: Id,
  name: Type.String(),
  member_count: Type.Integer({ description: 'People of the company who are not suspended' }),
  admins: members('Its administrators who are not suspended, by name; null unless include_admins=true'),
  owners: members('The people with full access to it (here, its administrators), by name; null unless include_owners=true'),
  people: members('Its people who are not suspended, by name; null unless include_people or include_members_access_levels is true'),
  permissions: Nullable(Shared(CompanyPermissionsSchema)),
  general_space: Nullable(Shared(GeneralSpaceSchema))
}, { additionalProperties: false, $id: 'Company', description: 'A company: the people who work in it, their spaces and projects' })

export type Company = Static<typeof CompanySchema>
export type CompanyMember = Static<typeof CompanyMemberSchema>
export type CompanyPermissions = Static<typeof CompanyPermissionsSchema>

const erin = { id: '6NZUsJ8JHMr98VzwbMu1jM', full_name: 'Erin Walsh', email: 'erin@acme.test', title: 'Chief Operating Officer', avatar_url: null, type: 'human', access_level: 100 }

export const CompanyResponseSchema = Type.Object({ company: Shared(CompanySchema) }, {
  additionalProperties: false,
  description: "The token's person's company",
  examples: [{
    company: {
      id: '3rXzCvvbL7y6UnFDcqBwWl',
      name: 'Acme Corp',
      member_count: 4,
      admins: [erin],
      owners: null,
      people: null,
      permissions: null,
      general_space: null
    }
  }]
})
