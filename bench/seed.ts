// The bench dataset: companies, people, spaces, goals and projects with their
// milestones, contributors, subscribers, check-ins and key resources, the projects
// whose descriptions mention people, and readers with a full inbox, inserted with
// set-based INSERT ... SELECT over generate_series so it takes seconds. Row ids are
// md5 of a name and an ordinal, so every relationship is plain arithmetic and no row
// has to be read back to link another. Only tables every version of the schema since
// the first shares are written, with plain SQL: the same seed fills the database of
// the current tree and of an older one (bench/run.ts --against), each migrated by
// its own tree; whatever an older schema derives from these rows (its triggers) it
// derives as it would in service.
import { randomBytes } from 'node:crypto'
import { CompiledQuery, type Transaction } from 'kysely'
import { loadConfig } from '../src/config.js'
import { createDb, dbOptions, type Db } from '../src/db/index.js'
import type { Database } from '../src/db/types.js'
import { TOKEN_PREFIX, TOKEN_SECRET_BYTES } from '../src/token-format.js'
import { tokenDigest } from '../src/auth/tokens.js'
import { shortId } from '../src/ids.js'
import { DESCRIPTION_TEMPLATE, REVISION_MARKER, type Mention, type Target, type TargetSet } from './operations.js'

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
  /**
   * Normal-sized projects with a long subscription list, whose new descriptions
   * mention people (see mentionOrdinals): update_description with notifications.
   */
  notifiedProjects: number
  notifiedSubscribers: number
  /** People each new description of a notified project mentions. */
  mentions: number
  /** People spread over the companies, on no project and no subscription list, each with an inbox of this many notifications. */
  readers: number
  readerNotifications: number
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
  largeContributors: 100,
  notifiedProjects: 200,
  notifiedSubscribers: 100,
  mentions: 20,
  readers: 50,
  readerNotifications: 300
}

/** The targets by set (the large projects are data only: no run targets them). */
export interface Dataset extends Record<TargetSet, Target[]> {
  /** Rows per table after seeding. */
  rows: Record<string, number>
  seconds: number
}

/**
 * Whom a notified project's new descriptions mention, as ordinals r of its people
 * (person base + r of the company; its subscribers are r = 1..notifiedSubscribers,
 * every tenth of them a `mentioned` one, r = 5, 15, ...). A quarter are `mentioned`
 * subscribers (r = 5, 25, ...), a quarter other subscribers (r = 10, 30, ...), half
 * people not on the list yet, in turn. The set is the same for every change: the
 * first change of a project subscribes the newcomers as `mentioned`, and each one
 * notifies the same people, about a hundred (the subscribers who did not cancel,
 * less the `mentioned` ones left out of the mentions, plus the newcomers), so the
 * row measures one steady cost rather than a list that grows with the run.
 */
export function mentionOrdinals (size: DatasetSize): number[] {
  const ordinals: number[] = []
  for (let q = 0; q < size.mentions / 4; q++) {
    ordinals.push(5 + 20 * q, 10 + 20 * q, size.notifiedSubscribers + 1 + 2 * q, size.notifiedSubscribers + 2 + 2 * q)
  }
  return ordinals
}

function check (size: DatasetSize): void {
  const most = Math.max(size.contributors, size.largeContributors, size.subscribers * 3, size.notifiedSubscribers + size.mentions / 2 + 1)
  if (size.peoplePerCompany < most) {
    throw new RangeError(`peoplePerCompany (${size.peoplePerCompany}) must be at least ${most}: ` +
      'contributors, subscribers and the people mentioned of one project are distinct people of its company')
  }
  if (size.contributors < 2 || size.largeContributors < 2) throw new RangeError('a project needs at least a champion and a reviewer')
  if (size.mentions % 4 !== 0 || size.notifiedSubscribers < 5 * size.mentions) {
    throw new RangeError('mentions must be a multiple of 4 and notifiedSubscribers at least 5 times mentions (see mentionOrdinals)')
  }
  if (size.projects < size.companies) throw new RangeError('each company needs a normal project for its readers\' notifications')
}

