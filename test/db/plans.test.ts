// How the database answers notifications/list: through an index of the person's
// notifications in their order, not by reading every notification of everyone,
// so a page costs the same however many notifications the others have received.
// And what a change without If-Match is planned with: not the tag's aggregate,
// which only a conditional change computes; a conditional change builds the
// aggregate's children once, for the tag and the answer alike. A description
// change looks up the people it notifies, not every person of the database, and
// reads its list's subscribers once to find whom it subscribes. A
// page of projects/list and projects/get read no more than their answer needs. The
// plans are those PostgreSQL (or PGlite) makes for the very statements and
// parameters the app sent.
import t from 'tap'
import { CompiledQuery, sql, type LogEvent } from 'kysely'
import { explainPrepared, withPrepared } from '../explain.js'
import { shortId } from '../../src/ids.js'
import { ifMatchTags } from '../../src/projects/conditional.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'

type Json = Record<string, unknown>

const sent: Array<{ sql: string, parameters: readonly unknown[] }> = []
const { app, db } = await build(t, {
  log: (event: LogEvent) => { sent.push({ sql: event.query.sql, parameters: event.query.parameters }) }
})
await app.ready()

/** Every node of a plan, depth first. */
function nodes (plan: Json): Json[] {
  const children = (plan.Plans ?? []) as Json[]
  return [plan, ...children.flatMap(nodes)]
}

t.test('a page of notifications/list reads the person\'s notifications through their index, their projects and authors by key', async (t) => {
  const company = await createCompany(db)
  const reader = await createPerson(db, company.id)
  const author = await createPerson(db, company.id)
  const others = await Promise.all(Array.from({ length: 50 }, () => createPerson(db, company.id)))
  const space = await createSpace(db, company.id)
  // 2,000 projects of the company, each with 5 activities: what a page must not read whole.
  await sql`
    WITH p AS (INSERT INTO projects (company_id, space_id, name, company_access, state)
      SELECT ${company.id}::uuid, ${space.id}::uuid, 'Noted ' || i, 10, 'active' FROM generate_series(1, 2000) i RETURNING id)
    INSERT INTO activities (company_id, project_id, author_id, action, content)
    SELECT ${company.id}::uuid, p.id, ${author.id}::uuid, 'project_renamed', '{}' FROM p, generate_series(1, 5)`.execute(db)
  // 300 of the reader's among 60,000 of the others, interleaved as they would
  // arrive, each about one of those activities.
  await sql`
    WITH a AS (SELECT id, project_id, row_number() OVER (ORDER BY id) AS k FROM activities WHERE author_id = ${author.id}::uuid)
    INSERT INTO notifications (person_id, project_id, activity_id, author_id, action, read, read_at, inserted_at)
    SELECT CASE WHEN i % 200 = 0 THEN ${reader.id}::uuid ELSE (${sql.val(others.map((o) => o.id))}::uuid[])[1 + i % 50] END,
      a.project_id, a.id, ${author.id}::uuid, 'project_description_changed', i % 3 = 0, CASE WHEN i % 3 = 0 THEN now() END, now() - i * interval '1 minute'
    FROM generate_series(1, 60000) i JOIN a ON a.k = 1 + i % 10000`.execute(db)
  for (const table of ['notifications', 'projects', 'activities', 'people']) await sql`ANALYZE ${sql.table(table)}`.execute(db)

  const { token } = await tokenFor(db, reader.email)
  sent.length = 0
  const res = await app.inject({ method: 'GET', url: '/api/external/v1/notifications/list', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().notifications.length, 100, 'a full page')
  const shown = res.json().notifications.filter((n: { project: { name: string } | null, author: { full_name: string } | null }) =>
    n.project?.name.startsWith('Noted ') && n.author?.full_name === author.full_name)
  t.equal(shown.length, 100, `each with its project and author: ${JSON.stringify(res.json().notifications[0])}`)
  const list = sent.find((s) => /from "notifications"/.test(s.sql) && /order by/.test(s.sql))
  if (list === undefined) throw new Error(`no list statement among ${sent.length}`)

  const plan = await planOf(list)
  const onNotifications = nodes(plan).filter((n) => n['Relation Name'] === 'notifications' || String(n['Index Name'] ?? '').startsWith('notifications'))
  t.notOk(onNotifications.some((n) => n['Node Type'] === 'Seq Scan'), 'the table is not read whole')
  t.ok(onNotifications.some((n) => n['Index Name'] === 'notifications_person_id_inserted_at_idx'),
    `the person's index is used: ${onNotifications.map((n) => `${String(n['Node Type'])} ${String(n['Index Name'] ?? '')}`).join(', ')}`)
  // Joined as tables, the plan kept for every person read all of projects and
  // activities into hash tables for each page.
  const whole = nodes(plan).filter((n) => n['Node Type'] === 'Seq Scan' && ['projects', 'activities', 'space_members', 'project_contributors'].includes(String(n['Relation Name'])))
  t.same(whole.map((n) => `${String(n['Relation Name'])} as ${String(n.Alias)}`), [], 'no table of projects, activities or access is read whole')
})

/**
 * The plan of a statement the app sent, as PostgreSQL makes it for those parameters:
 * nothing is run, or with `analyze` the statement runs and each node says how many
 * rows and loops it took.
 */
async function planOf (statement: { sql: string, parameters: readonly unknown[] }, analyze = false): Promise<Json> {
  const { rows: [row] } = await db.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`EXPLAIN (${analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${statement.sql}`, [...statement.parameters]))
  const raw = row!['QUERY PLAN']
  return ((typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: Json }>)[0]!.Plan
}

