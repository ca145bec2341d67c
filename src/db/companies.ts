// A person's company (companies/get): its name, how many people it has, and on
// request its administrators and its people, in one statement.
import { sql, type Kysely } from 'kysely'
import { jsonArrayFrom } from 'kysely/helpers/postgres'
import { value, type RowOf } from './prepared.js'
import { prepareForCaller, runAs, type Actor } from './caller.js'
import type { PersonRow } from './project-aggregate.js'
import type { Database } from './types.js'

const FIND_COMPANY = prepareForCaller('read', {
  withAdmins: value<boolean>(), withPeople: value<boolean>()
}, (withCaller, { withAdmins, withPeople }) => withCaller
  .selectFrom('caller')
  .innerJoin('people as me', 'me.id', 'caller.person_id')
  .innerJoin('companies as co', 'co.id', 'me.company_id')
  .select((eb) => {
    // The company's people who are not suspended, by name: all of them, or its admins.
    const members = (adminsOnly: boolean) => jsonArrayFrom(eb.selectFrom('people as m')
      .select(['m.id', 'm.full_name', 'm.email', 'm.title', 'm.avatar_url', 'm.type'])
      .whereRef('m.company_id', '=', 'co.id')
      .where('m.suspended_at', 'is', null)
      .$if(adminsOnly, (qb) => qb.where('m.is_admin', '=', true))
      .orderBy('m.full_name').orderBy('m.id'))
    return [
      'co.id', 'co.name',
      eb.selectFrom('people as m')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('m.company_id', '=', 'co.id')
        .where('m.suspended_at', 'is', null)
        .$asScalar().$notNull().as('member_count'),
      sql<PersonRow[] | null>`CASE WHEN ${withAdmins} THEN ${members(true)} END`.as('admins'),
      sql<PersonRow[] | null>`CASE WHEN ${withPeople} THEN ${members(false)} END`.as('people')
    ]
  }))

/** A company with its member count, and its admins and people when asked for (else null). */
export type CompanyRow = RowOf<typeof FIND_COMPANY.token>

/** The caller's company (NoCaller when the token fails). */
export async function findCompany (db: Kysely<Database>, actor: Actor, include: { admins: boolean, people: boolean }): Promise<CompanyRow> {
  const [row] = await runAs(db, FIND_COMPANY, actor, { withAdmins: include.admins, withPeople: include.people })
  return row!
}
