// Beside Redmine: a project rename against a Redmine on the same machine and the
// same PostgreSQL server, at the same connection counts and for as long as this
// server's, the two taking turns (this server, Redmine, this server, Redmine) so
// that a slow spell of the machine weighs on both. Redmine's rename is
// `PUT /projects/:id.json` with `{"project":{"name":…}}`, answered 204 with no
// body; this server's is projects/update_name, which answers the whole project.
// Before the recorded turns each side has one unrecorded turn at the highest
// connection count: a server's CPU per rename still falls over its first turns
// (JIT, the pool, PostgreSQL's pages), and so may Redmine's. Before each turn of
// either side both databases are vacuumed, as autovacuum would keep them: each
// Redmine rename leaves hundreds of dead rows in its projects table (the nested
// set's renumbering) that every later rename would scan.
//
// Off unless BENCH_REDMINE_URL and BENCH_REDMINE_KEY are set; bench/redmine/setup.sh
// installs one from Debian's packages (puma, 2 workers, on port 3000) with 1,000
// projects and prints both values.
//
// Options (environment):
//   BENCH_REDMINE_URL       Redmine's address, e.g. http://127.0.0.1:3000
//   BENCH_REDMINE_KEY       an administrator's API key (REST API enabled)
//   BENCH_REDMINE_DATABASE  the database Redmine uses on the same PostgreSQL server (default redmine),
//                           for the CPU of its backends and the VACUUM before each turn
//   BENCH_REDMINE_ROUNDS    turns each side takes at each connection count (default 3)
import { readdirSync, readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { request } from 'undici'
import { backendTicks, load, processTicks, quiet, ticksToMs, type LoadResult, type Server } from './load.js'
import { NAME_PREFIX, newName, type Target } from './operations.js'
import { positive } from './options.js'
import { vacuum, withDatabase } from './postgres.js'

export interface RedmineOptions {
  url: string
  key: string
  database: string
  rounds: number
}

/** The side-by-side's settings, or null when BENCH_REDMINE_URL or BENCH_REDMINE_KEY is missing. */
export function redmineOptions (): RedmineOptions | null {
  const env = process.env
  const url = env.BENCH_REDMINE_URL?.replace(/\/+$/, '')
  const key = env.BENCH_REDMINE_KEY
  if (url === undefined || url === '' || key === undefined || key === '') return null
  return { url, key, database: env.BENCH_REDMINE_DATABASE ?? 'redmine', rounds: Math.round(positive('BENCH_REDMINE_ROUNDS', 3)) }
}

/** One autocannon run of Redmine's rename: the figures a run of this server has, but for its CPU. */
export interface RedmineRun extends Pick<LoadResult, 'connections' | 'requests' | 'rps' | 'p50' | 'p99' | 'non2xx' | 'errors' | 'timeouts'> {
  /** CPU ms per request of Redmine's processes (puma's master and workers) and of its database's backends; null when not found. */
  appCpuMs: number | null
  backendCpuMs: number | null
}

export interface RedmineFigures {
  url: string
  /** Redmine's projects the renames pick from. */
  projects: number
  /** Redmine's processes whose CPU was counted (their command lines, shortened). */
  processes: string[]
  rounds: number
  seconds: number
  /** At each connection count, this server's runs and Redmine's, in the order they took turns. */
  runs: Array<{ connections: number, ours: LoadResult[], redmine: RedmineRun[] }>
}

const headers = (options: RedmineOptions) => ({ 'content-type': 'application/json', 'x-redmine-api-key': options.key })

/** Every project's id, a page of 100 at a time (GET /projects.json). */
export async function redmineProjectIds (options: RedmineOptions): Promise<number[]> {
  const ids: number[] = []
  for (let offset = 0; ; offset += 100) {
    const response = await request(`${options.url}/projects.json?limit=100&offset=${offset}`, { headers: headers(options) })
    if (response.statusCode !== 200) {
      await response.body.dump()
      throw new Error(`GET /projects.json answered ${response.statusCode}`)
    }
    const page = await response.body.json() as { projects: Array<{ id: number }>, total_count: number }
    ids.push(...page.projects.map((p) => p.id))
    if (page.projects.length === 0 || ids.length >= page.total_count) return ids
  }
}

/** One rename through the API, then a read that shows it: the load would otherwise measure failures. */
export async function checkRedmine (options: RedmineOptions, id: number): Promise<void> {
  const name = `${NAME_PREFIX}${Date.now()}`
  const put = await request(`${options.url}/projects/${id}.json`, { method: 'PUT', headers: headers(options), body: JSON.stringify({ project: { name } }) })
  await put.body.dump()
  if (put.statusCode !== 204 && put.statusCode !== 200) throw new Error(`PUT /projects/${id}.json answered ${put.statusCode}`)
  const get = await request(`${options.url}/projects/${id}.json`, { headers: headers(options) })
  const read = await get.body.json() as { project?: { name?: string } }
  if (read.project?.name !== name) throw new Error(`GET /projects/${id}.json does not show the new name`)
}

/** Redmine's application processes: puma's master and workers, by the titles puma gives them. */
export function redmineProcesses (): Array<{ pid: number, command: string }> {
  const found: Array<{ pid: number, command: string }> = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
      if (/^puma\b/.test(command)) found.push({ pid: Number(entry), command: command.slice(0, 60) })
    } catch {}
  }
  return found
}

