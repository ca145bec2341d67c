// The production server as a child process, its memory and CPU read from /proc,
// and autocannon driving it with a random target per request.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import autocannon from 'autocannon'
import { request as httpGet } from 'undici'
import { launchServer, type ServerProcess } from '../test/launch.js'
import { httpRequest, PER_CONNECTION, randomRevision, type OperationName, type Target } from './operations.js'

// autocannon appends every body it reads to a string (its PipelinedRequestsQueue's
// addBody), decoding it from UTF-8 chunk by chunk: for a page of projects, most of a
// megabyte, that cost the load generator more CPU than the server spent writing the
// page, on the cores the server and PostgreSQL share. The bench reads only the
// bodies of failures (load's samples), so only those are kept; a success's bytes are
// still received, parsed and counted.
export const KEEPS_BODIES = process.env.BENCH_KEEP_BODIES !== undefined
if (!KEEPS_BODIES) {
  const Queue = createRequire(import.meta.url)('autocannon/lib/pipelinedRequestsQueue.js') as {
    prototype: { peek: () => { body: string, headers: { statusCode?: number } } | undefined, addBody: (data: Buffer) => void }
  }
  Queue.prototype.addBody = function (data) {
    const request = this.peek()
    const status = request?.headers.statusCode
    if (request !== undefined && (status === undefined || status < 200 || status > 299)) request.body += data
  }
}

export interface Server extends ServerProcess {
  logFile: string
  /** RSS once ready, before any load. */
  idleRssMb: number
}

/** How production starts a tree's server: `npm run start:prod`'s environment and node flags. */
export interface ProductionStart {
  /** The node flags (the image's CMD repeats them; test/deploy.test.ts). */
  nodeFlags: string[]
  /** `NAME=value` before `node`, beyond the configuration (the image's ENV repeats them). */
  env: Record<string, string>
}

/** `npm run start:prod` of the tree at `root`, read from its package.json. */
export function productionStart (root: string): ProductionStart {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const words = (pkg.scripts['start:prod'] ?? '').split(/\s+/)
  const node = words.indexOf('node')
  return {
    nodeFlags: node < 0 ? [] : words.slice(node + 1).filter((w) => w.startsWith('--')),
    env: Object.fromEntries(words.slice(0, Math.max(node, 0)).map((w) => /^([A-Z_]+)=(.*)$/.exec(w)).filter((m) => m !== null).map((m) => [m[1]!, m[2]!]))
  }
}

/**
 * Starts `node <production flags> <entry>` (a tree's build) with only the given
 * configuration, its output in `logFile`, and waits for /health/ready:
 * test/launch.ts, which the tests use too.
 */
export async function startServer (options: { entry: string, start: ProductionStart, env: Record<string, string>, logFile: string, nodeArgs?: string[] }): Promise<Server> {
  const server = await launchServer({
    entry: [options.entry],
    env: { ...options.start.env, ...options.env },
    logFile: options.logFile,
    nodeArgs: [...options.start.nodeFlags, ...(options.nodeArgs ?? [])]
  })
  return { ...server, logFile: options.logFile, idleRssMb: rssMb(server.pid) ?? 0 }
}

/** The process's resident memory in MB, from VmRSS; null once it is gone. */
export function rssMb (pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : null
  } catch {
    return null
  }
}

/** Samples a process's RSS every 200 ms and keeps the largest value. */
export class RssSampler {
  max = 0
  private timer: NodeJS.Timeout | undefined

  constructor (private readonly pid: number) {}

  start (): this {
    this.sample()
    this.timer = setInterval(() => this.sample(), 200)
    return this
  }

  private sample (): void {
    const mb = rssMb(this.pid)
    if (mb !== null && mb > this.max) this.max = mb
  }

  stop (): number {
    clearInterval(this.timer)
    this.sample()
    return this.max
  }
}

/** Busy and total CPU time of the whole machine, in clock ticks, from /proc/stat. */
function machineTicks (): { busy: number, total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    const total = fields.reduce((a, b) => a + b, 0)
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
    return { busy: total - idle, total }
  } catch {
    return null
  }
}

/**
 * User and system clock ticks a process has used (0 when it is gone). Its name, in
 * parentheses in /proc/<pid>/stat, may hold spaces and parentheses: the fields come
 * after its last one.
 */
