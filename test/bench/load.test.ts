// The bench's load generator (bench/load.ts) keeps only the bodies of failures:
// autocannon would otherwise decode every body it reads into a string, a page of
// projects (most of a megabyte) costing it more CPU than the server spent writing it.
// And each side of an A/B starts as its own tree's `npm run start:prod` says.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import t from '../tap.js'
import autocannon from 'autocannon'
import { KEEPS_BODIES, productionStart } from '../../bench/load.js'

const PAGE = Buffer.alloc(512 * 1024, 'x')

const server = createServer((request, response) => {
  if (request.url === '/page') {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': PAGE.length, etag: '"v1"' })
    response.end(PAGE)
  } else {
    response.writeHead(500, { 'content-type': 'application/json' })
    response.end('{"error":"broken"}')
  }
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

/** What autocannon hands onResponse for `amount` requests to `path`, and its count of bytes read. */
async function drive (path: string, amount: number) {
  const seen: Array<{ status: number, body: string, etag: string | undefined }> = []
  const result = await autocannon({
    url, connections: 2, amount,
    requests: [{ path, onResponse: (status, body, _context, headers) => { seen.push({ status, body, etag: (headers as Record<string, string>).etag }) } }]
  })
  return { seen, bytes: result.throughput.total, non2xx: result.non2xx }
}

t.test('a success is read and counted, its body not kept', { skip: KEEPS_BODIES && 'BENCH_KEEP_BODIES is set' }, async (t) => {
  const { seen, bytes } = await drive('/page', 6)
  t.equal(seen.length, 6)
  for (const response of seen) t.same(response, { status: 200, body: '', etag: '"v1"' })
  t.ok(bytes >= 6 * PAGE.length, `every page's bytes were read (${bytes})`)
})

t.test("a failure's body is kept, for the bench's samples", async (t) => {
  const { seen, non2xx } = await drive('/fail', 4)
  t.equal(non2xx, 4)
  for (const response of seen) t.same(response, { status: 500, body: '{"error":"broken"}', etag: undefined })
})

t.test("a tree's server starts with its own start:prod's environment and node flags", async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'bench-start-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  await writeFile(path.join(root, 'package.json'), JSON.stringify({
    scripts: { 'start:prod': 'MALLOC_ARENA_MAX=2 FOO=bar node --max-semi-space-size=8 --single-threaded-gc dist/src/server.js' }
  }))
  t.same(productionStart(root), { nodeFlags: ['--max-semi-space-size=8', '--single-threaded-gc'], env: { MALLOC_ARENA_MAX: '2', FOO: 'bar' } })
  await writeFile(path.join(root, 'package.json'), JSON.stringify({ scripts: { 'start:prod': 'node dist/src/server.js' } }))
  t.same(productionStart(root), { nodeFlags: [], env: {} }, 'none given, none used')
})
