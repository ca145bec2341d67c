// A mutation's If-Match, as CTEs of its one statement (db/project-mutations.ts): the
// check is made on the row the statement has locked, in the statement that writes,
// so it and the write are atomic.
import { sql, type Expression, type Kysely } from 'kysely'
import { projectAggregate, projectSource } from './project-aggregate.js'
import { fenced, projectTag } from './project-etag.js'
import type { Database } from './types.js'

/**
 * A mutation's If-Match, decided on the row the statement has locked (its CTE
 * `target`, which READ COMMITTED re-reads after waiting for the lock), so that of
 * many requests carrying one tag exactly one changes the project.
 *
 * `tags` is null without an If-Match (or with `*`): the precondition holds and no
 * tag is computed, so an unconditional mutation costs what it did. Otherwise
 * `tag` is the project as the person reads it right before the change, and
 * `holds` says whether it is one of `tags`. When it is not, `moved` says whether
 * the row changed after the statement's snapshot was taken (another transaction
 * committed a change while this one waited for the lock): the tag then mixes the
 * new row with rows of other tables as they were before that change.
 */
export function ifMatchPrecondition (db: Kysely<Database>, personId: Expression<string>, tags: Expression<string[] | null>) {
  const before = fenced(projectAggregate(db, projectSource('target'), personId))
  const current = db.selectFrom(before.as('before'))
    .select(projectTag('before', sql<number>`(SELECT target.level FROM target)`).as('tag'))
  const checked = fenced(db.selectNoFrom(sql<string | null>`CASE WHEN ${tags}::text[] IS NULL THEN NULL ELSE (${current}) END`.as('tag')))
  const holds = sql<boolean>`(${tags}::text[] IS NULL OR coalesce(checked.tag = ANY(${tags}::text[]), false))`
  return db.selectFrom(checked.as('checked'))
    .select([
      'checked.tag',
      holds.as('holds'),
      sql<boolean | null>`CASE WHEN ${holds} THEN NULL ELSE EXISTS (
        SELECT 1 FROM target t JOIN projects snapshot ON snapshot.id = t.id
        WHERE to_jsonb(snapshot) IS DISTINCT FROM to_jsonb(t) - 'level') END`.as('moved')
    ])
}

/** Whether the precondition CTE holds: what a change, and the answer built on it, require. */
export const PRECONDITION_HOLDS = sql<boolean>`EXISTS (SELECT 1 FROM precondition WHERE precondition.holds)`
