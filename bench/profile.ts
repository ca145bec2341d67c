// npm run bench:profile -- <operation> [seconds]: this tree's built server under
// --cpu-prof, one operation at 50 connections on the bench dataset, and the
// functions that took the most of its CPU (self time), from the profile.
import { mkdtemp, readdir, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { load, productionStart, startServer } from './load.js'
import { OPERATIONS, TARGET_SETS, type OperationName } from './operations.js'
import { recreateDatabase, withDatabase } from './postgres.js'
import { DEFAULT_SIZE, seedAt } from './seed.js'
import { migrate, thisTree } from './tree.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const operation = process.argv[2] as OperationName
if (!OPERATIONS.includes(operation)) throw new Error(`name one of ${OPERATIONS.join(', ')}`)
const seconds = Number(process.argv[3] ?? 8)
const base = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
const tmp = await mkdtemp(path.join(os.tmpdir(), 'projects-profile-'))
const tree = thisTree(ROOT, { build: process.env.PROFILE_BUILD !== '0', log: path.join(tmp, 'build.log') })
const url = withDatabase(base, 'bench_profile')
await recreateDatabase(base, 'bench_profile')
migrate(tree, url, path.join(tmp, 'build.log'))
const dataset = await seedAt(url, DEFAULT_SIZE)
const server = await startServer({
  entry: tree.entry, start: productionStart(ROOT), logFile: path.join(tmp, 'server.log'), nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${tmp}`, ...(process.env.PROFILE_NODE_FLAGS ?? '').split(' ').filter(Boolean)],
  env: { LOG_LEVEL: 'warn', NODE_ENV: 'production', RATE_LIMIT_MAX: '0', DB_POOL_SIZE: '4', DATABASE_URL: url, ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(DB_|METRICS_|OTEL_|ANSWER_)/.test(k))) as Record<string, string> }
})
const run = () => load({ url: server.url, pid: server.pid, operation, targets: dataset[TARGET_SETS[operation]], connections: 50, seconds, database: 'bench_profile' })
await run()
const result = await run()
await server.stop()
process.stdout.write(`${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms, max RSS ${result.maxRssMb.toFixed(0)} MB, server CPU ${result.serverCpuMs?.toFixed(2)} ms, PostgreSQL ${result.backendCpuMs?.toFixed(2)} ms per request\n`)
const file = (await readdir(tmp)).find((f) => f.endsWith('.cpuprofile'))!
interface Node { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }
const profile = JSON.parse(await readFile(path.join(tmp, file), 'utf8')) as { nodes: Node[], samples: number[] }
const self = new Map<number, number>()
for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1)
const byFrame = new Map<string, number>()
const byFile = new Map<string, number>()
for (const node of profile.nodes) {
  const n = self.get(node.id) ?? 0
  const where = node.callFrame.url.replace(/^file:\/\//, '').replace(ROOT, '').replace(/.*node_modules\//, 'nm/')
  const key = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`
  byFrame.set(key, (byFrame.get(key) ?? 0) + n)
  const pkg = where.startsWith('nm/') ? where.split('/').slice(0, where.split('/')[1]!.startsWith('@') ? 3 : 2).join('/') : where || node.callFrame.functionName
  byFile.set(pkg, (byFile.get(pkg) ?? 0) + n)
}
const total = profile.samples.length
const top = (map: Map<string, number>, k: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, k).map(([key, n]) => `${(100 * n / total).toFixed(1).padStart(5)} %  ${key}`).join('\n')
process.stdout.write(`\nby function (self):\n${top(byFrame, 30)}\n\nby package or file:\n${top(byFile, 25)}\n\nprofile: ${path.join(tmp, file)}\n`)
