// A project's children are read from their own tables again, by the one query
// that builds a project (src/projects/query.ts): the kept copy in project_children
// and the triggers that refreshed it on every change of what it was built from go.
import type { Kysely } from 'kysely'
import { down as dropChildren, up as keepChildren } from './20261128000000_project_children.js'

export async function up (db: Kysely<any>): Promise<void> {
  await dropChildren(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  await keepChildren(db)
}
