// Who a request acts for, found in the very statement that serves it: every
// authenticated operation's statement starts with the same CTEs, which look the
// token up by its digest, record its use (at most once a minute) and yield the
// `caller` (the person and the token) only when the token may be used, and for a
// mutation only when it is not read-only. The operation's own CTEs and its answer
// are written against `caller`, never against a person id the client could name,
// so with no valid caller nothing is read or written: every access check fails on
// a missing person. A successful request is one round trip.
//
// The answer is read `FROM caller`: no row at all means the token failed (which
// one, and why, is then asked of db/tokens.ts's findToken, a second statement only
// a failing request takes); a row means the caller was found, whatever the
// operation found for them (its columns are null for nothing found).
//
// The operator's commands (src/cli.ts) and the benchmarks act as a person without
// a token: each statement is also compiled with a `caller` made of a person id.
import { sql, type Compilable, type CompiledQuery, type Expression, type Kysely, type QueryCreator } from 'kysely'
import { prepare, value, type Declared, type ValueParameters, type Values } from './prepared.js'
import type { Database } from './types.js'

/** The token a request presented, by its digest; `confirmed` once a statement (or findToken) found it valid. */
export interface Caller {
  digest: Buffer
  confirmed: boolean
}

/** A person acted for without a token (operator commands, benchmarks): nothing checks or records a token. */
export interface Operator {
  personId: string
  tokenId?: string | null
}

export type Actor = Caller | Operator

/** The statement found no valid caller for the request's token: findToken says why. */
export class NoCaller extends Error {
  constructor () {
    super('no valid caller for the presented token')
  }
}

/** Why a token cannot be used. */
export type TokenRejection = 'revoked' | 'expired' | 'suspended'

/** The token, its owner and why it cannot be used, or no row. */
const tokenLookup = (db: Kysely<Database>, digest: Expression<Buffer>) => db.selectFrom('api_tokens as t')
  .innerJoin('people as p', 'p.id', 't.person_id')
  .where('t.digest', '=', digest)
  .select((eb) => [
    't.id as token_id', 't.person_id', 't.read_only', 't.last_used_at',
    eb.case()
      .when('t.revoked_at', 'is not', null).then(sql.lit('revoked'))
      .when(sql<boolean>`t.expires_at <= now()`).then(sql.lit('expired'))
      .when('p.suspended_at', 'is not', null).then(sql.lit('suspended'))
      .else(null)
      .end()
      .$castTo<TokenRejection | null>()
      .as('rejection')
  ])

/** A statement's `caller` CTE: one row or none. */
export interface CallerRow {
  person_id: string
  token_id: string | null
}

/** What an operation's statement is built on: the query creator with `caller` in scope. */
export type WithCaller = QueryCreator<Database & { caller: CallerRow }>

/** The caller's person, as a scalar anywhere in the statement (NULL without a caller). */
export const CALLER_PERSON = sql<string>`(SELECT caller.person_id FROM caller)`
/** The caller's token, as a scalar anywhere in the statement (NULL without one). */
export const CALLER_TOKEN = sql<string | null>`(SELECT caller.token_id FROM caller)`

/** Whether a statement reads only (read-only tokens may call it) or writes. */
export type Access = 'read' | 'write'

/**
 * The CTE `token` (the lookup), and with `touch` the recording of its use, at most
 * once a minute and only for a token that may be used. The use is recorded on the
 * token's row taken with SKIP LOCKED. A mutation holds that lock until it commits;
 * were it to wait then for a project row that another request with the same token
 * holds while waiting for this token row, the two would deadlock (PostgreSQL does
 * not promise in which order it runs a statement's CTEs). Skipping the row
 * (whoever holds it is recording the use anyway) means no statement ever waits
 * for a token row: recording the use can cause neither a wait nor a deadlock.
 * Rechecked on the locked row, so a use just recorded by someone else is not
 * recorded again.
 */
export function withToken (db: Kysely<Database>, digest: Expression<Buffer>, touch: boolean) {
  const found = db.with('token', () => tokenLookup(db, digest))
  return touch
    ? found.with('touch', (qb) => qb.updateTable('api_tokens')
      .set({ last_used_at: sql`now()` })
      .where('api_tokens.id', 'in', (eb) => eb.selectFrom('api_tokens as used')
        .innerJoin('token', 'token.token_id', 'used.id')
        .where('token.rejection', 'is', null)
        .where((eb) => eb.or([
          eb('used.last_used_at', 'is', null),
          eb('used.last_used_at', '<', sql<Date>`now() - interval '1 minute'`)
        ]))
        .select('used.id')
        .forUpdate(['used'])
        .skipLocked())) as unknown as typeof found
    : found
}

/** The CTEs of a token's caller: `token`, the recording of its use with `touch`, and `caller`. */
function tokenCaller (db: Kysely<Database>, digest: Expression<Buffer>, access: Access, touch: boolean): WithCaller {
  return withToken(db, digest, touch).with('caller', (qb) => qb.selectFrom('token')
    .where('token.rejection', 'is', null)
    .$if(access === 'write', (qb) => qb.where('token.read_only', '=', false))
    .select(['token.person_id', sql<string | null>`token.token_id`.as('token_id')])) as unknown as WithCaller
}