t.test('a change without If-Match is planned without the aggregate its tag would need', async (t) => {
  // PostgreSQL sets up every node of a plan on each execution, run or not: the
  // tag's aggregate in an unconditional change's plan would cost every change.
  const company = await createCompany(db)
  const editor = await createPerson(db, company.id)
  const space = await createSpace(db, company.id, [editor.id])
  const project = await createProject(db, space)
  await addContributor(db, project.id, editor.id, 'champion')
  const { token } = await tokenFor(db, editor.email)
  const headers = { authorization: `Bearer ${token}` }
  const read = await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: project.publicId }, headers })
  let etag = read.headers.etag as string
  const doc = (text: string) => JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] })

  for (const [operation, body] of [['update_name', (n: number) => ({ name: `Planned ${n}` })], ['update_description', (n: number) => ({ description: doc(`Planned ${n}`) })]] as const) {
    const plans: Record<string, { statement: string, plan: Json }> = {}
    for (const [n, condition] of [[1, {}], [2, { 'if-match': '*' }], [3, 'tag']] as const) {
      sent.length = 0
      const res = await app.inject({
        method: 'POST', url: `/api/external/v1/projects/${operation}`,
        headers: { ...headers, ...(condition === 'tag' ? { 'if-match': etag } : condition) },
        payload: { project_id: project.publicId, ...body(n) }
      })
      t.equal(res.statusCode, 200, `${operation} ${JSON.stringify(condition)}: ${res.body.slice(0, 200)}`)
      etag = res.headers.etag as string
      t.equal(sent.length, 1, 'one statement')
      plans[n] = { statement: sent[0]!.sql, plan: await planOf(sent[0]!) }
    }
    const [plain, star, tagged] = [plans[1]!, plans[2]!, plans[3]!]
    t.equal(star.statement, plain.statement, `${operation}: If-Match: * is no condition and runs the unconditional statement`)
    t.not(tagged.statement, plain.statement, `${operation}: a tag runs the conditional statement`)
    t.notMatch(plain.statement, /"before"/, `${operation}: the unconditional statement builds no aggregate of the row before the change`)
    t.match(tagged.statement, /"before"/, `${operation}: the conditional one does`)
    // The tag's aggregate of the row before the change and the answer's of the row
    // after it share their children: each child table is read where the
    // unconditional statement reads it, not a second time.
    const reads = (plan: Json, table: string) => nodes(plan).filter((n) => n['Relation Name'] === table).length
    for (const table of CHILD_TABLES) {
      t.ok(reads(plain.plan, table) > 0, `${operation}: the unconditional statement reads ${table}`)
      t.equal(reads(tagged.plan, table), reads(plain.plan, table), `${operation}: ${table} is read as often as without If-Match (${reads(plain.plan, table)})`)
    }
    // Nor is any table the kept children are built from read, with or without a tag.
    for (const table of KEPT_SOURCES) {
      t.equal(reads(plain.plan, table) + reads(tagged.plan, table), 0, `${operation}: ${table} is not read`)
    }
  }
})