export function processTicks (pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** Clock ticks used by the PostgreSQL backends serving this database (their titles name it). */
export function backendTicks (database: string): number {
  let ticks = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${database} `)) ticks += processTicks(pid)
    } catch {}
  }
  return ticks
}

/** Clock ticks per second of /proc's figures (USER_HZ). */
const TICKS_PER_SECOND = (() => {
  const hz = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout)
  return Number.isFinite(hz) && hz > 0 ? hz : 100
})()

/** Clock ticks of /proc's figures as milliseconds. */
export function ticksToMs (ticks: number): number {
  return (1000 * ticks) / TICKS_PER_SECOND
}

/**
 * CPU per request of the server and of its database's backends, and how much of the
 * machine's CPU went to work that is not the run's: the bench's own process
 * (autocannon), the server, the backends and `also` (the delaying proxy) are the
 * run's. Other work on a shared machine makes the figures lower and noisier; the
 * A/B's turns alternate so that it weighs on both sides.
 */
export class CpuMeter {
  private readonly start: ReturnType<CpuMeter['snapshot']>

  constructor (private readonly server: number, private readonly database: string, private readonly also: readonly number[] = []) {
    this.start = this.snapshot()
  }

  private snapshot () {
    const server = processTicks(this.server)
    const backends = backendTicks(this.database)
    const ours = processTicks(process.pid) + server + backends + this.also.reduce((sum, pid) => sum + processTicks(pid), 0)
    return { machine: machineTicks(), ours, server, backends }
  }

  /** Since construction: CPU ms per request of the server and of the backends, and the share of the machine others used (percent; null off Linux). */
  stop (requests: number): { serverMs: number | null, backendMs: number | null, othersPercent: number | null } {
    const end = this.snapshot()
    const perRequest = (ticks: number) => requests > 0 ? ticksToMs(ticks) / requests : null
    let othersPercent: number | null = null
    if (end.machine !== null && this.start.machine !== null && end.machine.total > this.start.machine.total) {
      const others = (end.machine.busy - this.start.machine.busy) - (end.ours - this.start.ours)
      othersPercent = Math.max(0, (100 * others) / (end.machine.total - this.start.machine.total))
    }
    return { serverMs: perRequest(end.server - this.start.server), backendMs: perRequest(end.backends - this.start.backends), othersPercent }
  }
}

export interface LoadResult {
  operation: OperationName
  connections: number
  seconds: number
  requests: number
  rps: number
  p50: number
  p99: number
  non2xx: number
  errors: number
  timeouts: number
  /** A few non-2xx bodies, to say what went wrong. */
  samples: string[]
  /** The server's resident memory at most during the run. */
  maxRssMb: number
  /** CPU ms per request of the server process and of its database's backends. */
  serverCpuMs: number | null
  backendCpuMs: number | null
  /** Share of the machine's CPU that other processes used during the run, in percent. */
  othersCpuPercent: number | null
}

/** The ETag each target's project has now, as its champion reads it (projects/get, ten at a time). */
async function currentTags (url: string, targets: readonly Target[]): Promise<Map<string, string>> {
  const tags = new Map<string, string>()
  let next = 0
  const worker = async () => {
    while (next < targets.length) {
      const target = targets[next++]!
      const r = httpRequest('get', target, 0)
      const response = await httpGet(`${url}${r.path}`, { headers: r.headers })
      await response.body.dump()
      const etag = response.headers.etag
      if (response.statusCode !== 200 || typeof etag !== 'string') throw new Error(`projects/get answered ${response.statusCode} without an ETag`)
      tags.set(target.publicId, etag)
    }
  }
  await Promise.all(Array.from({ length: 10 }, worker))
  return tags
}

/**
 * Waits until the server (or every process of `pids`) has been idle for 300 ms (at
 * most 20 s): autocannon drops its connections at the end of a run, but the server
 * still finishes the requests they had sent, which would otherwise weigh on the
 * next run's first seconds.
 */
export async function quiet (pids: number | readonly number[]): Promise<void> {
  const all = typeof pids === 'number' ? [pids] : pids
  const ticks = () => all.reduce((sum, pid) => sum + processTicks(pid), 0)
  const deadline = Date.now() + 20_000
  let last = ticks()
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 300))
    const now = ticks()
    if (now - last <= TICKS_PER_SECOND * 0.3 * 0.05 * all.length) return
    last = now
  }
}

/** One autocannon run: each request picks a random target and a fresh value. */
export async function load (options: {
  url: string
  pid: number
  operation: OperationName
  targets: readonly Target[]
  connections: number
  seconds: number
  /** The database whose backends serve the server. */
  database: string
  /** Other processes that serve the run (the delaying proxy): their CPU is not another's. */
  also?: readonly number[]
}): Promise<LoadResult> {
  const { operation, targets, connections } = options
  const samples: string[] = []
  await quiet(options.pid)
  // Conditional requests: each project's last ETag, and never two requests on one project at once (operations.ts).
  const tags = PER_CONNECTION.has(operation) ? await currentTags(options.url, targets) : null
  if (tags && targets.length < 2 * connections) throw new Error(`${operation} needs two projects per connection: ${targets.length} for ${connections}`)
  const busy = new Set<Target>()
  const sampler = new RssSampler(options.pid).start()
  const cpu = new CpuMeter(options.pid, options.database, options.also)
  let result: autocannon.Result
  try {
    result = await autocannon({
      url: options.url,
      connections,
      duration: options.seconds,
      timeout: 10,
      requests: [{
        // The context is the request's own: autocannon hands the same object to its onResponse.
        setupRequest: (request, context) => {
          let target = targets[Math.floor(Math.random() * targets.length)]!
          if (tags) {
            while (busy.has(target)) target = targets[Math.floor(Math.random() * targets.length)]!
            busy.add(target)
            const own = context as { target?: Target }
            own.target = target
          }
          const next = httpRequest(operation, target, randomRevision(), tags?.get(target.publicId))
          request.method = next.method
          request.path = next.path
          request.headers = next.headers
          request.body = next.body ?? ''
          return request
        },
        onResponse: (status, body, context, headers) => {
          if ((status < 200 || status > 299) && samples.length < 5) samples.push(`${status} ${body.slice(0, 300)}`)
          const target = (context as { target?: Target }).target
          // A 412 carries the current tag too: the next request recovers.
          const etag = (headers as Record<string, string> | undefined)?.etag
          if (tags && target) {
            if (typeof etag === 'string') tags.set(target.publicId, etag)
            busy.delete(target)
          }
        }
      }]
    })
  } finally {
    sampler.stop()
  }
  const { serverMs, backendMs, othersPercent } = cpu.stop(result.requests.total)
  return {
    operation,
    connections,
    seconds: result.duration,
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    samples,
    maxRssMb: sampler.max,
    serverCpuMs: serverMs,
    backendCpuMs: backendMs,
    othersCpuPercent: othersPercent
  }
}
