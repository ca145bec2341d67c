// The least a Node.js server can do with an operation's statements: node:http and
// node-postgres, a pool of DB_POOL_SIZE connections, and for each request the
// server's captured statements (bench/floor.ts, the plan) run with a random
// target's values, as pgbench replays them, the first row's longest text written
// back as the answer. No routing, no checks, no JSON parsed or written: what the
// server does beyond this is its own cost. The bench drives it with the same
// requests as the server (bench/load.ts), whose bodies it reads and ignores, but a
// conditional rename's, which names the project its If-Match tag is for.
//
// Run as `node --import=tsx bench/floor-server.ts` with DATABASE_URL, DB_POOL_SIZE,
// PORT and FLOOR_PLAN (the plan's file); /health/ready answers 200 once listening.
import http from 'node:http'
import { readFileSync } from 'node:fs'
import { deserialize } from 'node:v8'
import pg from 'pg'
import { PLAN_CACHE_MODE } from '../src/db/statement-names.js'
import type { FloorPlan } from './floor.js'
import { randomRevision, type Target } from './operations.js'
import { variableValues } from './pgbench.js'

const plan = deserialize(readFileSync(process.env.FLOOR_PLAN!)) as FloorPlan
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 4),
  // The server's sessions plan as its own do (src/db/index.ts).
  options: `-c plan_cache_mode=${PLAN_CACHE_MODE}`,
  // Every column as the text PostgreSQL sends: nothing parsed.
  types: { getTypeParser: () => (text: string) => text }
})

// What a server keeps between requests: each project's kept children, as its change
// returned their version (db/project-aggregate.ts, childrenVersion); a read's
// version comes from bench_targets.known, as in pgbench's replay.
const children = new Map<string, string>()
const known = new Map<number, string[]>()
// text[]'s type oid.
const TEXT_ARRAY = 1009 as Parameters<typeof pg.types.getTypeParser>[0]
const uses = (variable: string) => plan.statements.some((s) => s.parameters.some((p) => 'variable' in p && p.variable === variable))
if (uses('known')) {
  const { rows } = await pool.query<{ n: number, known: string | null }>('SELECT n, known FROM bench_targets WHERE kind = $1', [plan.set])
  for (const row of rows) {
    if (row.known !== null) known.set(Number(row.n), pg.types.getTypeParser(TEXT_ARRAY)(row.known) as string[])
  }
}

// A conditional rename's request names its project and carries the tag of its last
// answer, which the load generator reads first with projects/get: each project's
// current tag starts as bench_tags holds it (the bench writes it right before) and
// follows the answers, and a projects/get is answered with it alone.
const conditional = uses('if_match')
const byPublicId = new Map(plan.targets.map((target) => [target.publicId, target]))
const tags = new Map<number, string>()
if (conditional) {
  const { rows } = await pool.query<{ n: number, tag: string }>('SELECT n, tag FROM bench_tags WHERE kind = $1', [plan.set])
  for (const row of rows) tags.set(Number(row.n), row.tag)
}

interface Answer { status: number, body: string, tag?: string | undefined }

async function answer (target: Target, ifMatch?: string): Promise<Answer> {
  const kept = children.get(target.projectId)
  const values = variableValues(target, randomRevision(), ifMatch, known.get(target.n) ?? [], kept === undefined ? [] : [kept])
  let body = '{}'
  let tag: string | undefined
  let status = 200
  for (const [i, statement] of plan.statements.entries()) {
    const parameters = statement.parameters.map((p) => 'variable' in p ? values[p.variable] : p.value)
    const { rows } = await pool.query<Record<string, string | null>>({ text: statement.sql, values: parameters, ...(statement.named ? { name: `floor_${i}` } : {}) })
    const row = rows[0]
    if (row === undefined) continue
    if (typeof row.children_version === 'string') children.set(target.projectId, row.children_version)
    if (conditional) {
      // The tag after the change, or the current one when the precondition failed.
      tag = row.etag ?? row.current_tag ?? undefined
      if (tag !== undefined) tags.set(target.n, tag)
      if (row.holds === 'f') status = 412
    }
    for (const value of Object.values(row)) {
      if (typeof value === 'string' && value.length > body.length) body = value
    }
  }
  return { status, body, tag }
}

/** The request's project and If-Match tag (a conditional rename's), else a random target. */
function targetOf (request: http.IncomingMessage, body: string): { target: Target, ifMatch?: string } | { tag: string | undefined } {
  if (!conditional) return { target: plan.targets[Math.floor(Math.random() * plan.targets.length)]! }
  const url = new URL(request.url ?? '/', 'http://floor')
  if (request.method === 'GET') return { tag: tags.get(byPublicId.get(url.searchParams.get('id') ?? '')?.n ?? 0) }
  const target = byPublicId.get((JSON.parse(body) as { project_id: string }).project_id)
  if (target === undefined) throw new Error('no such target')
  return { target, ifMatch: request.headers['if-match']?.slice(1, -1) }
}

function send (response: http.ServerResponse, { status, body, tag }: Answer): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...(tag === undefined ? {} : { etag: `"${tag}"` }) })
  response.end(body)
}

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => { if (conditional) chunks.push(chunk) })
  request.on('end', () => {
    if (request.url === '/health/ready') {
      response.end('{"status":"ok"}')
      return
    }
    Promise.resolve().then(async () => {
      const asked = targetOf(request, Buffer.concat(chunks).toString())
      return 'target' in asked ? await answer(asked.target, asked.ifMatch) : { status: asked.tag === undefined ? 404 : 200, body: '{}', tag: asked.tag }
    }).then((answered) => send(response, answered), (error: Error) => send(response, { status: 500, body: error.message }))
  })
})
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1')
process.on('SIGTERM', () => {
  server.close()
  server.closeAllConnections()
  void pool.end().then(() => process.exit(0))
})
