// API tokens: issued once in clear, stored only as a SHA-256 digest.
import { createHash, randomBytes } from 'node:crypto'
import { sql, type Selectable } from 'kysely'
import type { Db } from '../db/index.js'
import { statement } from '../db/statements.js'
import type { ApiTokensTable, PeopleTable } from '../db/types.js'
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

/** Why a token cannot be used. */
export type TokenRejection = 'revoked' | 'expired' | 'suspended'

/** A token found by its digest: its owner, and why it cannot be used (null when it can). */
export interface TokenOwner {
  token_id: string
  person_id: string
  company_id: string
  read_only: boolean
  rejection: TokenRejection | null
  /** Whether its last use is unrecorded or over a minute old: recordUse() then records this one. */
  stale: boolean
  /** pg_current_snapshot() and now() (ms) as the token was read: http/answer-cache.ts keeps answers by them. */
  snapshot: string
  now_ms: number
}

const tokenByDigest = statement(['digest'], (db, { digest }: { digest: Buffer }) => db.selectFrom('api_tokens as t')
    .innerJoin('people as p', 'p.id', 't.person_id')
    .where('t.digest', '=', digest)
    .select((eb) => [
      't.id as token_id', 't.person_id', 'p.company_id', 't.read_only',
      eb.case()
        .when('t.revoked_at', 'is not', null).then(sql.lit('revoked'))
        .when(sql<boolean>`t.expires_at <= now()`).then(sql.lit('expired'))
        .when('p.suspended_at', 'is not', null).then(sql.lit('suspended'))
        .else(null)
        .end()
        .$castTo<TokenRejection | null>()
        .as('rejection'),
      sql<boolean>`(t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute')`.as('stale'),
      sql<string>`pg_current_snapshot()::text`.as('snapshot'),
      sql<number>`(extract(epoch from now()) * 1000)::float8`.as('now_ms')
    ]))

/** The token with this digest and its owner, or null when there is none. */
export async function findToken (db: Db, digest: Buffer): Promise<TokenOwner | null> {
  const [row] = await tokenByDigest(db, { digest })
  return row ?? null
}

/** SQLSTATE read_only_sql_transaction: a standby after a failover, or default_transaction_read_only. */
const READ_ONLY_TRANSACTION = '25006'
/** How long a database found read-only is taken to stay so before a use is recorded again. */
const READ_ONLY_RECHECK_MS = 5000
// Per database: until when uses are not recorded, as it refused the last write.
const readOnlyUntil = new WeakMap<Db, number>()

/**
 * Records a token's use, at most once a minute (SPEC part 2: never a write on
 * every request). A database that takes no writes (a standby) leaves it unrecorded
 * for a few seconds at a time: reads go on without a failed write first. The id
 * of the transaction that recorded it, when one did (http/answer-cache.ts lets its
 * commit pass: no answer reads when a token was last used).
 */
export async function recordUse (db: Db, tokenId: string): Promise<string | undefined> {
  if ((readOnlyUntil.get(db) ?? 0) > Date.now()) return undefined
  try {
    const row = await db.updateTable('api_tokens')
      .set({ last_used_at: sql`now()` })
      .where('id', '=', tokenId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
      .returning(sql<string>`pg_current_xact_id()::text`.as('xid'))
      .executeTakeFirst()
    return row?.xid
  } catch (error) {
    if ((error as { code?: unknown }).code !== READ_ONLY_TRANSACTION) throw error
    readOnlyUntil.set(db, Date.now() + READ_ONLY_RECHECK_MS)
    return undefined
  }
}
