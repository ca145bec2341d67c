// People, as the API shows them: the token's person (people/get_me).
import type { Kysely } from 'kysely'
import { prepare, value } from './prepared.js'
import type { PersonRow } from './project-aggregate.js'
import type { Database } from './types.js'

const FIND_PERSON = prepare({ personId: value<string>() }, (db, { personId }) => db
  .selectFrom('people')
  .where('id', '=', personId)
  .select(['id', 'full_name', 'email', 'title', 'avatar_url', 'type']))

/** The person with this id, or null. */
export async function findPerson (db: Kysely<Database>, personId: string): Promise<PersonRow | null> {
  const { rows: [row] } = await db.executeQuery(FIND_PERSON({ personId }))
  return row ?? null
}
