// A project's aggregate (src/db/project-aggregate.ts) is mostly its children: the
// space's name, contributors, goal, key resources, last check-in, milestones and
// their order, subscription list, retrospective and task statuses, built as JSON by
// a dozen subqueries. Every read and every change built them again, although they
// change far less often than they are read: a rename or a description change
// leaves them all as they were. Built, they are kept in `project_children`, one row
// per project, as JSON text (json, not jsonb: the text is kept as it was written,
// so the aggregate, and the entity tag digested from it, come out byte for byte as
// when they were built in the statement).
//
// Triggers keep the row current within the transaction of every change of what it
// is built from: the child tables, the people they name, the goal, the space, and
// the project's own space, goal and order of milestones. What only the person who
// reads it decides (pinned, their role, their notifications) is still read by each
// statement, as are the project's own columns.
//
// A refresh locks the project's row first, then builds it in a statement of its
// own: under READ COMMITTED that statement sees every change committed before the
// lock was granted, so two transactions changing one project's children at once
// cannot leave a row built without the other's change (under REPEATABLE READ the
// second fails to serialize instead). Timestamps are written in UTC whatever the
// session's time zone, so the text does not depend on who changed what. The refresh
// runs with its owner's rights: the service's role only reads the kept rows.
import { sql, type Kysely } from 'kysely'

/** A person as the aggregate nests them, from the row of people aliased `alias`. */
const person = (alias: string) => `(SELECT to_json(obj) FROM (SELECT ${alias}.id, ${alias}.full_name, ${alias}.email, ${alias}.title, ${alias}.avatar_url, ${alias}.type) AS obj)`

/** The person whose id is `id`, as the aggregate nests them, or NULL. */
const personById = (id: string) => `(SELECT ${person('pe')} FROM people pe WHERE pe.id = ${id})`

const CHILDREN = `
  SELECT p.id AS project_id,
    (SELECT s.name FROM spaces s WHERE s.id = p.space_id) AS space_name,
    (SELECT coalesce(json_agg(agg), '[]') FROM (
      SELECT c.id, c.role, c.responsibility,
        CASE WHEN c.role = 'contributor' THEN c.access_level ELSE 100 END AS access_level,
        ${person('cp')} AS person,
        EXISTS (SELECT 1 FROM subscription_lists sl JOIN subscriptions sub ON sub.subscription_list_id = sl.id
          WHERE sl.project_id = p.id AND sub.person_id = c.person_id AND sub.canceled = false) AS is_subscribed
      FROM project_contributors c JOIN people cp ON cp.id = c.person_id
      WHERE c.project_id = p.id AND cp.suspended_at IS NULL
      ORDER BY CASE c.role WHEN 'champion' THEN 0 WHEN 'reviewer' THEN 1 ELSE 2 END, cp.full_name, c.id) AS agg) AS contributors,
    (SELECT to_json(obj) FROM (
      SELECT g.id, g.name, g.status, g.closed_at, g.archived_at, g.inserted_at, g.updated_at,
        g.timeframe_start_type, g.timeframe_start_value, g.timeframe_start_date::text AS timeframe_start_date,
        g.timeframe_end_type, g.timeframe_end_value, g.timeframe_end_date::text AS timeframe_end_date
      FROM goals g WHERE g.id = p.goal_id) AS obj) AS goal,
    (SELECT coalesce(json_agg(agg), '[]') FROM (
      SELECT kr.id, kr.title, kr.link, kr.resource_type FROM project_key_resources kr
      WHERE kr.project_id = p.id ORDER BY kr.inserted_at, kr.id) AS agg) AS key_resources,
    (SELECT to_json(obj) FROM (
      SELECT ci.id, ci.status, ci.description, ci.inserted_at, ci.acknowledged_at,
        ${personById('ci.author_id')} AS author, ${personById('ci.acknowledged_by_id')} AS acknowledged_by
      FROM project_check_ins ci WHERE ci.project_id = p.id
      ORDER BY ci.inserted_at DESC, ci.id DESC LIMIT 1) AS obj) AS last_check_in,
    (SELECT coalesce(json_agg(agg), '[]') FROM (
      SELECT m.id, m.title, m.status, m.description, m.due_date::text AS due_date, m.completed_at, m.inserted_at
      FROM project_milestones m WHERE m.project_id = p.id
      ORDER BY array_position(p.milestones_ordering_state, m.id) NULLS LAST, m.due_date NULLS LAST, m.inserted_at, m.id) AS agg) AS milestones,
    to_json(ARRAY(
      SELECT o.id FROM unnest(p.milestones_ordering_state) WITH ORDINALITY AS o(id, n)
      WHERE EXISTS (SELECT 1 FROM project_milestones m WHERE m.id = o.id AND m.project_id = p.id)
      ORDER BY o.n)) AS milestones_ordering_state,
    (SELECT to_json(obj) FROM (
      SELECT sl.id, sl.send_to_everyone,
        (SELECT coalesce(json_agg(agg), '[]') FROM (
          SELECT sub.id, sub.type, sub.canceled, ${personById('sub.person_id')} AS person
          FROM subscriptions sub WHERE sub.subscription_list_id = sl.id
          ORDER BY sub.inserted_at, sub.id) AS agg) AS subscriptions
      FROM subscription_lists sl WHERE sl.project_id = p.id) AS obj) AS subscription_list,
    (SELECT to_json(obj) FROM (
      SELECT r.id, r.content, r.closed_at, r.success_status, ${personById('r.author_id')} AS author
      FROM project_retrospectives r WHERE r.project_id = p.id) AS obj) AS retrospective,
    (SELECT coalesce(json_agg(agg), '[]') FROM (
      SELECT ts.id, ts.label, ts.color, ts.index, ts.value, ts.closed FROM project_task_statuses ts
      WHERE ts.project_id = p.id ORDER BY ts.index, ts.id) AS agg) AS task_statuses
  FROM projects p WHERE p.id = ANY(ids)`

