// The bench's capture of the server's statements (bench/capture.ts), which pgbench
// replays: a read captured again after the projects changed carries the versions
// the database holds then, and projects/get's replay each target's own, so that
// the replay does the server's work, not more.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { sql } from 'kysely'
import { captureStatements } from '../../bench/capture.js'
import { newName, type Target } from '../../bench/operations.js'
import { pgbenchScript } from '../../bench/pgbench.js'
import { seedDataset, writeBenchTargets, writeBenchVersions, type DatasetSize } from '../../bench/seed.js'
import { loadConfig } from '../../src/config.js'
import { createDb, dbOptions } from '../../src/db/index.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createTestDatabase } from '../database.js'

const SIZE: DatasetSize = {
  companies: 2,
  spacesPerCompany: 2,
  peoplePerCompany: 30,
  projects: 30,
  milestones: 2,
  contributors: 3,
  subscribers: 3,
  checkIns: 1,
  keyResources: 1,
  largeProjects: 1,
  largeMilestones: 3,
  largeContributors: 3,
  notifiedProjects: 2,
  notifiedSubscribers: 20,
  mentions: 4,
  readers: 2,
  readerNotifications: 3
}

// A version of db/project-aggregate.ts's sharedVersion: `<uuid> <xmin> <xmin>`.
const VERSION = /^[0-9a-f-]{36} \d+ \d+/

const url = process.env.DATABASE_URL
t.test('a read captured again carries the versions its database holds then, and its replay sends no shared part', { skip: !url && 'needs DATABASE_URL (the capture watches node-postgres)' }, async (t) => {
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  const data = await seedDataset(database.db, SIZE, { tokenConcurrency: 2 })
  const target = data.normal[0]!
  const warmUp = { list_projects: data.normal.slice(0, SIZE.companies) }
  const capture = async () => {
    const captures = await captureStatements(database.url!, { list_projects: target }, warmUp, ['list_projects'])
    t.same(Object.keys(captures), ['list_projects'], 'only the operation asked for is captured')
    const [statement, ...others] = captures.list_projects.statements
    t.equal(others.length, 0, 'one statement')
    const known = statement!.parameters.find((p): p is string[] => Array.isArray(p) && p.length > 0 && p.every((v) => typeof v === 'string' && VERSION.test(v)))
    t.ok(known, 'the statement names the versions the server holds')
    return { statement: statement!, known: known ?? [] }
  }
  // The statement as pgbench sends it: the captured text and values, on a connection of its own.
  const replay = async (statement: { sql: string, parameters: readonly unknown[] }) => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const { rows } = await client.query<{ id: string | null, kept: boolean | null, aggregate: string | null }>(statement.sql, [...statement.parameters])
      return rows.filter((row) => row.id !== null && row.aggregate !== null)
    } finally {
      await client.end()
    }
  }

  const first = await capture()
  const page = await replay(first.statement)
  t.ok(page.length > 0, 'the first page has projects')
  t.ok(page.every((row) => row.kept === true), 'replayed at once, every project of the page is held: only its reader\'s part is sent')

  // A change of a project of the page gives it another version (the bench's runs
  // before a read rename thousands).
  const changed = page[0]!.id!
  await database.db.updateTable('projects').set((eb) => ({ name: eb.ref('name') })).where('id', '=', changed).execute()
  const stale = await replay(first.statement)
  t.equal(stale.find((row) => row.id === changed)?.kept, false, 'replayed with the versions of before, the changed project is sent whole')

  const again = await capture()
  t.notSame(again.known.filter((v) => v.startsWith(changed)), first.known.filter((v) => v.startsWith(changed)), 'captured again, it names the changed project\'s new version')
  const fresh = await replay(again.statement)
  t.equal(fresh.length, page.length)
  t.ok(fresh.every((row) => row.kept === true), 'and its replay sends no project whole')
})

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** A database of its own with the small dataset; two targets of its normal set. */
async function seeded (t: Tap) {
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  const data = await seedDataset(database.db, SIZE, { tokenConcurrency: 2 })
  const [target, other] = data.normal as [Target, Target]
  return { database, data, target, other }
}

