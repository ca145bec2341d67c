// A person's access level on a space, as SQL over a row of each (Operately's
// rule for spaces): the highest of full access for an admin of the space's
// company, the level the space gives its company's members, and the person's own
// level as a member of the space. People of another company and suspended people
// have none. Creating a project needs edit access to its space; moving one, view
// access to the target space. The projects' own rule is access.ts.
import { sql, type Expression, type RawBuilder, type Selectable } from 'kysely'
import type { SpacesTable } from '../db/types.js'
import { ACCESS, type PersonRef } from './access.js'
import type { Queryable } from './query.js'

/** A space row in scope, with the columns the rule reads. */
export type SpaceRef = Expression<Pick<Selectable<SpacesTable>, 'id' | 'company_id' | 'company_access'>>

/** The access level of `person` on `space`: 0 for no access at all. */
export function spaceLevel (space: SpaceRef, person: PersonRef): RawBuilder<number> {
  return sql<number>`CASE WHEN ${person}.suspended_at IS NOT NULL OR ${person}.company_id <> ${space}.company_id THEN 0 ELSE greatest(
  ${space}.company_access,
  CASE WHEN ${person}.is_admin THEN ${sql.lit(ACCESS.full)} ELSE 0 END,
  coalesce((SELECT access_sm.access_level FROM space_members access_sm
    WHERE access_sm.space_id = ${space}.id AND access_sm.person_id = ${person}.id), 0)
) END`
}

/** A space as a person finds it: its company and their level on it; null when there is no such space. */
export async function findSpace (db: Queryable, spaceId: string, personId: string) {
  const found = await db.selectFrom('spaces as s')
    .innerJoin('people as me', (join) => join.on('me.id', '=', personId))
    .where('s.id', '=', spaceId)
    .select((eb) => ['s.id', 's.name', 's.company_id', 's.company_access', spaceLevel(eb.table('s'), eb.table('me')).as('level')])
    .executeTakeFirst()
  return found ?? null
}
