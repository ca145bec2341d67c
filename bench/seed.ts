// The bench dataset: companies, people, spaces, goals and projects with their
// milestones, contributors, subscribers, check-ins and key resources, inserted with
// set-based INSERT ... SELECT over generate_series so it takes seconds on PostgreSQL
// and on PGlite alike. Row ids are md5 of a name and an ordinal, so every
// relationship is plain arithmetic and no row has to be read back to link another.
import { CompiledQuery, type Transaction } from 'kysely'
import type { Db } from '../src/db/index.js'
import type { Database } from '../src/db/types.js'
import { createToken, tokenDigest } from '../src/db/tokens.js'
import { shortId } from '../src/ids.js'
import { DESCRIPTION_TEMPLATE, REVISION_MARKER, type Target } from './operations.js'

export interface DatasetSize {
  companies: number
  spacesPerCompany: number
  peoplePerCompany: number
  /** Normal projects, spread evenly over the companies and their spaces. */
  projects: number
  milestones: number
  /** Per project, one of them the champion and one the reviewer. */
  contributors: number
  subscribers: number
  checkIns: number
  keyResources: number
  largeProjects: number
  largeMilestones: number
  largeContributors: number
}

export const DEFAULT_SIZE: DatasetSize = {
  companies: 10,
  spacesPerCompany: 5,
  peoplePerCompany: 200,
  projects: 1000,
  milestones: 10,
  contributors: 8,
  subscribers: 20,
  checkIns: 3,
  keyResources: 3,
  largeProjects: 5,
  largeMilestones: 200,
  largeContributors: 100
}

export interface Dataset {
  normal: Target[]
  large: Target[]
  /** Rows per table after seeding. */
  rows: Record<string, number>
  seconds: number
}

function check (size: DatasetSize): void {
  const most = Math.max(size.contributors, size.largeContributors, size.subscribers * 3)
  if (size.peoplePerCompany < most) {
    throw new RangeError(`peoplePerCompany (${size.peoplePerCompany}) must be at least ${most}: ` +
      'contributors and subscribers of one project are distinct people of its company')
  }
  if (size.contributors < 2 || size.largeContributors < 2) throw new RangeError('a project needs at least a champion and a reviewer')
}