/**
 * The captured statement sent for `other` as pgbench sends it: with that target's
 * project and token's digest, and `versions` where the capture sent the list
 * `captured` (its first version), on a connection of its own.
 */
async function sendFor<R> (url: string, statement: { sql: string, parameters: readonly unknown[] }, target: Target, other: Target, captured: string, versions: string[]): Promise<R> {
  const parameters = statement.parameters.map((p) => p === target.projectId
    ? other.projectId
    : Buffer.isBuffer(p) && p.equals(target.digest) ? other.digest : Array.isArray(p) && p[0] === captured ? versions : p)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows: [row] } = await client.query(statement.sql, parameters)
    return row as R
  } finally {
    await client.end()
  }
}

/**
 * A read of `operation` captured for the first target of its set: the capture must
 * name the version the server told the database it holds (matching `version`),
 * which each pgbench transaction reads from bench_targets and sends. Then the
 * captured statement for the set's second target, as pgbench sends it, and that
 * target's version as bench_targets holds it, written anew.
 */
async function capturedRead<R> (t: Tap, operation: 'get' | 'list_notifications', version: RegExp, what: string) {
  const { database, data } = await seeded(t)
  const set = operation === 'get' ? 'normal' : 'readers'
  const [target, other] = data[set] as [Target, Target]
  const capture = (await captureStatements(database.url!, { [operation]: target } as Record<typeof operation, Target>, {}, [operation]))[operation]
  t.equal(capture.known?.length, 1, `the capture names the version of its target's ${what}`)
  t.match(capture.known?.[0], version)
  const [statement] = capture.statements
  t.ok(statement!.parameters.some((p) => Array.isArray(p) && p[0] === capture.known![0]), 'which the server told the database it holds')
  const script = pgbenchScript(operation, capture, target, data[set].length)
  t.match(script.text, /SELECT [^\n]*t\.known[^\n]* FROM bench_targets/, 'each transaction reads its target\'s version')
  t.match(script.text, /\(:known::text\[\]\)/, 'and sends it')

  await writeBenchTargets(database.db, data)
  return {
    database, other,
    /** Another target's statement, as pgbench sends it: the captured one with that target's values. */
    replay: async (known: string[]) => await sendFor<R>(database.url!, statement!, target, other, capture.known![0]!, known),
    /** The other target's version in bench_targets, written anew. */
    versionOf: async () => {
      await writeBenchVersions(database.db)
      const { rows: [row] } = await sql<{ known: string[] }>`SELECT known FROM bench_targets WHERE kind = ${set} AND n = ${other.n}`.execute(database.db)
      t.not(row!.known[0], capture.known![0], `another target's ${what}'s version`)
      return row!.known
    }
  }
}

t.test('projects/get\'s replay tells the database the version each target\'s project is at now (bench_targets.known)', { skip: !url && 'needs DATABASE_URL (the capture watches node-postgres)' }, async (t) => {
  const { database, other, replay, versionOf } = await capturedRead<{ kept: boolean, aggregate: string }>(t, 'get', VERSION, 'project')
  const before = await versionOf()
  t.match(before[0], VERSION)
  const read = await replay(before)
  t.equal(read.kept, true, 'at the version bench_targets holds: the reader\'s part alone')
  t.same(Object.keys(JSON.parse(read.aggregate)), ['is_pinned', 'my_role', 'notifications'])

  await database.db.updateTable('projects').set((eb) => ({ name: eb.ref('name') })).where('id', '=', other.projectId).execute()
  t.equal((await replay(before)).kept, false, 'after a change, the version of before gives the project whole')
  const after = await versionOf()
  t.not(after[0], before[0], 'written anew, bench_targets holds its new version')
  t.equal((await replay(after)).kept, true, 'with which the replay sends the reader\'s part alone again')
})