/** Redmine's rename at `connections` for `seconds`, each request a random project and a new name. */
export async function redmineRename (options: RedmineOptions, ids: readonly number[], connections: number, seconds: number): Promise<RedmineRun> {
  const pids = redmineProcesses().map((p) => p.pid)
  const ticks = () => ({ app: pids.reduce((sum, pid) => sum + processTicks(pid), 0), backends: backendTicks(options.database) })
  const before = ticks()
  let revision = 0
  const result = await autocannon({
    url: options.url,
    connections,
    duration: seconds,
    // Redmine at 50 connections answers some requests only after seconds.
    timeout: 30,
    requests: [{
      setupRequest: (next) => {
        const id = ids[Math.floor(Math.random() * ids.length)]!
        next.method = 'PUT'
        next.path = `/projects/${id}.json`
        next.headers = headers(options)
        next.body = JSON.stringify({ project: { name: newName(++revision) } })
        return next
      }
    }]
  })
  const after = ticks()
  const requests = result.requests.total
  return {
    connections,
    requests,
    rps: requests / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    appCpuMs: pids.length === 0 || requests === 0 ? null : ticksToMs(after.app - before.app) / requests,
    backendCpuMs: requests === 0 ? null : ticksToMs(after.backends - before.backends) / requests
  }
}

/**
 * This server's renames and Redmine's in turns at each connection count, after one
 * unrecorded turn a side at the highest: `server` on the database `database` of the
 * PostgreSQL server at `url` (Redmine's database is on the same one).
 */
export async function redmineSideBySide (options: RedmineOptions, ours: {
  server: Server
  targets: readonly Target[]
  url: string
  database: string
  connections: readonly number[]
  seconds: number
  say: (line: string) => void
}): Promise<RedmineFigures> {
  const { server, targets, database, seconds, say } = ours
  const ids = await redmineProjectIds(options)
  if (ids.length === 0) throw new Error('it has no project')
  await checkRedmine(options, ids[0]!)
  const processes = redmineProcesses()
  say(`Redmine at ${options.url}: ${ids.length} projects, ${processes.length} puma processes`)
  const pumas = processes.map((p) => p.pid)
  // Before each turn of either side: the other side quiet, both databases vacuumed.
  const settle = async (others: number | readonly number[]) => {
    await quiet(others)
    await vacuum(withDatabase(ours.url, database))
    await vacuum(withDatabase(ours.url, options.database)).catch((error: Error) => { say(`VACUUM of Redmine's database failed: ${error.message}`) })
  }
  const rename = async (connections: number) => {
    await settle(pumas)
    return await load({ url: server.url, pid: server.pid, operation: 'update_name', targets, connections, seconds, database })
  }
  const theirs = async (connections: number) => {
    await settle(server.pid)
    return await redmineRename(options, ids, connections, seconds)
  }
  const high = Math.max(...ours.connections)
  say(`beside Redmine: warm-up turns at ${high} connections, ${seconds} s a side`)
  await rename(high)
  await theirs(high)
  const runs: RedmineFigures['runs'] = []
  for (const connections of ours.connections) {
    const run = { connections, ours: [] as LoadResult[], redmine: [] as RedmineRun[] }
    for (let round = 1; round <= options.rounds; round++) {
      const o = await rename(connections)
      run.ours.push(o)
      const r = await theirs(connections)
      run.redmine.push(r)
      say(`beside Redmine, turn ${round} at ${connections} connections: this server ${o.rps.toFixed(0)} req/s (p99 ${o.p99} ms), ` +
        `Redmine ${r.rps.toFixed(1)} req/s (p99 ${r.p99} ms)${r.non2xx + r.errors + r.timeouts > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts` : ''}`)
    }
    runs.push(run)
  }
  await quiet(pumas)
  return { url: options.url, projects: ids.length, processes: processes.map((p) => p.command), rounds: options.rounds, seconds, runs }
}

/** The mean of this server's and of Redmine's req/s at each connection count, and their ratio. */
export function redmineRatios (figures: RedmineFigures): Array<{ connections: number, ours: number, redmine: number, ratio: number }> {
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length
  return figures.runs.map(({ connections, ours, redmine }) => {
    const o = mean(ours.map((r) => r.rps))
    const r = mean(redmine.map((x) => x.rps))
    return { connections, ours: o, redmine: r, ratio: o / r }
  })
}