/** The statements, in order; `$1` is the description template wherever it appears. */
function statements (size: DatasetSize): string[] {
  const { companies: C, spacesPerCompany: S, peoplePerCompany: P, projects: N, largeProjects: L } = size
  const company = (c: string) => `md5('bench-company-' || ${c})::uuid`
  const person = (c: string, k: string) => `md5('bench-person-' || ((${c} - 1) * ${P} + ${k}))::uuid`
  const space = (c: string, s: string) => `md5('bench-space-' || ((${c} - 1) * ${S} + ${s}))::uuid`
  return [
    `INSERT INTO companies (id, name)
     SELECT ${company('c')}, 'Company ' || c FROM generate_series(1, ${C}) c`,

    // Person k of a company; the last one is its admin.
    `INSERT INTO people (id, company_id, full_name, email, title, is_admin, inserted_at)
     SELECT ${person('c', 'k')}, ${company('c')},
       (ARRAY['Alex','Blair','Casey','Devon','Emery','Finley','Harper','Jordan','Morgan','Quinn'])[1 + k % 10] || ' ' ||
       (ARRAY['Adams','Brooks','Chen','Diaz','Evans','Fischer','Garcia','Hughes','Ito','Jones','Khan','Lopez','Moreau','Novak','Okafor','Patel','Rossi','Silva','Tanaka','Weber'])[1 + (k / 10) % 20] ||
       ' ' || k,
       'person' || k || '@company' || c || '.test',
       (ARRAY['Engineer','Designer','Product Manager','Analyst','Engineering Manager','Writer'])[1 + k % 6],
       k = ${P},
       now() - interval '400 days'
     FROM generate_series(1, ${C}) c, generate_series(1, ${P}) k`,

    `INSERT INTO spaces (id, company_id, name)
     SELECT ${space('c', 's')}, ${company('c')}, 'Space ' || s
     FROM generate_series(1, ${C}) c, generate_series(1, ${S}) s`,

    // Every person is a member of one space of their company.
    `INSERT INTO space_members (space_id, person_id)
     SELECT ${space('c', `(k % ${S} + 1)`)}, ${person('c', 'k')}
     FROM generate_series(1, ${C}) c, generate_series(1, ${P}) k`,

    `INSERT INTO goals (id, company_id, space_id, name, status,
       timeframe_start_type, timeframe_start_value, timeframe_start_date,
       timeframe_end_type, timeframe_end_value, timeframe_end_date)
     SELECT md5('bench-goal-' || ((c - 1) * ${S} + s))::uuid, ${company('c')}, ${space('c', 's')},
       'Goal of space ' || s, 'on_track',
       'quarter', 'Q1 2027', DATE '2027-01-01', 'quarter', 'Q2 2027', DATE '2027-06-30'
     FROM generate_series(1, ${C}) c, generate_series(1, ${S}) s`,

    // One row per project: its company c, its position j in the company (which
    // picks its space and, through base, its people) and how big it is.
    `CREATE TEMPORARY TABLE bench_seed ON COMMIT DROP AS
     SELECT i, c, j, 2 * j % ${P} AS base, md5('bench-project-' || i)::uuid AS id,
       ${company('c')} AS company_id, ${space('c', `(j % ${S} + 1)`)} AS space_id,
       md5('bench-goal-' || ((c - 1) * ${S} + j % ${S} + 1))::uuid AS goal_id,
       mc, kc, large
     FROM (
       SELECT i,
         CASE WHEN i <= ${N} THEN (i - 1) % ${C} + 1 ELSE (i - ${N} - 1) % ${C} + 1 END AS c,
         CASE WHEN i <= ${N} THEN (i - 1) / ${C} ELSE ${Math.ceil(N / C)} + (i - ${N} - 1) / ${C} END AS j,
         CASE WHEN i <= ${N} THEN ${size.milestones} ELSE ${size.largeMilestones} END AS mc,
         CASE WHEN i <= ${N} THEN ${size.contributors} ELSE ${size.largeContributors} END AS kc,
         i > ${N} AS large
       FROM generate_series(1, ${N + L}) i
     ) x`,

    `INSERT INTO projects (id, company_id, space_id, goal_id, name, description,
       public_access, company_access, space_access, state, next_check_in_scheduled_at,
       milestones_ordering_state, tasks_kanban_state,
       timeframe_start_type, timeframe_start_value, timeframe_start_date,
       timeframe_end_type, timeframe_end_value, timeframe_end_date, inserted_at, updated_at)
     SELECT x.id, x.company_id, x.space_id, CASE WHEN x.i % 2 = 0 THEN x.goal_id END,
       CASE WHEN x.large THEN 'Large project ' ELSE 'Project ' END || x.i,
       replace($1, '${REVISION_MARKER}', x.i::text),
       CASE WHEN x.i % 10 = 0 THEN 10 ELSE 0 END, 40, 70,
       CASE WHEN x.i % 25 = 0 THEN 'paused' ELSE 'active' END,
       now() + (x.i % 14 - 2) * interval '1 day',
       ARRAY(SELECT md5('bench-milestone-' || x.i || '-' || m)::uuid FROM generate_series(1, x.mc) m ORDER BY m),
       '{"pending":[],"in_progress":[],"done":[],"canceled":[]}',
       'quarter', 'Q1 2027', DATE '2027-01-01', 'quarter', 'Q2 2027', DATE '2027-06-30',
       now() - interval '90 days', now() - interval '1 day'
     FROM bench_seed x`,

    `INSERT INTO project_milestones (id, project_id, title, status, description, due_date, completed_at, inserted_at)
     SELECT md5('bench-milestone-' || x.i || '-' || m)::uuid, x.id, 'Milestone ' || m,
       CASE WHEN 3 * m <= x.mc THEN 'done' ELSE 'pending' END,
       '{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Deliverable ' || m || ' of the project, reviewed with the stakeholders."}]}]}',
       current_date + (7 * m - 21),
       CASE WHEN 3 * m <= x.mc THEN now() - (x.mc - m) * interval '1 day' END,
       now() - interval '90 days'
     FROM bench_seed x, generate_series(1, x.mc) m`,

    `INSERT INTO project_contributors (project_id, person_id, role, responsibility, access_level)
     SELECT x.id, ${person('x.c', `((x.base + r) % ${P} + 1)`)},
       CASE r WHEN 0 THEN 'champion' WHEN 1 THEN 'reviewer' ELSE 'contributor' END,
       CASE WHEN r >= 2 THEN (ARRAY['Design','Back end','Front end','Quality','Documentation'])[1 + r % 5] END,
       CASE WHEN r >= 2 THEN CASE WHEN r % 2 = 0 THEN 70 ELSE 40 END END
     FROM bench_seed x, generate_series(0, x.kc - 1) r`,

    `INSERT INTO subscription_lists (id, project_id, send_to_everyone)
     SELECT md5('bench-list-' || x.i)::uuid, x.id, false FROM bench_seed x`,

    `INSERT INTO subscriptions (subscription_list_id, person_id, type, canceled)
     SELECT md5('bench-list-' || x.i)::uuid, ${person('x.c', `((x.base + 3 * r) % ${P} + 1)`)},
       (ARRAY['invited','joined','mentioned'])[1 + r % 3], r % 10 = 9
     FROM bench_seed x, generate_series(0, ${size.subscribers - 1}) r`,

    // Check-ins by the champion, weekly; all but the newest acknowledged by the reviewer.
    `INSERT INTO project_check_ins (project_id, author_id, status, description, acknowledged_at, acknowledged_by_id, inserted_at)
     SELECT x.id, ${person('x.c', `(x.base % ${P} + 1)`)},
       (ARRAY['on_track','caution','off_track'])[1 + (x.i + r) % 3],
       '{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Week ' || r || ': the team shipped what was planned and found two new risks."}]}]}',
       CASE WHEN r > 0 THEN now() - (7 * r - 1) * interval '1 day' END,
       CASE WHEN r > 0 THEN ${person('x.c', `((x.base + 1) % ${P} + 1)`)} END,
       now() - 7 * r * interval '1 day'
     FROM bench_seed x, generate_series(0, ${size.checkIns - 1}) r`,

    `INSERT INTO project_key_resources (project_id, title, link, resource_type, inserted_at)
     SELECT x.id, (ARRAY['Design document','Rollout plan','Dashboard','Repository','Runbook'])[1 + r % 5],
       'https://docs.example.test/projects/' || x.i || '/' || r, 'link', now() - (30 - r) * interval '1 day'
     FROM bench_seed x, generate_series(0, ${size.keyResources - 1}) r`,

    `INSERT INTO project_task_statuses (project_id, label, color, index, value, closed)
     SELECT x.id, t.label, t.color, t.index, t.value, t.closed
     FROM bench_seed x, (VALUES ('Not started', 'gray', 0, 'pending', false), ('In progress', 'blue', 1, 'in_progress', false),
       ('Done', 'green', 2, 'done', true), ('Canceled', 'red', 3, 'canceled', true)) t(label, color, index, value, closed)`,

    `INSERT INTO activities (id, company_id, project_id, author_id, action, content, inserted_at)
     SELECT md5('bench-activity-' || x.i)::uuid, x.company_id, x.id, ${person('x.c', `(x.base % ${P} + 1)`)},
       'project_created', jsonb_build_object('project_name', 'Project ' || x.i), now() - interval '90 days'
     FROM bench_seed x`,

    // Two unread notifications and, for a third of the projects, a pin: the
    // champion asks, so the person-specific parts of the object are not empty.
    `INSERT INTO notifications (person_id, project_id, activity_id, action, inserted_at)
     SELECT ${person('x.c', `(x.base % ${P} + 1)`)}, x.id, md5('bench-activity-' || x.i)::uuid,
       (ARRAY['project_check_in_submitted','project_milestone_commented'])[1 + r], now() - r * interval '1 day'
     FROM bench_seed x, generate_series(0, 1) r`,

    `INSERT INTO project_pins (person_id, project_id)
     SELECT ${person('x.c', `(x.base % ${P} + 1)`)}, x.id FROM bench_seed x WHERE x.i % 3 = 0`
  ]
}