/** Tables only the aggregate's children read (the kept ones, and the person's pins), and that neither change writes. */
const CHILD_TABLES = ['project_children', 'project_pins']

/** Tables only project_children is built from: a change reads its project's kept row instead. */
const KEPT_SOURCES = ['project_milestones', 'project_key_resources', 'project_task_statuses', 'project_retrospectives', 'project_check_ins', 'goals', 'spaces']

t.test('a page of projects/list builds the aggregate of its projects only, not of the one after it', async (t) => {
  // The statement looks one project past the page to know whether a next page
  // follows; building that one's aggregate would cost a page of 20 a 21st.
  const company = await createCompany(db)
  const reader = await createPerson(db, company.id)
  const space = await createSpace(db, company.id, [reader.id])
  for (const name of ['Listed A', 'Listed B', 'Listed C']) await createProject(db, space, { name, access: { space: 10 } })
  const { token } = await tokenFor(db, reader.email)
  sent.length = 0
  const res = await app.inject({ method: 'GET', url: '/api/external/v1/projects/list', query: { limit: '2' }, headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  t.same(res.json().projects.map((p: { name: string }) => p.name), ['Listed A', 'Listed B'])
  t.type(res.json().next_cursor, 'string', 'a next page')
  t.equal(sent.length, 1, 'one statement')

  const plan = await planOf(sent[0]!, true)
  // The kept children are read by the aggregate (alias pc), once per project it is
  // built for. (Their version, xmin, is looked up for the third too: one index probe.)
  const children = nodes(plan).filter((n) => n['Relation Name'] === 'project_children' && n.Alias === 'pc')
  t.ok(children.length > 0, 'the aggregate reads the kept children')
  const loops = children.map((n) => Number(n['Actual Loops']))
  t.equal(Math.max(...loops), 2, `read for the 2 projects of the page, not for the third (loops of each read: ${loops.join(', ')})`)
})

t.test('a page of projects/list judges the projects a person could see, not every project in the database', async (t) => {
  // Access comes from a person's company, their spaces, their contributions or a
  // project's public level; a page looks only there, so other companies' projects
  // cost it nothing, however many there are.
  const mine = await createCompany(db)
  const reader = await createPerson(db, mine.id)
  const ownSpace = await createSpace(db, mine.id, [reader.id])
  await createProject(db, ownSpace, { name: 'Judged own A', access: { space: 10 } })
  await createProject(db, ownSpace, { name: 'Judged own B', access: { company: 10 } })
  const other = await createCompany(db)
  const otherSpace = await createSpace(db, other.id)
  await createProject(db, otherSpace, { name: 'Judged other', access: { company: 100, space: 100 } })
  // Many more projects the reader cannot see, as in a database of many companies:
  // 50 more, each with 5 spaces of 20 projects.
  await sql`
    WITH c AS (INSERT INTO companies (name) SELECT ${other.id}::text || ' ' || i FROM generate_series(1, 50) i RETURNING id),
    s AS (INSERT INTO spaces (company_id, name) SELECT c.id, 'Space ' || j FROM c, generate_series(1, 5) j RETURNING id, company_id)
    INSERT INTO projects (company_id, space_id, name, company_access, space_access, state)
    SELECT s.company_id, s.id, 'Judged other ' || k, 100, 100, 'active' FROM s, generate_series(1, 20) k`.execute(db)
  await sql`ANALYZE companies`.execute(db)
  await sql`ANALYZE spaces`.execute(db)
  await sql`ANALYZE projects`.execute(db)
  await sql`ANALYZE space_members`.execute(db)
  await sql`ANALYZE project_contributors`.execute(db)
  await createProject(db, otherSpace, { name: 'Judged public', access: { public: 10 } })
  const elsewhere = await createSpace(db, other.id, [reader.id])
  await createProject(db, elsewhere, { name: 'Judged their space', access: { space: 10 } })
  const contributed = await createProject(db, otherSpace, { name: 'Judged contributed' })
  await addContributor(db, contributed.id, reader.id, 'contributor', 10)

  const { token } = await tokenFor(db, reader.email)
  sent.length = 0
  const res = await app.inject({ method: 'GET', url: '/api/external/v1/projects/list', query: { limit: '100' }, headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  const names = res.json().projects.map((p: { name: string }) => p.name).filter((n: string) => n.startsWith('Judged'))
  t.same(names, ['Judged contributed', 'Judged own A', 'Judged own B', 'Judged public', 'Judged their space'], 'every way of access still lists its projects')
  t.equal(sent.length, 1, 'one statement')

  const { count } = await db.selectFrom('projects').select((eb) => eb.fn.countAll<number | string>().as('count')).executeTakeFirstOrThrow()
  const plan = await planOf(sent[0]!, true)
  // A project is judged by the access rule (db/access.ts), which may look up the
  // person's space membership and contributor binding (aliased access_*): a few
  // loops for each project judged, none for the projects of other companies. The
  // candidates are looked up by key, not found by reading the table whole.
  const judged = nodes(plan).filter((n) => ['project_contributors', 'space_members'].includes(String(n['Relation Name'])) && /^access_/.test(String(n.Alias)))
    .reduce((sum, n) => sum + Number(n['Actual Loops']), 0)
  t.ok(judged > 0 && judged < 100, `${judged} lookups of a membership or binding, with ${Number(count)} projects in the database`)
  t.ok(Number(count) > 5000, 'the other company\'s projects are there')
  const whole = nodes(plan).filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'projects')
  t.same(whole.map((n) => String(n.Alias)), [], 'projects is not read whole')
})

t.test('a description change looks up the people it notifies, not everyone in the database', async (t) => {
  // The subscribers are judged one by one (their person, their access): a plan
  // that hashed every person and every space membership of the database would
  // cost each change of a description in proportion to the database's size.
  const { editor, colleagues: subscribers, project } = await championedProject(3)
  const list = await db.insertInto('subscription_lists').values({ project_id: project.id }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('subscriptions').values([editor, ...subscribers].map((person) => ({ subscription_list_id: list.id, person_id: person.id, type: 'joined' as const }))).execute()
  // 3,000 people of another company, each a member of one of its spaces.
  const other = await createCompany(db)
  await sql`
    WITH s AS (INSERT INTO spaces (company_id, name) SELECT ${other.id}::uuid, 'Crowded ' || j FROM generate_series(1, 10) j RETURNING id),
    pe AS (INSERT INTO people (company_id, email, full_name) SELECT ${other.id}::uuid, 'crowd' || i || '@example.test', 'Crowd ' || i FROM generate_series(1, 3000) i RETURNING id)
    INSERT INTO space_members (space_id, person_id) SELECT (SELECT id FROM s ORDER BY id LIMIT 1), pe.id FROM pe`.execute(db)
  await sql`ANALYZE people`.execute(db)
  await sql`ANALYZE space_members`.execute(db)

  const { token } = await tokenFor(db, editor.email)
  sent.length = 0
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Crowded' }] }] })
  const res = await app.inject({
    method: 'POST', url: '/api/external/v1/projects/update_description',
    headers: { authorization: `Bearer ${token}` }, payload: { project_id: project.publicId, description }
  })
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  t.equal(sent.length, 1, 'one statement')
  const notified = await db.selectFrom('notifications').select('person_id').where('project_id', '=', project.id).execute()
  t.same(notified.map((n) => n.person_id).sort(), subscribers.map((s) => s.id).sort(), 'the three subscribers are notified, not the author')

  const read = nodes(await planOf(sent[0]!)).filter((n) => n['Node Type'] === 'Seq Scan' && ['people', 'space_members'].includes(String(n['Relation Name'])))
  t.same(read.map((n) => `${String(n['Relation Name'])} as ${String(n.Alias)}`), [], 'neither people nor space_members is read whole')
})

t.test('a description change reads its list\'s subscribers once to find whom of those it mentions to subscribe, not once a person', async (t) => {
  const { editor, colleagues, project } = await championedProject(12)
  const list = await db.insertInto('subscription_lists').values({ project_id: project.id }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('subscriptions').values(colleagues.slice(0, 10).map((person) => ({ subscription_list_id: list.id, person_id: person.id, type: 'joined' as const }))).execute()
  // Six mentioned: four subscribed already, two not.
  const mentioned = colleagues.slice(6, 12)
  const doc = (text: string) => JSON.stringify({
    type: 'doc',
    content: [{ type: 'paragraph', content: [{ type: 'text', text }, ...mentioned.map((p) => ({ type: 'mention', attrs: { id: shortId(p.id), label: p.full_name } }))] }]
  })
  const { token } = await tokenFor(db, editor.email)
  sent.length = 0
  const res = await app.inject({
    method: 'POST', url: '/api/external/v1/projects/update_description',
    headers: { authorization: `Bearer ${token}` }, payload: { project_id: project.publicId, description: doc('First') }
  })
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  const subscribed = await db.selectFrom('subscriptions').select(['person_id', 'type']).where('subscription_list_id', '=', list.id).where('type', '=', 'mentioned').execute()
  t.same(subscribed.map((s) => s.person_id).sort(), colleagues.slice(10, 12).map((p) => p.id).sort(), 'the two mentioned who were not subscribed are')

  // The same statement with another text, prepared and so planned generically, as the server's are.
  const [statement] = sent
  const values = statement!.parameters.map((value) => value === doc('First') ? doc('Second') : value)
  const explained = await db.connection().execute(async (connection) =>
    await withPrepared(connection, statement!.sql, async () => await explainPrepared(connection, values, { timing: true })))
  const plan = explained.Plan as unknown as Json
  const subscribing = nodes(plan).find((n) => n['Subplan Name'] === 'CTE new_subscriptions')
  if (subscribing === undefined) throw new Error('no CTE new_subscriptions in the plan')
  const reads = nodes(subscribing).filter((n) => n['Relation Name'] === 'subscriptions' && n['Node Type'] !== 'ModifyTable')
  t.ok(reads.length > 0, 'the list\'s subscriptions are read')
  t.same(reads.map((n) => n['Actual Loops']), reads.map(() => 1), `once: ${reads.map((n) => `${String(n['Node Type'])} ${String(n['Index Name'] ?? '')} × ${String(n['Actual Loops'])}`).join(', ')}`)
})

/** A project its space reads (access 10), its champion `editor`, and `count` colleagues in the space. */
async function championedProject (count: number) {
  const company = await createCompany(db)
  const editor = await createPerson(db, company.id)
  const colleagues = await Promise.all(Array.from({ length: count }, () => createPerson(db, company.id)))
  const space = await createSpace(db, company.id, [editor.id, ...colleagues.map((c) => c.id)])
  const project = await createProject(db, space, { access: { space: 10 } })
  await addContributor(db, project.id, editor.id, 'champion')
  return { editor, colleagues, project }
}

t.test('a description change builds the contributors and the subscription list anew only when it subscribes someone', async (t) => {
  // A change that subscribes no one (most of them: the mentions stay the same)
  // answers with the contributors and the list as already built: kept, or read
  // before the change for If-Match's tag. Building them again read every
  // subscription of the project, and each one's person, per change.
  const { editor, colleagues, project } = await championedProject(5)
  const [first, second, third, fourth, fifth] = colleagues as [typeof editor, typeof editor, typeof editor, typeof editor, typeof editor]
  await addContributor(db, project.id, third.id, 'contributor')
  const { token } = await tokenFor(db, editor.email)
  const headers = { authorization: `Bearer ${token}` }
  const doc = (text: string, mentioned: Array<{ id: string }>) => JSON.stringify({
    type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }, ...mentioned.map((p) => ({ type: 'mention', attrs: { id: shortId(p.id) } }))] }]
  })
  const read = async () => await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: project.publicId }, headers })
  const currentTag = async () => (await read()).headers.etag as string

  interface Sent { statement: { sql: string, parameters: readonly unknown[] }, mentioned: Array<{ id: string }>, tag?: string }
  /** A change through the app (with If-Match: the project's current tag), its answer checked against a read after it. */
  const change = async (text: string, mentioned: Array<{ id: string }>, conditional = false): Promise<Sent> => {
    const tag = conditional ? await currentTag() : undefined
    sent.length = 0
    const res = await app.inject({
      method: 'POST',
      url: '/api/external/v1/projects/update_description',
      headers: tag === undefined ? headers : { ...headers, 'if-match': tag },
      payload: { project_id: project.publicId, description: doc(text, mentioned) }
    })
    t.equal(res.statusCode, 200, res.body.slice(0, 200))
    t.equal(sent.length, 1, 'one statement')
    const statement = sent[0]!
    const after = await read()
    t.same(res.json(), after.json(), `${text}: the answer is the project as a read after it finds it`)
    t.equal(res.headers.etag, after.headers.etag, `${text}: with the same tag`)
    return { statement, mentioned, ...(tag === undefined ? {} : { tag }) }
  }
  /**
   * The statement run again (EXPLAIN ANALYZE) for a new text that mentions
   * `mentioned`, under If-Match with the project's tag now if it was sent with one:
   * how often it read the subscriptions as written to build the answer's
   * contributors and list (0: never, they were taken as built).
   */
  const builds = async ({ statement, mentioned: before, tag }: Sent, text: string, mentioned: Array<{ id: string }>) => {
    const ids = JSON.stringify(before.map((m) => m.id))
    const tags = tag === undefined ? undefined : ifMatchTags(await currentTag())
    const parameters = statement.parameters.map((p) => Array.isArray(p)
      ? JSON.stringify(p) === ids ? mentioned.map((m) => m.id) : tags ?? p
      : typeof p === 'string' && p.startsWith('{"type":"doc"') ? doc(text, mentioned) : p)
    const plan = nodes(await planOf({ sql: statement.sql, parameters }, true))
    const cte = plan.filter((n) => n['Subplan Name'] === 'CTE all_subscriptions')
    t.equal(cte.length, 1, 'the statement has the subscriptions as written')
    t.ok(plan.some((n) => n['Relation Name'] === 'activities' && n['Node Type'] === 'ModifyTable'), 'and changed the project (it wrote an activity)')
    return Number(cte[0]!['Actual Loops'])
  }

  const made = await change('Makes the list', [first])
  const subscribed = await db.selectFrom('subscriptions as s').innerJoin('subscription_lists as l', 'l.id', 's.subscription_list_id')
    .where('l.project_id', '=', project.id).select(['s.person_id', 's.type']).execute()
  t.same(subscribed, [{ person_id: first.id, type: 'mentioned' }], 'the first change made the list and subscribed the person it mentions')
  t.equal(await builds(made, 'Mentions the same', [first]), 0, 'mentioning the same person again subscribes no one: nothing is built anew')
  t.ok(await builds(made, 'Mentions another', [first, second]) > 0, 'mentioning another subscribes them: the list and the contributors are built from what was written')

  const tagged = await change('Under If-Match', [first, second], true)
  t.equal(await builds(tagged, 'Under If-Match, the same', [first, second]), 0, 'under If-Match too: taken from the aggregate its tag was read from')
  t.ok(await builds(tagged, 'Under If-Match, another', [first, second, fourth]) > 0, 'and built when someone is subscribed')

  // Both ways answer what a read finds: the contributors' is_subscribed, the list.
  await change('The same mentions', [first, second])
  await change('A contributor mentioned', [first, second, third])
  await change('Under If-Match, the same mentions', [first, second, third], true)
  await change('Under If-Match, someone new', [first, second, third, fifth], true)
})

