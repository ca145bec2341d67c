// The bench's seed (bench/seed.ts) fills a migrated database with plain SQL and
// stores its tokens as the service does, so each operation the bench drives
// (bench/operations.ts) succeeds on the app with a target's token.
import t from '../tap.js'
import { httpRequest, LABELS, OPERATIONS, TARGET_SETS, type OperationName } from '../../bench/operations.js'
import { DEFAULT_SIZE, seedDataset, type DatasetSize } from '../../bench/seed.js'
import { build } from '../helper.js'

const SMALL: DatasetSize = {
  ...DEFAULT_SIZE,
  companies: 2,
  peoplePerCompany: 30,
  projects: 4,
  subscribers: 5,
  largeProjects: 2,
  largeMilestones: 12,
  largeContributors: 10,
  notifiedProjects: 2,
  notifiedSubscribers: 20,
  mentions: 4,
  readers: 2,
  readerNotifications: 5
}

const { app, db } = await build(t)
await app.ready()
const dataset = await seedDataset(db, SMALL)

t.test('the targets and rows of the size asked for', async (t) => {
  t.same([dataset.normal.length, dataset.notified.length, dataset.readers.length], [4, 2, 2])
  t.match(dataset.rows, { companies: 2, projects: 8, people: 62, api_tokens: 8 })
  t.same(dataset.notified[0]!.mentions.length, 4, 'a notified project\'s descriptions mention people')
})

/** Each operation once on its set's first target, the ETag of a get for a conditional rename. */
for (const operation of OPERATIONS) {
  t.test(`${LABELS[operation]} answers 200 with a seeded token`, async (t) => {
    const target = dataset[TARGET_SETS[operation]][0]!
    let etag: string | undefined
    if (operation === 'update_name_if_match') {
      const read = httpRequest('get', target, 0)
      etag = String((await app.inject({ method: read.method, url: read.path, headers: read.headers })).headers.etag)
    }
    const request = httpRequest(operation as OperationName, target, 7, etag)
    const response = await app.inject({ method: request.method, url: request.path, headers: request.headers, payload: request.body })
    t.equal(response.statusCode, 200, response.body.slice(0, 300))
  })
}
