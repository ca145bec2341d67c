// The bench's floor (bench/floor.ts, bench/floor-server.ts): the same requests as
// the server's, answered by running the server's captured statements with the
// target's values, as pgbench replays them, and nothing else.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { sql } from 'kysely'
import { captureStatements } from '../../bench/capture.js'
import { floorPlan, startFloor } from '../../bench/floor.js'
import { httpRequest, NAME_PREFIX, type Target } from '../../bench/operations.js'
import { writeBenchTags } from '../../bench/pgbench.js'
import { seedDataset, writeBenchTargets, writeBenchVersions, type DatasetSize } from '../../bench/seed.js'
import { createTestDatabase } from '../database.js'

const SIZE: DatasetSize = {
  companies: 1,
  spacesPerCompany: 1,
  peoplePerCompany: 30,
  projects: 4,
  milestones: 2,
  contributors: 2,
  subscribers: 3,
  checkIns: 1,
  keyResources: 1,
  largeProjects: 1,
  largeMilestones: 3,
  largeContributors: 2,
  notifiedProjects: 1,
  notifiedSubscribers: 20,
  mentions: 4,
  readers: 1,
  readerNotifications: 3
}

const url = process.env.DATABASE_URL
const skip = !url && 'needs DATABASE_URL (the capture watches node-postgres)'

