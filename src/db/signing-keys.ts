// The keys the service signs with, made by a migration (signing_keys).
import type { Kysely } from 'kysely'
import type { Database } from './types.js'

export type SigningKeyName = 'cursors'

/** The key of this name; its migration made it, so it is always there. */
export async function signingKey (db: Kysely<Database>, name: SigningKeyName): Promise<Buffer> {
  const row = await db.selectFrom('signing_keys').select('key').where('name', '=', name).executeTakeFirstOrThrow()
  return row.key
}
