// The entity tag of a project as one person reads it (RFC 9110 §8.8.3), computed by
// the database in the very statement that reads or changes the project, so that a
// mutation can compare a client's If-Match with the row it has locked, in SQL,
// before it writes anything.
//
// The tag is a SHA-256 digest of the aggregate row the answer is made from (every
// column of projectAggregate, its nested JSON included) and of the person's access
// level (their permissions): the answer's bytes are a function of exactly these, so
// two reads that answer the same bytes give the same tag, and any change of the
// answer (a rename, someone else's edit, a notification, a subscription, a change of
// access, the clock making the project outdated) gives another. The same function
// serves projects/get, a mutation's answer (the row after the change) and the
// If-Match check (the locked row before it, db/project-precondition.ts).
import { sql, type Expression, type RawBuilder, type SelectQueryBuilder } from 'kysely'

/**
 * The tag of the aggregate row that the FROM item `row` holds, for a person at
 * access `level`: base64url of the digest, without padding (43 characters).
 *
 * The row is digested in its binary form (record_send): no text is escaped or
 * validated on the way, which on a 512 KiB description costs several times what
 * the digest does. (The nested JSON holds timestamps as text: the kept children's
 * in UTC, the person's notifications in the session's time zone, the database's own
 * for every connection of the service, so every instance computes the same tag.) The level goes into a second, 36-byte digest, so the
 * row's bytes are not copied to be joined to it.
 */
export function projectTag (row: string, level: Expression<number | null>): RawBuilder<string> {
  const digest = sql`sha256(sha256(record_send(${sql.table(row)})) || int4send(${level}::int))`
  return sql<string>`translate(rtrim(encode(${digest}, 'base64'), '='), '+/', '-_')`
}

/**
 * The query as a subquery computed once. Without the fence PostgreSQL inlines a
 * subquery into its parent, and a whole-row reference to it (the tag's to_json)
 * would repeat every subquery of the aggregate a second time.
 */
export function fenced<DB, TB extends keyof DB, O> (query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return query.modifyEnd(sql`OFFSET 0`)
}