/** The CTE of an operator's caller: the person, if they exist. */
function operatorCaller (db: Kysely<Database>, personId: Expression<string>, tokenId: Expression<string | null>): WithCaller {
  return db.with('caller', (qb) => qb.selectFrom('people as op')
    .where('op.id', '=', personId)
    .select(['op.id as person_id', sql<string | null>`${tokenId}::uuid`.as('token_id')])) as unknown as WithCaller
}

const TOKEN = { digest: value<Buffer>() }
const OPERATOR = { personId: value<string>(), tokenId: value<string | null>() }

/** One operation's statement, compiled for each kind of caller. */
export interface CallerStatement<V, R> {
  readonly access: Access
  /** For a token, recording its use. */
  readonly token: (values: V & { digest: Buffer }) => CompiledQuery<R>
  /** For a token, without recording its use: a read on a database that takes no writes. */
  readonly tokenReadOnly: ((values: V & { digest: Buffer }) => CompiledQuery<R>) | null
  readonly operator: (values: V & { personId: string, tokenId: string | null }) => CompiledQuery<R>
}

/**
 * Compiles an operation's statement once per kind of caller (prepared.ts): `build`
 * receives the query creator with `caller` in scope (for the statement itself),
 * the values' parameters, and the plain builder (for subqueries: a WITH holding a
 * write must stay at the top). A read is also compiled without recording the
 * token's use.
 */
export function prepareForCaller<D extends Declared, R> (
  access: Access,
  declared: D,
  build: (withCaller: WithCaller, values: ValueParameters<D>, db: Kysely<Database>) => Compilable<R>
): CallerStatement<Values<D>, R> {
  type WithToken = D & typeof TOKEN
  type WithOperator = D & typeof OPERATOR
  const forToken = (touch: boolean) => prepare<WithToken, R>({ ...declared, ...TOKEN } as WithToken,
    (db, values) => build(tokenCaller(db, values.digest as Expression<Buffer>, access, touch), values, db))
  return {
    access,
    token: forToken(true) as CallerStatement<Values<D>, R>['token'],
    tokenReadOnly: access === 'read' ? forToken(false) as CallerStatement<Values<D>, R>['token'] : null,
    operator: prepare<WithOperator, R>({ ...declared, ...OPERATOR } as WithOperator,
      (db, values) => build(operatorCaller(db, values.personId as Expression<string>, values.tokenId as Expression<string | null>), values, db)) as CallerStatement<Values<D>, R>['operator']
  }
}

/** SQLSTATE read_only_sql_transaction: a standby, or default_transaction_read_only. */
const READ_ONLY_TRANSACTION = '25006'
/** How long a database found read-only is taken to stay so before writing is tried again. */
const READ_ONLY_RECHECK_MS = 5000

// Per database: until when token lookups and reads skip recording the token's use.
const readOnlyUntil = new WeakMap<Kysely<Database>, number>()

/**
 * Runs `query` (which records a token's use), or `readOnly` (which does not) while
 * the database is known to take no writes. A database that refuses the write
 * (25006) is taken to stay read-only for a few seconds, during which reads cost
 * one round trip again; then recording is tried again. Without `readOnly` the
 * refusal is the answer (a mutation on a read-only database).
 */
export async function runRecordingUse<R> (db: Kysely<Database>, query: CompiledQuery<R>, readOnly: CompiledQuery<R> | null): Promise<R[]> {
  if (readOnly !== null && (readOnlyUntil.get(db) ?? 0) > Date.now()) return (await db.executeQuery(readOnly)).rows
  try {
    const { rows } = await db.executeQuery(query)
    readOnlyUntil.delete(db)
    return rows
  } catch (error) {
    if ((error as { code?: unknown }).code !== READ_ONLY_TRANSACTION) throw error
    readOnlyUntil.set(db, Date.now() + READ_ONLY_RECHECK_MS)
    if (readOnly === null) throw error
  }
  return (await db.executeQuery(readOnly)).rows
}

/**
 * Runs an operation's statement for the actor: its rows, each with the caller
 * found. With no row the token failed: NoCaller (the error handler asks findToken
 * why). A token's caller is then confirmed.
 */
export async function runAs<V, R> (db: Kysely<Database>, statement: CallerStatement<V, R>, actor: Actor, values: V): Promise<R[]> {
  let rows: R[]
  if ('digest' in actor) {
    const withToken = { ...values, digest: actor.digest }
    rows = await runRecordingUse(db, statement.token(withToken), statement.tokenReadOnly?.(withToken) ?? null)
  } else {
    rows = (await db.executeQuery(statement.operator({ ...values, personId: actor.personId, tokenId: actor.tokenId ?? null }))).rows
  }
  if (rows.length === 0) throw new NoCaller()
  if ('digest' in actor) actor.confirmed = true
  return rows
}