/** The tables whose rows name their project in `project_id`. */
const BY_PROJECT = ['project_contributors', 'project_milestones', 'project_key_resources', 'project_check_ins',
  'project_retrospectives', 'project_task_statuses']

/**
 * The tables a TRUNCATE may empty while projects stay (the others are named by
 * projects' foreign keys: emptying them empties projects and project_children too).
 */
const TRUNCATED = [...BY_PROJECT, 'subscription_lists', 'subscriptions']

/**
 * Statement-level triggers of `table` (insert, update and delete, each with its
 * transition tables) calling `fn`: one refresh per statement, however many rows.
 */
async function statementTriggers (db: Kysely<any>, table: string, fn: string, events: Array<'insert' | 'update' | 'delete'>): Promise<void> {
  const transitions = { insert: 'NEW TABLE AS new_rows', update: 'OLD TABLE AS old_rows NEW TABLE AS new_rows', delete: 'OLD TABLE AS old_rows' }
  for (const event of events) {
    await sql.raw(`CREATE TRIGGER ${table}_children_${event} AFTER ${event.toUpperCase()} ON ${table}
      REFERENCING ${transitions[event]} FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`).execute(db)
  }
}

/**
 * The trigger function `name`: `assign` (plpgsql) sets `ids` to the projects
 * whose children the change may have changed, which are refreshed, if any.
 */
async function refreshingTrigger (db: Kysely<any>, name: string, assign: string): Promise<void> {
  await sql.raw(`CREATE FUNCTION ${name} () RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE ids uuid[];
    BEGIN${assign}
      -- Most statements change nothing a project shows: no call then.
      IF cardinality(ids) > 0 THEN PERFORM refresh_project_children(ids); END IF;
      RETURN NULL;
    END $$`).execute(db)
}