t.test('a change\'s replay tells the database the version of each target\'s kept children as the transaction finds them', { skip: !url && 'needs DATABASE_URL (the capture watches node-postgres)' }, async (t) => {
  const { database, data, target, other } = await seeded(t)
  const { update_name: capture } = await captureStatements(database.url!, { update_name: target }, {}, ['update_name'])
  t.equal(capture.knownChildren?.length, 1, 'the capture names the version of its target\'s children, which the server holds after the changes before it')
  const [statement] = capture.statements
  t.ok(statement!.parameters.some((p) => Array.isArray(p) && p[0] === capture.knownChildren![0]), 'and the server told the database it holds them')
  const script = pgbenchScript('update_name', capture, target, data.normal.length)
  const lookup = /^SELECT (.*) FROM bench_targets t WHERE t\.kind = 'normal' AND t\.n = :n \\gset$/m.exec(script.text)
  t.ok(lookup, 'each transaction looks up its target')
  t.match(lookup?.[1], /AS known_children/, 'with the version of its children')
  t.match(script.text, /\(:known_children::text\[\]\)/, 'which it sends')

  await writeBenchTargets(database.db, data)
  // The lookup for another target, then its change as pgbench sends it.
  const { rows: [found] } = await sql<{ known_children: string[] }>`SELECT ${sql.raw(lookup![1]!.replaceAll(':r', '1'))} FROM bench_targets t WHERE t.kind = 'normal' AND t.n = ${other.n}`.execute(database.db)
  t.equal(found!.known_children[0]!.split(' ')[0], other.projectId, 'the other target\'s children')
  const changed = await sendFor<{ children_kept: boolean, children_version: string }>(database.url!, statement!, target, other, capture.knownChildren![0]!, found!.known_children)
  t.equal(changed.children_kept, true, 'sent without the children, as the server\'s change is')
  t.equal(changed.children_version, found!.known_children[0])
})

t.test('notifications/list\'s replay tells the database the version of each reader\'s page (bench_targets.known)', { skip: !url && 'needs DATABASE_URL (the capture watches node-postgres)' }, async (t) => {
  const { database, other, replay, versionOf } = await capturedRead<{ kept: boolean, items: string | null, version: string }>(t, 'list_notifications', /^[0-9a-f]{32}$/, 'page')
  const before = await versionOf()
  const read = await replay(before)
  t.equal(read.kept, true, 'at the version bench_targets holds: no text')
  t.equal(read.items, null)
  t.equal(read.version, before[0])

  await sql`UPDATE notifications SET read = NOT read, read_at = CASE WHEN read THEN NULL ELSE now() END
    WHERE id = (SELECT id FROM notifications WHERE person_id = ${other.personId}::uuid ORDER BY inserted_at DESC, id DESC LIMIT 1)`.execute(database.db)
  const stale = await replay(before)
  t.equal(stale.kept, false, 'after a change, the version of before gives the page whole')
  t.ok(JSON.parse(stale.items!).length > 0)
  const after = await versionOf()
  t.not(after[0], before[0], 'written anew, bench_targets holds its new version')
  t.equal((await replay(after)).kept, true, 'with which the replay sends no text again')
})

t.test('on the embedded database, named by its directory, a rename is captured as the one statement it sends (npm run bench:explain)', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capture-embedded-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const seeding = await createDb(dbOptions(loadConfig({ DATA_DIR: dataDir })))
  let data
  try {
    await migrateToLatest(seeding)
    data = await seedDataset(seeding, SIZE, { tokenConcurrency: 1 })
  } finally {
    await seeding.destroy()
  }
  const target = data.normal[0]!
  const { update_name: capture } = await captureStatements({ dataDir }, { update_name: target }, {}, ['update_name'])
  t.equal(capture.statements.length, 1, 'one statement')
  t.ok(capture.statements[0]!.parameters.includes(newName(capture.revision)), 'carrying the new name')
  const db = await createDb(dbOptions(loadConfig({ DATA_DIR: dataDir })))
  try {
    const project = await db.selectFrom('projects').select('name').where('id', '=', target.projectId).executeTakeFirstOrThrow()
    t.equal(project.name, newName(capture.revision), 'which the embedded database holds afterwards')
  } finally {
    await db.destroy()
  }
})
