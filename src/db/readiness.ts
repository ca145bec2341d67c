// What /health/ready asks the database, in one statement: the newest migration
// applied, whether the database takes writes, and whether this service's role
// holds the privileges its per-request statements need.
import { sql, type Kysely } from 'kysely'
import type { Database } from './types.js'

type Privilege = 'SELECT' | 'UPDATE' | 'INSERT' | 'DELETE'

/**
 * Each table the per-request statements (every operation, and the token's
 * lookup) use, and how. test/routes/health.test.ts keeps it equal to the
 * tables those statements name.
 */
export const TABLE_PRIVILEGES: Record<string, readonly Privilege[]> = {
  api_tokens: ['SELECT', 'UPDATE'], // the token's use is recorded, at most once a minute
  projects: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'], // projects/create, the changes, projects/delete
  activities: ['SELECT', 'INSERT'], // inserted, and its id returned
  people: ['SELECT'],
  space_members: ['SELECT'],
  project_contributors: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'], // a new project's people; champions, reviewers and contributors change
  project_pins: ['SELECT'],
  // What a project is built from (src/projects/query.ts).
  spaces: ['SELECT'],
  goals: ['SELECT'],
  project_milestones: ['SELECT'],
  project_key_resources: ['SELECT'],
  project_check_ins: ['SELECT'],
  project_retrospectives: ['SELECT', 'INSERT'], // written when a project is closed
  project_task_statuses: ['SELECT', 'INSERT'], // a new project's task statuses
  subscription_lists: ['SELECT', 'INSERT', 'UPDATE'], // made on a first mention (INSERT … ON CONFLICT DO UPDATE)
  subscriptions: ['SELECT', 'INSERT', 'UPDATE'], // a mention subscribes (INSERT … ON CONFLICT DO NOTHING); a new champion's canceled one is taken up again
  notifications: ['SELECT', 'INSERT', 'UPDATE'], // a description change notifies; marking as read
  companies: ['SELECT'], // companies/get
  signing_keys: ['SELECT'], // read once, for page cursors
  webhooks: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'], // a change finds its endpoints; webhooks/*
  webhook_deliveries: ['SELECT', 'INSERT'], // a change's outbox; webhooks/list_deliveries
  'pgboss.job': ['SELECT', 'INSERT'], // a delivery's job, queued by the change (src/db/jobs.ts); webhooks/list_deliveries counts those with none
  'pgboss.queue': ['SELECT'] // the expiry and retries the job takes from its queue
}

/** The schemas of the tables above outside the search path: a role needs USAGE on each. */
export const SCHEMAS = [...new Set(Object.keys(TABLE_PRIVILEGES).filter((t) => t.includes('.')).map((t) => t.split('.')[0]!))]

const WANTED = Object.entries(TABLE_PRIVILEGES).flatMap(([table, privileges]) => privileges.map((p) => `${table} ${p}`))
  .concat(SCHEMAS.map((schema) => `${schema} USAGE`))

export interface Readiness {
  /** The newest migration applied. */
  migration: string | null
  /** A standby, or default_transaction_read_only: reads only. */
  readOnly: boolean
  /** `table PRIVILEGE` for each privilege the current role lacks, or whose table is missing. */
  missing: string[]
}

/** Fails with 42P01 when the database was never migrated. */
export async function readiness (db: Kysely<Database>): Promise<Readiness> {
  const { rows: [row] } = await sql<{ migration: string | null, read_only: boolean, missing: string[] }>`
    SELECT (SELECT max(name) FROM kysely_migration) AS migration,
      current_setting('transaction_read_only') = 'on' AS read_only,
      ARRAY(
        SELECT w.wanted FROM unnest(ARRAY[${sql.join(WANTED.map((w) => sql.lit(w)))}]::text[]) AS w(wanted)
        WHERE NOT coalesce(CASE WHEN split_part(w.wanted, ' ', 2) = 'USAGE'
          THEN has_schema_privilege(to_regnamespace(split_part(w.wanted, ' ', 1))::oid, 'USAGE')
          ELSE has_table_privilege(to_regclass(split_part(w.wanted, ' ', 1)), split_part(w.wanted, ' ', 2)) END, false)
      ) AS missing`.execute(db)
  return { migration: row?.migration ?? null, readOnly: row?.read_only ?? false, missing: row?.missing ?? [] }
}
