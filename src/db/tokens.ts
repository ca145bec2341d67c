// API tokens: issued once in clear, stored only as a SHA-256 digest.
import { createHash, randomBytes } from 'node:crypto'
import { sql, type Selectable } from 'kysely'
import type { Db } from './index.js'
import { prepare, value, type RowOf } from './prepared.js'
import type { ApiTokensTable, PeopleTable } from './types.js'
import { runRecordingUse, withToken } from './caller.js'
import { MAX_EXPIRY_DAYS, TOKEN_PREFIX, TOKEN_SECRET_BYTES } from '../token-format.js'

export { TOKEN_PREFIX }

function generateToken (): string {
  return TOKEN_PREFIX + randomBytes(TOKEN_SECRET_BYTES).toString('base64url')
}

export function tokenDigest (token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest()
}

/** A row with its timestamps as ISO 8601 text, as the command line prints it. */
type IsoDates<R> = { [K in keyof R]: R[K] extends Date ? string : Date extends R[K] ? Exclude<R[K], Date> | string : R[K] }

/** A token's columns and its owner's e-mail; never its digest. */
type TokenColumns<C extends keyof Selectable<ApiTokensTable>> = IsoDates<Pick<Selectable<ApiTokensTable>, C> & Pick<Selectable<PeopleTable>, 'email'>>

/** A token just issued, with its secret: shown once. */
export type IssuedToken = TokenColumns<'id' | 'name' | 'read_only' | 'expires_at'> & { token: string }

export class UnknownPersonError extends Error {}

/** Issues a token for the person with this e-mail; the clear token is returned once, here. */
export async function createToken (db: Db, options: {
  email: string
  readOnly?: boolean
  name?: string | null
  expiresInDays?: number | null
}): Promise<IssuedToken> {
  const person = await db.selectFrom('people').select(['id', 'email'])
    .where(sql<string>`lower(email)`, '=', options.email.trim().toLowerCase())
    .executeTakeFirst()
  if (!person) throw new UnknownPersonError(`no person with e-mail ${options.email}`)
  const days = options.expiresInDays
  if (days != null && !(Number.isFinite(days) && days > 0 && days <= MAX_EXPIRY_DAYS)) {
    throw new RangeError(`a token expires after more than 0 and at most ${MAX_EXPIRY_DAYS} days, not ${days}`)
  }
  const token = generateToken()
  const row = await db.insertInto('api_tokens')
    .values({
      person_id: person.id,
      name: options.name ?? null,
      digest: tokenDigest(token),
      read_only: options.readOnly ?? false,
      expires_at: days == null ? null : new Date(Date.now() + days * 86_400_000)
    })
    .returning(['id', 'name', 'read_only', 'expires_at'])
    .executeTakeFirstOrThrow()
  return {
    id: row.id,
    token,
    name: row.name,
    email: person.email,
    read_only: row.read_only,
    expires_at: row.expires_at?.toISOString() ?? null
  }
}

export type TokenListing = TokenColumns<'id' | 'name' | 'read_only' | 'expires_at' | 'revoked_at' | 'last_used_at' | 'inserted_at'>

export async function listTokens (db: Db, email?: string): Promise<TokenListing[]> {
  let query = db.selectFrom('api_tokens as t')
    .innerJoin('people as p', 'p.id', 't.person_id')
    .select(['t.id', 't.name', 'p.email', 't.read_only', 't.expires_at', 't.revoked_at', 't.last_used_at', 't.inserted_at'])
    .orderBy('t.inserted_at').orderBy('t.id')
  if (email !== undefined) query = query.where(sql<string>`lower(p.email)`, '=', email.trim().toLowerCase())
  const rows = await query.execute()
  return rows.map((r) => ({
    ...r,
    expires_at: r.expires_at?.toISOString() ?? null,
    revoked_at: r.revoked_at?.toISOString() ?? null,
    last_used_at: r.last_used_at?.toISOString() ?? null,
    inserted_at: r.inserted_at.toISOString()
  }))
}

/** Revokes a token; false when there is no such token or it was revoked already. */
export async function revokeToken (db: Db, id: string): Promise<boolean> {
  const result = await db.updateTable('api_tokens')
    .set({ revoked_at: sql`now()` })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

// The lookup of every operation's statement (db/caller.ts), on its own.
const findTokenStatement = (touch: boolean) => prepare({ digest: value<Buffer>() }, (db, { digest }) => withToken(db, digest, touch)
  .selectFrom('token')
  .select(['token.token_id', 'token.person_id', 'token.read_only', 'token.rejection']))

const FIND_TOKEN = findTokenStatement(true)
// The same lookup without recording the use: for a database that takes no writes.
const FIND_TOKEN_READ_ONLY = findTokenStatement(false)

/** The token's id, its owner, whether it is read-only, and why it cannot be used (null when it can). */
export type TokenOwner = RowOf<typeof FIND_TOKEN>

/**
 * Finds the token and its owner, and records its use at most once a minute, in
 * one statement. Every operation's statement does this itself (db/caller.ts); this
 * is the second statement of a request whose own found no valid caller, asked
 * why, and of one that failed before its statement ran. On a read-only database
 * (a standby after a failover) the use cannot be recorded, and the lookup falls
 * back to the read-only form, as the operations' reads do.
 */
export async function findToken (db: Db, digest: Buffer): Promise<TokenOwner | null> {
  const [row] = await runRecordingUse(db, FIND_TOKEN({ digest }), FIND_TOKEN_READ_ONLY({ digest }))
  return row ?? null
}
