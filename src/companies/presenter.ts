// The Company object of the API from its row.
import type { CompanyRow } from './query.js'
import { shortId } from '../ids.js'
import type { Company } from './schemas.js'
import { toPerson } from '../people/presenter.js'

export function toCompany (row: CompanyRow): Company {
  return {
    id: shortId(row.id),
    name: row.name,
    member_count: row.member_count,
    admins: row.admins?.map(toPerson) ?? null,
    people: row.people?.map(toPerson) ?? null
  }
}