/** A project its space reads (the reader a member), and `count` other people of its company named `<name> <i>`. */
async function spaceProject (count: number, name: string) {
  const company = await createCompany(db)
  const reader = await createPerson(db, company.id)
  const space = await createSpace(db, company.id, [reader.id])
  const project = await createProject(db, space, { access: { space: 10 } })
  const people = await Promise.all(Array.from({ length: count }, (_, i) => createPerson(db, company.id, { fullName: `${name} ${i}` })))
  return { company, reader, space, project, people }
}

/** The plan of building a project's kept children (project_children_of, inlined), run with `analyze`. */
async function childrenPlan (projectId: string, analyze = true): Promise<Json> {
  return planOf({ sql: 'SELECT * FROM project_children_of(ARRAY[$1]::uuid[])', parameters: [projectId] }, analyze)
}

t.test('a project\'s children are built reading each contributor\'s person once, with the binding; projects/get reads them kept', async (t) => {
  // The contributors' list joins people for the order (by name) and to leave out
  // suspended people; the person nested in each entry is that joined row, not a
  // second lookup of the same one.
  const { reader, project, people } = await spaceProject(6, 'Contributor')
  for (const [i, person] of people.entries()) await addContributor(db, project.id, person.id, i === 0 ? 'champion' : 'contributor')
  const { token } = await tokenFor(db, reader.email)
  sent.length = 0
  const res = await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: project.publicId }, headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  t.same(res.json().project.contributors.map((c: { person: { full_name: string } }) => c.person.full_name), people.map((p) => p.full_name))
  t.equal(sent.length, 1, 'one statement')

  const peopleReads = (plan: Json) => nodes(plan).filter((n) => n['Relation Name'] === 'people').reduce((sum, n) => sum + Number(n['Actual Loops']), 0)
  // Built: one read of people for each contributor (no subscribers, check-ins or retrospective here).
  const built = peopleReads(await childrenPlan(project.id))
  t.equal(built, people.length, `${built} reads of people for ${people.length} contributors`)
  // Read: the children as kept, and people only for the token's holder.
  const plan = await planOf(sent[0]!, true)
  t.ok(nodes(plan).some((n) => n['Relation Name'] === 'project_children'), 'the kept children are read')
  t.equal(peopleReads(plan), 2, 'people are read for the token\'s holder alone')
})

