// The bench's capture of the server's statements (bench/capture.ts), which pgbench
// replays: a read captured again after the projects changed carries the versions
// the database holds then, so that its replay does the server's work, not more.
import pg from 'pg'
import t from 'tap'
import { captureStatements } from '../../bench/capture.js'
import { seedDataset, type DatasetSize } from '../../bench/seed.js'
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

// A version of db/project-list.ts's sharedVersion: `<uuid> <xmin> <xmin>`.
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
