// The Company object of the API from its row.
import type { CompanyRow, MemberJson } from './query.js'
import { shortId } from '../ids.js'
import { COMPANY_LEVEL, type Company, type CompanyMember, type CompanyPermissions } from './schemas.js'
import { toPerson } from '../people/presenter.js'

export interface CompanyAnswer { admins: boolean, owners: boolean, people: boolean, accessLevels: boolean, permissions: boolean, generalSpace: boolean }

function toMember (m: MemberJson, withLevel: boolean): CompanyMember {
  return withLevel ? { ...toPerson(m), access_level: m.access_level } : toPerson(m)
}

/** Operately's company permissions for a level on the company (a read-only company it has is not a thing here). */
export function companyPermissions (level: number): CompanyPermissions {
  const admin = level >= COMPANY_LEVEL.admin
  const full = level >= COMPANY_LEVEL.full
  return {
    can_view: level >= COMPANY_LEVEL.view,
    is_admin: admin,
    can_manage_billing: admin,
    can_edit_trusted_email_domains: full,
    can_invite_members: admin,
    can_edit_members: admin,
    can_remove_members: admin,
    can_restore_members: admin,
    can_create_space: level >= COMPANY_LEVEL.edit,
    can_manage_admins: full,
    can_manage_owners: full,
    can_edit_details: admin,
    can_edit_members_access_levels: admin
  }
}

/** The company as `answer` asks for it; owners are its admins, who alone have full access to it here. */
export function toCompany (row: CompanyRow, answer: CompanyAnswer): Company {
  const admins = row.admins?.map((m) => toMember(m, true)) ?? null
  return {
    id: shortId(row.id),
    name: row.name,
    member_count: row.member_count,
    admins: answer.admins ? admins : null,
    owners: answer.owners ? admins : null,
    people: row.people?.map((m) => toMember(m, answer.accessLevels)) ?? null,
    permissions: answer.permissions ? companyPermissions(row.reader_is_admin ? COMPANY_LEVEL.full : COMPANY_LEVEL.view) : null,
    general_space: row.general_space === null
      ? null
      : { id: shortId(row.general_space.id), name: row.general_space.name, is_member: row.general_space.is_member, is_company_space: true }
  }
}