/** The statements, in order; `$1` is the description template wherever it appears. */
function statements (size: DatasetSize): string[] {
  const { companies: C, spacesPerCompany: S, peoplePerCompany: P, projects: N, largeProjects: L, notifiedProjects: K, readers: R } = size
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

    // Readers: on no project and no subscription list, so nothing during the run
    // notifies them.
    `INSERT INTO people (id, company_id, full_name, email, title, is_admin, inserted_at)
     SELECT md5('bench-reader-' || q)::uuid, ${company(`((q - 1) % ${C} + 1)`)}, 'Riley Reader ' || q,
       'reader' || q || '@company' || ((q - 1) % ${C} + 1) || '.test', 'Operations Lead', false, now() - interval '400 days'
     FROM generate_series(1, ${R}) q`,

    `INSERT INTO space_members (space_id, person_id)
     SELECT ${space(`((q - 1) % ${C} + 1)`, `(q % ${S} + 1)`)}, md5('bench-reader-' || q)::uuid
     FROM generate_series(1, ${R}) q`,

    // One row per project: its kind, its company c, its position j in the company
    // (which picks its space and, through base, its people) and how big it is.
    // Normal projects come first (i = 1..N), then the large, then the notified ones.
    `CREATE TEMPORARY TABLE bench_seed ON COMMIT DROP AS
     SELECT i, kind, c, j, 2 * j % ${P} AS base, md5('bench-project-' || i)::uuid AS id,
       ${company('c')} AS company_id, ${space('c', `(j % ${S} + 1)`)} AS space_id,
       md5('bench-goal-' || ((c - 1) * ${S} + j % ${S} + 1))::uuid AS goal_id,
       mc, kc, kind = 'large' AS large
     FROM (
       SELECT i, kind, (o - 1) % ${C} + 1 AS c,
         CASE kind WHEN 'normal' THEN 0 WHEN 'large' THEN ${Math.ceil(N / C)} ELSE ${Math.ceil(N / C) + Math.ceil(L / C)} END + (o - 1) / ${C} AS j,
         CASE kind WHEN 'large' THEN ${size.largeMilestones} ELSE ${size.milestones} END AS mc,
         CASE kind WHEN 'large' THEN ${size.largeContributors} ELSE ${size.contributors} END AS kc
       FROM (
         SELECT i,
           CASE WHEN i <= ${N} THEN 'normal' WHEN i <= ${N + L} THEN 'large' ELSE 'notified' END AS kind,
           CASE WHEN i <= ${N} THEN i WHEN i <= ${N + L} THEN i - ${N} ELSE i - ${N + L} END AS o
         FROM generate_series(1, ${N + L + K}) i
       ) y
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
     FROM bench_seed x, generate_series(0, ${size.subscribers - 1}) r
     WHERE x.kind <> 'notified'`,

    // The notified projects' long lists: people base + 1.. of the company (the
    // champion, base + 0, is the author of the changes), every tenth a
    // \`mentioned\` subscriber and every twentieth canceled (see mentionOrdinals).
    `INSERT INTO subscriptions (subscription_list_id, person_id, type, canceled)
     SELECT md5('bench-list-' || x.i)::uuid, ${person('x.c', `((x.base + r) % ${P} + 1)`)},
       CASE WHEN r % 10 = 5 THEN 'mentioned' WHEN r % 2 = 0 THEN 'joined' ELSE 'invited' END, r % 20 = 7
     FROM bench_seed x, generate_series(1, ${size.notifiedSubscribers}) r
     WHERE x.kind = 'notified'`,

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
    `INSERT INTO notifications (person_id, project_id, activity_id, author_id, action, inserted_at)
     SELECT ${person('x.c', `(x.base % ${P} + 1)`)}, x.id, md5('bench-activity-' || x.i)::uuid, ${person('x.c', `(x.base % ${P} + 1)`)},
       (ARRAY['project_check_in_submitted','project_milestone_commented'])[1 + r], now() - r * interval '1 day'
     FROM bench_seed x, generate_series(0, 1) r`,

    `INSERT INTO project_pins (person_id, project_id)
     SELECT ${person('x.c', `(x.base % ${P} + 1)`)}, x.id FROM bench_seed x WHERE x.i % 3 = 0`,

    // Each reader's inbox: notifications about the normal projects of their company,
    // one every four hours going back, the newest 30 unread.
    `INSERT INTO notifications (person_id, project_id, activity_id, author_id, action, read, read_at, inserted_at)
     SELECT md5('bench-reader-' || q)::uuid, md5('bench-project-' || n.i)::uuid, md5('bench-activity-' || n.i)::uuid,
       (SELECT a.author_id FROM activities a WHERE a.id = md5('bench-activity-' || n.i)::uuid),
       (ARRAY['project_description_changed','project_check_in_submitted','project_milestone_commented'])[1 + t % 3],
       t >= 30, CASE WHEN t >= 30 THEN n.sent_at + interval '1 hour' END, n.sent_at
     FROM generate_series(1, ${R}) q, generate_series(0, ${size.readerNotifications - 1}) t,
       LATERAL (SELECT (q - 1) % ${C} + 1 + ${C} * ((q + t) % ${Math.floor(N / C)}) AS i,
         now() - t * interval '4 hours' - q * interval '1 minute' AS sent_at) n`
  ]
}

