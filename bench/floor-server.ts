// The least a Node.js server can do with an operation's statements: node:http and
// node-postgres, a pool of DB_POOL_SIZE connections, and for each request the
// server's captured statements (bench/floor.ts, the plan) run with a random
// target's values, as pgbench replays them, the first row's longest text written
// back as the answer. No routing, no checks, no JSON parsed or written: what the
// server does beyond this is its own cost. The bench drives it with the same
// requests as the server (bench/load.ts), whose bodies it reads and ignores.
//
// Run as `node --import=tsx bench/floor-server.ts` with DATABASE_URL, DB_POOL_SIZE,
// PORT and FLOOR_PLAN (the plan's file); /health/ready answers 200 once listening.
import http from 'node:http'
import { readFileSync } from 'node:fs'
import { deserialize } from 'node:v8'
import pg from 'pg'
import { PLAN_CACHE_MODE } from '../src/db/statement-names.js'
import type { FloorPlan } from './floor.js'
import { randomRevision } from './operations.js'
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
if (plan.statements.some((s) => s.parameters.some((p) => 'variable' in p && p.variable === 'known'))) {
  const { rows } = await pool.query<{ n: number, known: string | null }>('SELECT n, known FROM bench_targets WHERE kind = $1', [plan.set])
  for (const row of rows) {
    if (row.known !== null) known.set(Number(row.n), pg.types.getTypeParser(TEXT_ARRAY)(row.known) as string[])
  }
}

async function answer (): Promise<string> {
  const target = plan.targets[Math.floor(Math.random() * plan.targets.length)]!
  const kept = children.get(target.projectId)
  const values = variableValues(target, randomRevision(), undefined, known.get(target.n) ?? [], kept === undefined ? [] : [kept])
  let body = '{}'
  for (const [i, statement] of plan.statements.entries()) {
    const parameters = statement.parameters.map((p) => 'variable' in p ? values[p.variable] : p.value)
    const { rows } = await pool.query<Record<string, string | null>>({ text: statement.sql, values: parameters, ...(statement.named ? { name: `floor_${i}` } : {}) })
    const row = rows[0]
    if (row === undefined) continue
    if (typeof row.children_version === 'string') children.set(target.projectId, row.children_version)
    for (const value of Object.values(row)) {
      if (typeof value === 'string' && value.length > body.length) body = value
    }
  }
  return body
}

const server = http.createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    if (request.url === '/health/ready') {
      response.end('{"status":"ok"}')
      return
    }
    answer().then((body) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
      response.end(body)
    }, (error: Error) => {
      response.writeHead(500, { 'content-type': 'text/plain' })
      response.end(error.message)
    })
  })
})
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1')
process.on('SIGTERM', () => {
  server.close()
  server.closeAllConnections()
  void pool.end().then(() => process.exit(0))
})