export async function up (db: Kysely<any>): Promise<void> {
  await sql`CREATE TABLE project_children (
    project_id uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    space_name text NOT NULL,
    contributors json NOT NULL,
    goal json,
    key_resources json NOT NULL,
    last_check_in json,
    milestones json NOT NULL,
    milestones_ordering_state json NOT NULL,
    subscription_list json,
    retrospective json,
    task_statuses json NOT NULL
  )`.execute(db)

  // The children of the projects `ids` as they are now. Plain SQL, so a caller's
  // query can inline it (and EXPLAIN show how it reads).
  await sql.raw(`CREATE FUNCTION project_children_of (ids uuid[]) RETURNS SETOF project_children
    LANGUAGE sql STABLE AS $$ ${CHILDREN} $$`).execute(db)

  // Run as the owner of the tables (SECURITY DEFINER, with this schema as its only
  // search path): the service's role reads project_children and writes none of it.
  const { rows: [current] } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)
  const schema = current!.schema
  await sql`CREATE FUNCTION refresh_project_children (ids uuid[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = ${sql.raw(`"${schema.replaceAll('"', '""')}"`)}, pg_temp SET TimeZone = 'UTC' AS $$
    BEGIN
      IF ids IS NULL OR cardinality(ids) = 0 THEN RETURN; END IF;
      PERFORM 1 FROM project_children WHERE project_id = ANY(ids) ORDER BY project_id FOR UPDATE;
      INSERT INTO project_children SELECT * FROM project_children_of(ids)
      ON CONFLICT (project_id) DO UPDATE SET
        space_name = excluded.space_name, contributors = excluded.contributors, goal = excluded.goal,
        key_resources = excluded.key_resources, last_check_in = excluded.last_check_in,
        milestones = excluded.milestones, milestones_ordering_state = excluded.milestones_ordering_state,
        subscription_list = excluded.subscription_list, retrospective = excluded.retrospective,
        task_statuses = excluded.task_statuses;
    END $$`.execute(db)

  // Rows naming their project.
  await refreshingTrigger(db, 'project_children_by_project', `
      IF TG_OP = 'INSERT' THEN
        ids := ARRAY(SELECT DISTINCT project_id FROM new_rows);
      ELSIF TG_OP = 'UPDATE' THEN
        ids := ARRAY(SELECT project_id FROM new_rows UNION SELECT project_id FROM old_rows);
      ELSE
        ids := ARRAY(SELECT DISTINCT project_id FROM old_rows);
      END IF;`)
  for (const table of BY_PROJECT) await statementTriggers(db, table, 'project_children_by_project', ['insert', 'update', 'delete'])
  await statementTriggers(db, 'subscription_lists', 'project_children_by_project', ['insert', 'delete'])

  // Subscriptions, through their list.
  await refreshingTrigger(db, 'project_children_by_subscription', `
      IF TG_OP = 'INSERT' THEN
        ids := ARRAY(SELECT DISTINCT sl.project_id FROM new_rows n JOIN subscription_lists sl ON sl.id = n.subscription_list_id);
      ELSE
        ids := ARRAY(SELECT DISTINCT sl.project_id FROM old_rows o JOIN subscription_lists sl ON sl.id = o.subscription_list_id);
      END IF;`)
  await statementTriggers(db, 'subscriptions', 'project_children_by_subscription', ['insert', 'delete'])

  // Subscription lists and subscriptions changed in place, row by row: a description
  // change writes both tables with INSERT … ON CONFLICT DO UPDATE, whose UPDATE
  // triggers a statement-level trigger would run on every change of a description;
  // row-level ones run only for a row that changed (which such an upsert almost
  // never has: it sets a row to what it was). A script changing many rows of one
  // list refreshes its project once per row.
  await refreshingTrigger(db, 'project_children_of_list_row', `
      ids := ARRAY(SELECT DISTINCT id FROM unnest(ARRAY[OLD.project_id, NEW.project_id]) AS id);`)
  await refreshingTrigger(db, 'project_children_of_subscription_row', `
      ids := ARRAY(SELECT DISTINCT sl.project_id FROM subscription_lists sl
        WHERE sl.id IN (OLD.subscription_list_id, NEW.subscription_list_id));`)
  for (const [table, fn] of [['subscription_lists', 'project_children_of_list_row'], ['subscriptions', 'project_children_of_subscription_row']]) {
    await sql.raw(`CREATE TRIGGER ${table}_children_update AFTER UPDATE ON ${table}
      FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION ${fn}()`).execute(db)
  }

  // A person as a project shows them (name, email, title, avatar, type), or whether
  // they are suspended (a suspended contributor is left out): every project naming
  // them. Deleting a person deletes or fails on the rows that name them.
  await refreshingTrigger(db, 'project_children_by_person', `
      ids := ARRAY(
        WITH changed AS (
          SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
          WHERE (n.full_name, n.email, n.title, n.avatar_url, n.type, n.suspended_at IS NULL)
            IS DISTINCT FROM (o.full_name, o.email, o.title, o.avatar_url, o.type, o.suspended_at IS NULL))
        SELECT c.project_id FROM project_contributors c WHERE c.person_id IN (SELECT id FROM changed)
        UNION SELECT sl.project_id FROM subscriptions s JOIN subscription_lists sl ON sl.id = s.subscription_list_id
          WHERE s.person_id IN (SELECT id FROM changed)
        UNION SELECT ci.project_id FROM project_check_ins ci
          WHERE ci.author_id IN (SELECT id FROM changed) OR ci.acknowledged_by_id IN (SELECT id FROM changed)
        UNION SELECT r.project_id FROM project_retrospectives r WHERE r.author_id IN (SELECT id FROM changed));`)
  await statementTriggers(db, 'people', 'project_children_by_person', ['update'])

  // A goal as its projects show it.
  await refreshingTrigger(db, 'project_children_by_goal', `
      ids := ARRAY(SELECT p.id FROM projects p WHERE p.goal_id IN (SELECT id FROM new_rows));`)
  await statementTriggers(db, 'goals', 'project_children_by_goal', ['update'])

  // A space's name.
  await refreshingTrigger(db, 'project_children_by_space', `
      ids := ARRAY(SELECT p.id FROM projects p WHERE p.space_id IN (
        SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.name IS DISTINCT FROM o.name));`)
  await statementTriggers(db, 'spaces', 'project_children_by_space', ['update'])

  // A new project, and a project's own columns that its children hang on. A rename
  // or a description change sets none of these: no trigger fires for them.
  await refreshingTrigger(db, 'project_children_of_new_projects', `
      ids := ARRAY(SELECT id FROM new_rows);`)
  await statementTriggers(db, 'projects', 'project_children_of_new_projects', ['insert'])
  await refreshingTrigger(db, 'project_children_of_project', `
      ids := ARRAY[NEW.id];`)
  await sql`CREATE TRIGGER projects_children_update AFTER UPDATE OF space_id, goal_id, milestones_ordering_state ON projects
    FOR EACH ROW WHEN (OLD.space_id IS DISTINCT FROM NEW.space_id OR OLD.goal_id IS DISTINCT FROM NEW.goal_id
      OR OLD.milestones_ordering_state IS DISTINCT FROM NEW.milestones_ordering_state)
    EXECUTE FUNCTION project_children_of_project()`.execute(db)

  // A child table emptied with TRUNCATE, which row and statement triggers of
  // INSERT, UPDATE and DELETE do not see: every project is built again.
  await refreshingTrigger(db, 'project_children_after_truncate', `
      ids := ARRAY(SELECT id FROM projects);`)
  for (const table of TRUNCATED) {
    await sql.raw(`CREATE TRIGGER ${table}_children_truncate AFTER TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION project_children_after_truncate()`).execute(db)
  }

  await sql`SELECT refresh_project_children(ARRAY(SELECT id FROM projects))`.execute(db)
}

export async function down (db: Kysely<any>): Promise<void> {
  for (const table of [...BY_PROJECT, 'subscription_lists', 'subscriptions']) {
    for (const event of ['insert', 'update', 'delete']) await sql.raw(`DROP TRIGGER ${table}_children_${event} ON ${table}`).execute(db)
  }
  for (const table of ['people', 'goals', 'spaces']) await sql.raw(`DROP TRIGGER ${table}_children_update ON ${table}`).execute(db)
  for (const table of TRUNCATED) await sql.raw(`DROP TRIGGER ${table}_children_truncate ON ${table}`).execute(db)
  await sql`DROP TRIGGER projects_children_insert ON projects`.execute(db)
  await sql`DROP TRIGGER projects_children_update ON projects`.execute(db)
  for (const fn of ['project_children_by_project', 'project_children_by_subscription', 'project_children_of_list_row', 'project_children_of_subscription_row', 'project_children_by_person',
    'project_children_by_goal', 'project_children_by_space', 'project_children_of_new_projects', 'project_children_of_project',
    'project_children_after_truncate']) {
    await sql.raw(`DROP FUNCTION ${fn}()`).execute(db)
  }
  await sql`DROP FUNCTION refresh_project_children(uuid[])`.execute(db)
  await sql`DROP FUNCTION project_children_of(uuid[])`.execute(db)
  await sql`DROP TABLE project_children`.execute(db)
}
