// A mutation's If-Match, as CTEs of its one statement (db/project-mutations.ts): the
// check is made on the row the statement has locked, in the statement that writes,
// so it and the write are atomic.
import { sql, type Expression, type Kysely } from 'kysely'
import { CHILD_COLUMNS, projectAggregate, projectSource } from './project-aggregate.js'
import { fenced, projectTag } from './project-etag.js'
import type { Database } from './types.js'

/**
 * A mutation's If-Match, decided on the row the statement has locked (its CTE
 * `target`, which READ COMMITTED re-reads after waiting for the lock), so that of
 * many requests carrying one tag exactly one changes the project.
 *
 * `tag` is the project as the person reads it right before the change, and
 * `holds` says whether it is one of `tags` (none when all were weak). When it is
 * not, `moved` says whether the row changed after the statement's snapshot was
 * taken (another transaction committed a change while this one waited for the
 * lock): the tag then mixes the new row with rows of other tables as they were
 * before that change.
 *
 * The row also carries the child columns of the aggregate the tag was computed
 * on (CHILD_COLUMNS), so that the answer's aggregate, of the row after the change,
 * takes them from here instead of building them a second time.
 */
export function ifMatchPrecondition (db: Kysely<Database>, personId: Expression<string>, tags: Expression<string[]>) {
  const before = fenced(projectAggregate(db, projectSource('target'), personId))
  // One row, with a NULL tag when nothing is locked (the caller may not edit).
  const checked = fenced(db.selectFrom(sql`(SELECT 1)`.as('one'))
    .leftJoin(before.as('before'), (join) => join.onTrue())
    .select((eb) => [
      projectTag('before', sql<number>`(SELECT target.level FROM target)`).as('tag'),
      ...CHILD_COLUMNS.map((column) => eb.ref(`before.${column}`).as(column))
    ]))
  const holds = sql<boolean>`coalesce(checked.tag = ANY(${tags}::text[]), false)`
  return db.selectFrom(checked.as('checked'))
    .select([
      'checked.tag',
      holds.as('holds'),
      sql<boolean | null>`CASE WHEN ${holds} THEN NULL ELSE EXISTS (
        SELECT 1 FROM target t JOIN projects snapshot ON snapshot.id = t.id
        WHERE to_jsonb(snapshot) IS DISTINCT FROM to_jsonb(t) - 'level') END`.as('moved'),
      ...CHILD_COLUMNS.map((column) => sql.ref(`checked.${column}`).as(column))
    ])
}

/**
 * A mutation without If-Match (or with `*`): the precondition holds and there is
 * no tag to compute. A statement of its own rather than the conditional one with
 * a NULL list: PostgreSQL sets up every node of a plan on each execution, run or
 * not, and the tag's aggregate is about a third of a change's plan.
 */
export function noPrecondition (db: Kysely<Database>) {
  return db.selectNoFrom([
    sql<string | null>`NULL::text`.as('tag'),
    sql<boolean>`true`.as('holds'),
    sql<boolean | null>`NULL::boolean`.as('moved')
  ])
}

/** Whether the precondition CTE holds: what a change, and the answer built on it, require. */
export const PRECONDITION_HOLDS = sql<boolean>`EXISTS (SELECT 1 FROM precondition WHERE precondition.holds)`
