// People, as the API shows them: the token's person (people/get_me).
import type { Kysely } from 'kysely'
import { prepareForCaller, runAs, type Actor } from './caller.js'
import type { PersonRow } from './project-aggregate.js'
import type { Database } from './types.js'

// The caller's own row, in the statement that checks the token (db/caller.ts).
const FIND_ME = prepareForCaller('read', {}, (withCaller) => withCaller
  .selectFrom('caller')
  .innerJoin('people', 'people.id', 'caller.person_id')
  .select(['people.id', 'people.full_name', 'people.email', 'people.title', 'people.avatar_url', 'people.type']))

/** The caller's person (NoCaller when the token fails). */
export async function findMe (db: Kysely<Database>, actor: Actor): Promise<PersonRow> {
  const [row] = await runAs(db, FIND_ME, actor, {})
  return row!
}