async function seeded (t: Test) {
  const database = await createTestDatabase()
  t.teardown(() => database.close())
  const data = await seedDataset(database.db, SIZE, { tokenConcurrency: 2 })
  await writeBenchTargets(database.db, data)
  const dir = await mkdtemp(path.join(os.tmpdir(), 'floor-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const [target, other] = data.normal as [Target, Target]
  return { database, data, dir, target, other }
}

/** One request as the load generator sends it, and its answer. */
async function ask (serverUrl: string, operation: Parameters<typeof httpRequest>[0], target: Target, revision: number, etag?: string) {
  const request = httpRequest(operation, target, revision, etag)
  const response = await fetch(serverUrl + request.path, { method: request.method, headers: request.headers, body: request.body })
  return { status: response.status, body: await response.text(), etag: response.headers.get('etag') }
}

t.test('a rename\'s plan takes the token, the project and the name from each request\'s target, the rest as captured', { skip }, async (t) => {
  const { database, data, target } = await seeded(t)
  const captures = await captureStatements(database.url!, { update_name: target, update_name_if_match: target }, {}, ['update_name', 'update_name_if_match'])
  const plan = floorPlan('update_name', captures.update_name, target, data.normal)
  t.equal(plan.statements.length, 1, 'the server\'s one statement')
  const variables = plan.statements[0]!.parameters.flatMap((p) => 'variable' in p ? [p.variable] : [])
  for (const name of ['digest', 'project_id', 'new_name', 'known_children']) t.ok(variables.includes(name), `${name} comes from the request's target`)
  t.ok(plan.statements[0]!.parameters.some((p) => 'value' in p), 'the others are the captured constants')
  t.equal(plan.targets.length, data.normal.length)
  const conditional = floorPlan('update_name_if_match', captures.update_name_if_match, target, data.normal).statements[0]!.parameters
  t.ok(conditional.some((p) => 'variable' in p && p.variable === 'if_match'), 'a conditional rename\'s plan takes the If-Match tag from each request')
})

t.test('the floor renames the request\'s target and answers with the project the statement returns', { skip }, async (t) => {
  const { database, data, dir, other } = await seeded(t)
  const { update_name: capture } = await captureStatements(database.url!, { update_name: data.normal[0]! }, {}, ['update_name'])
  // Its only target: another project than the captured one.
  const server = await startFloor({ ...floorPlan('update_name', capture, data.normal[0]!, data.normal), targets: [other] }, { dir, url: database.url!, poolSize: 2 })
  t.teardown(() => server.stop())
  const activitiesBefore = await sql<{ n: number }>`SELECT count(*)::int AS n FROM activities WHERE project_id = ${other.projectId}::uuid`.execute(database.db)
  const answers = []
  for (const revision of [11, 12]) {
    const answer = await ask(server.url, 'update_name', other, revision)
    t.equal(answer.status, 200, answer.body.slice(0, 200))
    answers.push(answer.body)
  }
  const { rows: [project] } = await sql<{ name: string }>`SELECT name FROM projects WHERE id = ${other.projectId}::uuid`.execute(database.db)
  t.match(project!.name, new RegExp(`^${NAME_PREFIX}\\d+$`), 'the project has a name the floor gave it')
  t.equal(JSON.parse(answers[1]!).name, project!.name, 'the answer is the project as renamed')
  const activitiesAfter = await sql<{ n: number }>`SELECT count(*)::int AS n FROM activities WHERE project_id = ${other.projectId}::uuid`.execute(database.db)
  t.equal(activitiesAfter.rows[0]!.n - activitiesBefore.rows[0]!.n, 2, 'one activity a request')
  t.ok(answers[1]!.length < answers[0]!.length, 'the second change tells the database the children the first returned: they are not sent again')
})

t.test('a read of the floor tells the database the version of its target that bench_targets holds, as pgbench\'s replay does', { skip }, async (t) => {
  const { database, data, dir, other } = await seeded(t)
  const { get: capture } = await captureStatements(database.url!, { get: data.normal[0]! }, {}, ['get'])
  await writeBenchVersions(database.db)
  const server = await startFloor({ ...floorPlan('get', capture, data.normal[0]!, data.normal), targets: [other] }, { dir, url: database.url!, poolSize: 2 })
  t.teardown(() => server.stop())
  const kept = await ask(server.url, 'get', other, 0)
  t.equal(kept.status, 200)
  t.same(Object.keys(JSON.parse(kept.body)), ['is_pinned', 'my_role', 'notifications'], 'at the version held: the reader\'s part alone')
})

t.test('a conditional rename of the floor follows each project\'s tag, from bench_tags and then its answers, and fails on a stale one', { skip }, async (t) => {
  const { database, data, dir, other } = await seeded(t)
  const { update_name_if_match: capture } = await captureStatements(database.url!, { update_name_if_match: data.normal[0]! }, {}, ['update_name_if_match'])
  // bench_tags as the bench writes it right before the floor's runs.
  await writeBenchTags(database.db, 'normal', data.normal)
  const server = await startFloor({ ...floorPlan('update_name_if_match', capture, data.normal[0]!, data.normal), targets: [other] }, { dir, url: database.url!, poolSize: 2 })
  t.teardown(() => server.stop())
  // The load generator reads each project's tag first (bench/load.ts).
  const read = await ask(server.url, 'get', other, 0)
  t.equal(read.status, 200)
  t.match(read.etag, /^"[^"]+"$/, 'the project\'s tag, as bench_tags holds it')
  const renamed = await ask(server.url, 'update_name_if_match', other, 21, read.etag!)
  t.equal(renamed.status, 200, renamed.body.slice(0, 200))
  t.not(renamed.etag, read.etag, 'the answer carries the tag after the change')
  const name = async () => (await sql<{ name: string }>`SELECT name FROM projects WHERE id = ${other.projectId}::uuid`.execute(database.db)).rows[0]!.name
  const first = await name()
  t.match(first, new RegExp(`^${NAME_PREFIX}\\d+$`), 'the project has a name the floor gave it')
  const again = await ask(server.url, 'update_name_if_match', other, 22, renamed.etag!)
  t.equal(again.status, 200, 'with the tag of the last answer, the next change holds')
  const second = await name()
  t.not(second, first, 'renamed again')
  const stale = await ask(server.url, 'update_name_if_match', other, 23, renamed.etag!)
  t.equal(stale.status, 412, 'with a tag from before, it does not')
  t.equal(stale.etag, again.etag, 'and answers with the current one')
  t.equal(await name(), second, 'the project is as the last change left it')
  const reread = await ask(server.url, 'get', other, 0)
  t.equal(reread.etag, again.etag, 'a read of the tag gives the one the answers followed')
})