interface TargetRow {
  project_id: string
  person_id: string
  kind: TargetSet
  mentions: Mention[]
}

/** A token as the service issues them (src/auth/tokens.ts): stored only as its SHA-256 digest. */
function newToken (): string {
  return TOKEN_PREFIX + randomBytes(TOKEN_SECRET_BYTES).toString('base64url')
}

/**
 * Seeds the dataset into a freshly migrated database, inserts a write token for
 * each normal and notified project's champion and each reader, and returns the
 * targets by set.
 */
export async function seedDataset (db: Db, size: DatasetSize): Promise<Dataset> {
  check(size)
  const started = performance.now()
  const { peoplePerCompany: P, companies: C, projects: N } = size
  const rows = await db.transaction().execute(async (trx: Transaction<Database>) => {
    for (const text of statements(size)) {
      await trx.executeQuery(CompiledQuery.raw(text, text.includes('$1') ? [DESCRIPTION_TEMPLATE] : []))
    }
    const champions = await trx.executeQuery<TargetRow>(CompiledQuery.raw(
      `SELECT x.id::text AS project_id, pc.person_id::text AS person_id, x.kind,
         CASE WHEN x.kind = 'notified' THEN (
           SELECT json_agg(json_build_object('id', m.id, 'name', m.full_name) ORDER BY o.n)
           FROM unnest(ARRAY[${mentionOrdinals(size).join(', ')}]::int[]) WITH ORDINALITY AS o(r, n)
           JOIN people m ON m.id = md5('bench-person-' || ((x.c - 1) * ${P} + (x.base + o.r) % ${P} + 1))::uuid
         ) ELSE '[]'::json END AS mentions
       FROM bench_seed x
       JOIN project_contributors pc ON pc.project_id = x.id AND pc.role = 'champion'
       WHERE x.kind <> 'large'
       ORDER BY x.i`))
    // A reader's project is the one of their newest notification.
    const readers = await trx.executeQuery<TargetRow>(CompiledQuery.raw(
      `SELECT md5('bench-project-' || ((q - 1) % ${C} + 1 + ${C} * (q % ${Math.floor(N / C)})))::uuid::text AS project_id,
         md5('bench-reader-' || q)::uuid::text AS person_id, 'readers' AS kind, '[]'::json AS mentions
       FROM generate_series(1, ${size.readers}) q
       ORDER BY q`))
    const targets = [...champions.rows, ...readers.rows].map((row) => ({ ...row, token: newToken() }))
    await trx.executeQuery(CompiledQuery.raw(
      `INSERT INTO api_tokens (person_id, name, digest)
       SELECT person_id, 'bench', decode(digest, 'hex') FROM unnest($1::uuid[], $2::text[]) AS t(person_id, digest)`,
      [targets.map((t) => t.person_id), targets.map((t) => tokenDigest(t.token).toString('hex'))]))
    return targets
  })
  // The tables as a database in service has them, vacuumed (hint bits set, the
  // visibility map made) and analysed: otherwise the first runs pay for that work, or
  // autovacuum does it in the middle of the measured runs (where it runs at all).
  await db.executeQuery(CompiledQuery.raw('VACUUM (ANALYZE)'))

  const set = (kind: TargetSet): Target[] => rows.filter((row) => row.kind === kind).map((row, n) => ({
    n: n + 1,
    projectId: row.project_id,
    publicId: shortId(row.project_id),
    personId: row.person_id,
    token: row.token,
    mentions: row.mentions
  }))

  const counts: Record<string, number> = {}
  for (const table of ['companies', 'people', 'spaces', 'projects', 'project_milestones', 'project_contributors',
    'subscriptions', 'project_check_ins', 'project_key_resources', 'notifications', 'api_tokens']) {
    const result = await db.executeQuery<{ count: string | number }>(CompiledQuery.raw(`SELECT count(*) AS count FROM ${table}`))
    counts[table] = Number(result.rows[0]!.count)
  }
  return {
    normal: set('normal'),
    notified: set('notified'),
    readers: set('readers'),
    rows: counts,
    seconds: (performance.now() - started) / 1000
  }
}

/** Seeds the (migrated) database at `url` over a pool of its own, closed after; seeding runs statements longer than a request's. */
export async function seedAt (url: string, size: DatasetSize): Promise<Dataset> {
  const db = await createDb(dbOptions(loadConfig({ DATABASE_URL: url, DB_POOL_SIZE: '2', DB_STATEMENT_TIMEOUT_MS: '20000' })))
  try {
    return await seedDataset(db, size)
  } finally {
    await db.destroy()
  }
}