interface ChampionRow {
  i: number
  project_id: string
  person_id: string
  email: string
  large: boolean
}

/**
 * Seeds the dataset into a freshly migrated database, issues a write token for
 * each project's champion and returns the targets: the normal projects first,
 * then the large ones.
 */
export async function seedDataset (db: Db, size: DatasetSize, options: { tokenConcurrency: number }): Promise<Dataset> {
  check(size)
  const started = performance.now()
  const champions = await db.transaction().execute(async (trx: Transaction<Database>) => {
    for (const text of statements(size)) {
      await trx.executeQuery(CompiledQuery.raw(text, text.includes('$1') ? [DESCRIPTION_TEMPLATE] : []))
    }
    const result = await trx.executeQuery<ChampionRow>(CompiledQuery.raw(
      `SELECT x.i, x.id::text AS project_id, pc.person_id::text AS person_id, pe.email, x.large
       FROM bench_seed x
       JOIN project_contributors pc ON pc.project_id = x.id AND pc.role = 'champion'
       JOIN people pe ON pe.id = pc.person_id
       ORDER BY x.i`))
    return result.rows
  })
  await db.executeQuery(CompiledQuery.raw('ANALYZE'))

  // Tokens through the service's own function, so they are stored exactly as it
  // stores them; a few at a time where the pool allows it.
  const targets: Array<Target & { large: boolean }> = new Array(champions.length)
  let next = 0
  const worker = async () => {
    while (next < champions.length) {
      const index = next++
      const row = champions[index]!
      const issued = await createToken(db, { email: row.email, name: 'bench' })
      targets[index] = {
        n: 0,
        projectId: row.project_id,
        publicId: shortId(row.project_id),
        personId: row.person_id,
        tokenId: issued.id,
        token: issued.token,
        digest: tokenDigest(issued.token),
        large: row.large
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, options.tokenConcurrency) }, worker))

  const strip = ({ large: _large, ...target }: Target & { large: boolean }, n: number): Target => ({ ...target, n: n + 1 })
  const normal = targets.filter((t) => !t.large).map(strip)
  const large = targets.filter((t) => t.large).map(strip)

  const rows: Record<string, number> = {}
  for (const table of ['companies', 'people', 'spaces', 'projects', 'project_milestones', 'project_contributors',
    'subscriptions', 'project_check_ins', 'project_key_resources', 'api_tokens']) {
    const result = await db.executeQuery<{ count: string | number }>(CompiledQuery.raw(`SELECT count(*) AS count FROM ${table}`))
    rows[table] = Number(result.rows[0]!.count)
  }
  return { normal, large, rows, seconds: (performance.now() - started) / 1000 }
}