t.test('a project\'s children are built reading its subscriptions from their index alone, in order', async (t) => {
  // The subscription list (in the order of subscribing) and each contributor's
  // subscription come from one index that holds what both read: the rows, which
  // one change at a time scatters over the table, are not visited, nor sorted.
  const { company, reader, space, project, people } = await spaceProject(12, 'Subscriber')
  await addContributor(db, project.id, people[0]!.id, 'champion')
  const list = await db.insertInto('subscription_lists').values({ project_id: project.id }).returning('id').executeTakeFirstOrThrow()
  // Subscribed one at a time, in the reverse order of their names.
  for (const [i, person] of [...people].reverse().entries()) {
    await db.insertInto('subscriptions').values({ subscription_list_id: list.id, person_id: person.id, type: 'joined', canceled: i === 3, inserted_at: sql<Date>`now() + ${i} * interval '1 second'` }).execute()
  }
  // Other projects' lists, as a database of many projects has them.
  await sql`
    WITH p AS (INSERT INTO projects (company_id, space_id, name) SELECT ${company.id}::uuid, ${space.id}::uuid, 'Listed ' || i FROM generate_series(1, 300) i RETURNING id),
    l AS (INSERT INTO subscription_lists (project_id) SELECT id FROM p RETURNING id)
    INSERT INTO subscriptions (subscription_list_id, person_id, type) SELECT l.id, pe.id, 'joined' FROM l, unnest(${sql.val(people.map((p) => p.id))}::uuid[]) pe(id)`.execute(db)
  await sql`VACUUM ANALYZE subscriptions`.execute(db)
  await sql`ANALYZE subscription_lists`.execute(db)

  const { token } = await tokenFor(db, reader.email)
  sent.length = 0
  const res = await app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id: project.publicId }, headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  const body = res.json().project
  t.same(body.subscription_list.subscriptions.map((s: { person: { full_name: string } }) => s.person.full_name), [...people].reverse().map((p) => p.full_name), 'in the order of subscribing')
  t.same(body.potential_subscribers.map((s: { is_subscribed: boolean }) => s.is_subscribed), [true], 'the champion is subscribed')
  t.equal(sent.length, 1, 'one statement')

  const reads = nodes(await childrenPlan(project.id, false)).filter((n) => n['Relation Name'] === 'subscriptions')
  t.ok(reads.length >= 2, `the list and the contributors' subscriptions are read (${reads.length} reads)`)
  t.same(reads.map((n) => `${String(n['Node Type'])} ${String(n['Index Name'] ?? '')}`), reads.map(() => 'Index Only Scan subscriptions_list_order_idx'), 'each from the index alone')
})
