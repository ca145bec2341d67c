// A person's company (companies/get): its name, how many people it has, and on
// request its administrators and its people.
import { sql, type Kysely } from 'kysely'
import { jsonArrayFrom } from 'kysely/helpers/postgres'
import type { Database, PersonJson } from '../db/types.js'

/** The company with its member count, and its admins and people when asked for (else null). */
export async function findCompany (db: Kysely<Database>, companyId: string, include: { admins: boolean, people: boolean }) {
  return await db.selectFrom('companies as co')
    .where('co.id', '=', companyId)
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
        (include.admins ? members(true) : sql<PersonJson[] | null>`NULL`).as('admins'),
        (include.people ? members(false) : sql<PersonJson[] | null>`NULL`).as('people')
      ]
    })
    .executeTakeFirstOrThrow()
}

export type CompanyRow = Awaited<ReturnType<typeof findCompany>>
