// A person's company (companies/get): its name, how many people it has, and on
// request its administrators, its people, its general space and the person's own
// standing in it.
import { sql, type Kysely } from 'kysely'
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres'
import type { Database, PersonJson } from '../db/types.js'
import { COMPANY_LEVEL } from './schemas.js'

export interface CompanyIncludes { admins: boolean, people: boolean, generalSpace: boolean }

/** A person of the company with their level on it (admins full access, anyone else view). */
export type MemberJson = PersonJson & { access_level: number }

/** The company with its member count and the reader's own level; its admins, people and general space when asked for (else null). */
export async function findCompany (db: Kysely<Database>, companyId: string, readerId: string, include: CompanyIncludes) {
  return await db.selectFrom('companies as co')
    .innerJoin('people as me', (join) => join.on('me.id', '=', readerId))
    .where('co.id', '=', companyId)
    .select((eb) => {
      // The company's people who are not suspended, by name: all of them, or its admins.
      const members = (adminsOnly: boolean) => jsonArrayFrom(eb.selectFrom('people as m')
        .select(['m.id', 'm.full_name', 'm.email', 'm.title', 'm.avatar_url', 'm.type'])
        .select(sql<number>`CASE WHEN m.is_admin THEN ${sql.lit(COMPANY_LEVEL.full)} ELSE ${sql.lit(COMPANY_LEVEL.view)} END`.as('access_level'))
        .whereRef('m.company_id', '=', 'co.id')
        .where('m.suspended_at', 'is', null)
        .$if(adminsOnly, (qb) => qb.where('m.is_admin', '=', true))
        .orderBy('m.full_name').orderBy('m.id'))
      const generalSpace = jsonObjectFrom(eb.selectFrom('spaces as gs')
        .whereRef('gs.id', '=', 'co.general_space_id')
        .select(['gs.id', 'gs.name'])
        .select((eb) => eb.exists(eb.selectFrom('space_members as gm')
          .whereRef('gm.space_id', '=', 'gs.id').whereRef('gm.person_id', '=', 'me.id').select(sql.lit(1).as('one'))).$castTo<boolean>().as('is_member')))
      return [
        'co.id', 'co.name', 'me.is_admin as reader_is_admin',
        eb.selectFrom('people as m')
          .select(sql<number>`count(*)::int`.as('n'))
          .whereRef('m.company_id', '=', 'co.id')
          .where('m.suspended_at', 'is', null)
          .$asScalar().$notNull().as('member_count'),
        (include.admins ? members(true) : sql<MemberJson[] | null>`NULL`).as('admins'),
        (include.people ? members(false) : sql<MemberJson[] | null>`NULL`).as('people'),
        (include.generalSpace ? generalSpace : sql<null>`NULL`).as('general_space')
      ]
    })
    .executeTakeFirstOrThrow()
}

export type CompanyRow = Awaited<ReturnType<typeof findCompany>>