/**
 * The helper tables pgbench draws its per-transaction values from: one row per
 * normal target, numbered 1..N, and the description template.
 */
export async function writeBenchTargets (db: Db, targets: readonly Target[]): Promise<void> {
  await db.executeQuery(CompiledQuery.raw('DROP TABLE IF EXISTS bench_targets, bench_texts'))
  await db.executeQuery(CompiledQuery.raw(
    `CREATE TABLE bench_targets (
       n int PRIMARY KEY, project_id uuid NOT NULL, public_id text NOT NULL,
       person_id uuid NOT NULL, token_id uuid NOT NULL, digest bytea NOT NULL)`))
  await db.executeQuery(CompiledQuery.raw('CREATE TABLE bench_texts (description text NOT NULL)'))
  await db.executeQuery(CompiledQuery.raw('INSERT INTO bench_texts (description) VALUES ($1)', [DESCRIPTION_TEMPLATE]))
  for (let start = 0; start < targets.length; start += 1000) {
    const batch = targets.slice(start, start + 1000)
    const params: unknown[] = []
    const values = batch.map((t) => {
      params.push(t.n, t.projectId, t.publicId, t.personId, t.tokenId, t.digest)
      const b = params.length - 6
      return `($${b + 1}::int, $${b + 2}::uuid, $${b + 3}, $${b + 4}::uuid, $${b + 5}::uuid, $${b + 6}::bytea)`
    })
    await db.executeQuery(CompiledQuery.raw(
      `INSERT INTO bench_targets (n, project_id, public_id, person_id, token_id, digest) VALUES ${values.join(', ')}`, params))
  }
  await db.executeQuery(CompiledQuery.raw('ANALYZE bench_targets, bench_texts'))
}
