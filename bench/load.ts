// The production server as a child process, its memory sampled from /proc, and
// autocannon driving it with a random target per request.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import autocannon from 'autocannon'
import { request as httpGet } from 'undici'
import { EMBEDDED_THREAD_NAME } from '../src/db/embedded/thread-name.js'
import { launchServer, type ServerProcess } from '../test/launch.js'
import { httpRequest, PER_CONNECTION, randomRevision, type OperationName, type Target } from './operations.js'
import { monotonicUs } from './profile.js'

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

/**
 * How production starts the server: `npm run start:prod` (package.json), its
 * environment (`NAME=value` before `node`, which the image's ENV repeats) and its
 * node flags (which the image's CMD repeats; test/deploy.test.ts).
 */
const START_PROD: readonly string[] = (() => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }
  return (pkg.scripts['start:prod'] ?? '').split(/\s+/)
})()
const NODE_AT = START_PROD.indexOf('node')

/** The node flags production starts the server with. */
export const PRODUCTION_NODE_FLAGS: readonly string[] = NODE_AT < 0 ? [] : START_PROD.slice(NODE_AT + 1).filter((w) => w.startsWith('--'))

/** The environment production starts the server in, beyond its configuration. */
export const PRODUCTION_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  START_PROD.slice(0, Math.max(NODE_AT, 0)).map((word) => /^([A-Z_]+)=(.*)$/.exec(word)).filter((m) => m !== null).map((m) => [m[1]!, m[2]!]))

/**
 * Starts `node <production flags> <entry>` (the build) with only the given
 * configuration, its output in `logFile`, and waits for /health/ready:
 * test/launch.ts, which the tests use too.
 */
export async function startServer (options: { entry: string, env: Record<string, string>, logFile: string, nodeArgs?: string[] }): Promise<Server> {
  const server = await launchServer({ entry: [options.entry], env: { ...PRODUCTION_ENV, ...options.env }, logFile: options.logFile, nodeArgs: [...PRODUCTION_NODE_FLAGS, ...(options.nodeArgs ?? [])] })
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
 * The name and the user and system clock ticks in a /proc stat file (of a process,
 * or of one of its threads); null when it is gone. The name, in parentheses, may
 * hold spaces and parentheses: the fields come after its last one.
 */
function statTicks (file: string): { name: string, ticks: number } | null {
  try {
    const stat = readFileSync(file, 'utf8')
    const end = stat.lastIndexOf(')')
    const fields = stat.slice(end + 2).split(' ')
    return { name: stat.slice(stat.indexOf('(') + 1, end), ticks: Number(fields[11]) + Number(fields[12]) }
  } catch {
    return null
  }
}

/** User and system clock ticks a process has used (0 when it is gone). */
export function processTicks (pid: number | string): number {
  return statTicks(`/proc/${pid}/stat`)?.ticks ?? 0
}

/**
 * The CPU ticks of each PostgreSQL backend serving this database (its title names
 * it); `known` remembers which processes are backends, read once each.
 */
function backendTicksByPid (database: string, known = new Map<string, boolean>()): Map<string, number> {
  const ticks = new Map<string, number>()
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      let backend = known.get(pid)
      if (backend === undefined) {
        backend = readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${database} `)
        known.set(pid, backend)
      }
      if (backend) ticks.set(pid, processTicks(pid))
    } catch {}
  }
  return ticks
}

/** Clock ticks used by PostgreSQL backends serving this database. */
export function backendTicks (database: string): number {
  let ticks = 0
  for (const t of backendTicksByPid(database).values()) ticks += t
  return ticks
}

/**
 * CPU ticks of the backends serving a database over a span in which they may come
 * and go (pgbench opens its own connections and closes them at the end): sampled
 * every 100 ms, each backend counted from its first sample (0 for one born since
 * the start) to its last. A backend's last 100 ms before it exits can be missed.
 */
export class BackendCpu {
  private readonly known = new Map<string, boolean>()
  private readonly first: Map<string, number>
  private readonly last = new Map<string, number>()
  private readonly timer: NodeJS.Timeout

  constructor (private readonly database: string) {
    this.first = backendTicksByPid(database, this.known)
    this.timer = setInterval(() => this.sample(), 100)
  }

  private sample (): void {
    for (const [pid, ticks] of backendTicksByPid(this.database, this.known)) this.last.set(pid, ticks)
  }

  /** Stops sampling; the CPU ms the backends used since construction. */
  stop (): number {
    clearInterval(this.timer)
    this.sample()
    let ticks = 0
    for (const [pid, last] of this.last) ticks += last - (this.first.get(pid) ?? 0)
    return (1000 * ticks) / TICKS_PER_SECOND
  }
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
 * The server's main thread (the event loop) from /proc/<pid>/schedstat: nanoseconds
 * on a CPU, and nanoseconds runnable but waiting for one (preempted, or woken while
 * every CPU was busy); null where the kernel does not keep it.
 */
function mainThreadSchedule (pid: number): { onCpuNs: number, waitNs: number } | null {
  try {
    const [onCpu, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number)
    return Number.isFinite(onCpu) && Number.isFinite(wait) ? { onCpuNs: onCpu!, waitNs: wait! } : null
  } catch {
    return null
  }
}

/** What a thread of the server's process does, told by its id and its name. */
type ThreadKind = 'eventLoop' | 'database' | 'other'

/** The server's CPU ms per request by thread. */
export interface ThreadsCpu {
  /** The main thread: HTTP, the app, the driver, and the garbage collection V8 does on it. */
  eventLoop: number
  /** The embedded database's thread (src/db/embedded/thread-name.ts); 0 on PostgreSQL. */
  database: number
  /** Every other thread: V8's helpers (garbage collection in parallel, compiling) and libuv's pool. */
  other: number
}

/**
 * Clock ticks of each thread of a process (/proc/<pid>/task), with its kind; null
 * off Linux. A thread that ends between two readings loses its last ticks.
 */
function threadTicks (pid: number): Map<string, { kind: ThreadKind, ticks: number }> | null {
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return null
  }
  const threads = new Map<string, { kind: ThreadKind, ticks: number }>()
  for (const tid of tids) {
    const stat = statTicks(`/proc/${pid}/task/${tid}/stat`)
    if (stat === null) continue // it ended meanwhile
    const kind: ThreadKind = tid === String(pid) ? 'eventLoop' : stat.name === EMBEDDED_THREAD_NAME ? 'database' : 'other'
    threads.set(tid, { kind, ticks: stat.ticks })
  }
  return threads
}

/**
 * How much of the machine's CPU went to work that is not this run's: the bench
 * process (autocannon), the server and the database's backends are this run's.
 * Other work on a shared machine makes the figures lower and noisier.
 */
export class CpuMeter {
  private start: ReturnType<CpuMeter['snapshot']>

  /** `pids[1]` is the server's. */
  constructor (private readonly pids: number[], private readonly database: string | null) {
    this.start = this.snapshot()
  }

  private snapshot () {
    const server = processTicks(this.pids[1]!)
    const backends = this.database ? backendTicks(this.database) : 0
    const ours = processTicks(this.pids[0]!) + server + backends
    return { machine: machineTicks(), ours, server, backends, event: mainThreadSchedule(this.pids[1]!), threads: threadTicks(this.pids[1]!) }
  }

  /**
   * CPU milliseconds per request since construction: the server's process (user and
   * system time from /proc/<pid>/stat), the database's backends (null when the
   * database runs inside the server) and the load generator (`pids[0]`, the bench's
   * own process, where autocannon runs).
   */
  perRequest (requests: number): { serverMs: number | null, backendsMs: number | null, loadMs: number | null, eventLoopOnCpuMs: number | null, eventLoopWaitMs: number | null, threadsMs: ThreadsCpu | null } {
    if (requests <= 0) return { serverMs: null, backendsMs: null, loadMs: null, eventLoopOnCpuMs: null, eventLoopWaitMs: null, threadsMs: null }
    const end = this.snapshot()
    const ms = (ticks: number) => (1000 * ticks) / TICKS_PER_SECOND / requests
    const event = end.event !== null && this.start.event !== null ? { start: this.start.event, end: end.event } : null
    let threadsMs: ThreadsCpu | null = null
    if (end.threads !== null && this.start.threads !== null) {
      threadsMs = { eventLoop: 0, database: 0, other: 0 }
      for (const [tid, { kind, ticks }] of end.threads) threadsMs[kind] += ms(ticks - (this.start.threads.get(tid)?.ticks ?? 0))
    }
    return {
      serverMs: ms(end.server - this.start.server),
      backendsMs: this.database ? ms(end.backends - this.start.backends) : null,
      loadMs: ms((end.ours - end.server - end.backends) - (this.start.ours - this.start.server - this.start.backends)),
      eventLoopOnCpuMs: event === null ? null : (event.end.onCpuNs - event.start.onCpuNs) / 1e6 / requests,
      eventLoopWaitMs: event === null ? null : (event.end.waitNs - event.start.waitNs) / 1e6 / requests,
      threadsMs
    }
  }

  /** Percent of the machine's CPU time used by other processes since construction, or null off Linux. */
  othersPercent (): number | null {
    const end = this.snapshot()
    if (!end.machine || !this.start.machine) return null
    const total = end.machine.total - this.start.machine.total
    if (total <= 0) return null
    const others = (end.machine.busy - this.start.machine.busy) - (end.ours - this.start.ours)
    return Math.max(0, (100 * others) / total)
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
  statusCodes: Record<string, number>
  /** A few non-2xx bodies, to say what went wrong. */
  samples: string[]
  maxRssMb: number
  /** Share of the machine's CPU that other processes used during the run, in percent. */
  othersCpuPercent: number | null
  /** CPU ms per request of the server process and of the database's backends (null embedded). */
  serverCpuMs: number | null
  backendCpuMs: number | null
  /** CPU ms per request of the load generator (autocannon, in the bench's process). */
  loadCpuMs: number | null
  /** projects/get requests made before the run for the targets' current ETags (conditional runs). */
  tagReads: number
  /** When autocannon started and stopped, in µs of the monotonic clock (bench/profile.ts, monotonicUs): the run without the waits and reads before it. */
  startedUs: number
  endedUs: number
  /**
   * The server's main thread (its event loop), ms per request: on a CPU, and runnable
   * but waiting for one (/proc/<pid>/schedstat); null where the kernel does not say.
   */
  eventLoopOnCpuMs: number | null
  eventLoopWaitMs: number | null
  /** The server's CPU ms per request by thread (/proc/<pid>/task); null where the kernel does not say. */
  serverThreadsCpuMs: ThreadsCpu | null
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

/** The CPU ticks of every process, by pid. */
function allProcessTicks (): Map<string, number> {
  const ticks = new Map<string, number>()
  for (const pid of readdirSync('/proc')) if (/^\d+$/.test(pid)) ticks.set(pid, processTicks(pid))
  return ticks
}

/** The busiest processes since `before` (allProcessTicks): `pid command (ms)`. */
function busiest (before: Map<string, number>): string[] {
  return [...allProcessTicks()].map(([pid, ticks]) => ({ pid, ticks: ticks - (before.get(pid) ?? ticks) }))
    .filter((p) => p.ticks > 0).sort((a, b) => b.ticks - a.ticks).slice(0, 3)
    .map((p) => {
      let command = '?'
      try {
        // A kernel thread has no command line: its name, in brackets as ps shows it.
        command = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 60) ||
          `[${readFileSync(`/proc/${p.pid}/comm`, 'utf8').trim()}]`
      } catch {}
      return `${p.pid} ${command} (${ticksToMs(p.ticks).toFixed(0)} ms)`
    })
}

/**
 * Waits until the whole machine has been nearly idle (under a tenth of its CPU) for
 * 500 ms, at most 15 s: work that is none of the bench's (a service's own upkeep, the
 * kernel's) would otherwise land in the next run. Says how long it waited, and who
 * was busy, when that was more than a second.
 */
export async function quietMachine (): Promise<string | null> {
  const started = Date.now()
  let processes = allProcessTicks()
  let busy: string[] = []
  while (Date.now() - started < 15_000) {
    const before = machineTicks()
    await new Promise((resolve) => setTimeout(resolve, 500))
    const after = machineTicks()
    if (before === null || after === null || after.total === before.total) return null
    if ((after.busy - before.busy) / (after.total - before.total) < 0.1) break
    busy = busiest(processes)
    processes = allProcessTicks()
  }
  const waited = Date.now() - started
  return waited > 1000 ? `waited ${(waited / 1000).toFixed(1)} s for the machine to go quiet (busiest: ${busy.join('; ') || 'none found'})` : null
}

/** The CPU a server uses while nobody asks it anything, in ms a second (idleCpu). */
export interface IdleCpu {
  /** The median one-second window: its steady background work. */
  median: number
  /** The busiest one-second window. */
  max: number
  /** Over all the windows. */
  mean: number
}

/**
 * The CPU the server uses while nobody asks it anything, in ms a second: once it has
 * finished what the last run left (quiet), over `seconds` one-second windows. What
 * it does then is its own background work (the webhook workers' looks for jobs,
 * timers), and, once, the full collection V8 makes some seconds after allocation
 * stops (its memory reducer): a window that holds it shows as the busiest, and
 * the median stays the steady work's.
 */
export async function idleCpu (pid: number, seconds = 15): Promise<IdleCpu> {
  await quiet(pid)
  const windows: number[] = []
  let before = processTicks(pid)
  for (let i = 0; i < seconds; i++) {
    const started = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const after = processTicks(pid)
    windows.push((1000 * (after - before)) / TICKS_PER_SECOND / ((Date.now() - started) / 1000))
    before = after
  }
  const sorted = [...windows].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)]!, max: sorted[sorted.length - 1]!, mean: windows.reduce((a, b) => a + b, 0) / windows.length }
}

/** One autocannon run: each request picks a random target and a fresh value. */
export async function load (options: {
  url: string
  pid: number
  operation: OperationName
  targets: readonly Target[]
  connections: number
  seconds: number
  /** The database whose backends serve the server, when it is PostgreSQL. */
  database: string | null
}): Promise<LoadResult> {
  const { operation, targets, connections } = options
  const samples: string[] = []
  await quiet(options.pid)
  const waited = await quietMachine()
  if (waited !== null) process.stderr.write(`  ${waited}\n`)
  // Conditional requests: each project's last ETag, and never two requests on one project at once (operations.ts).
  const tags = PER_CONNECTION.has(operation) ? await currentTags(options.url, targets) : null
  if (tags && targets.length < 2 * connections) throw new Error(`${operation} needs two projects per connection: ${targets.length} for ${connections}`)
  const busy = new Set<Target>()
  const sampler = new RssSampler(options.pid).start()
  const cpu = new CpuMeter([process.pid, options.pid], options.database)
  let result: autocannon.Result
  const startedUs = monotonicUs()
  let endedUs = startedUs
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
    endedUs = monotonicUs()
    sampler.stop()
  }
  const { serverMs, backendsMs, loadMs, eventLoopOnCpuMs, eventLoopWaitMs, threadsMs } = cpu.perRequest(result.requests.total)
  const statusCodes: Record<string, number> = {}
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0
  return {
    operation,
    connections: options.connections,
    seconds: result.duration,
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    samples,
    maxRssMb: sampler.max,
    othersCpuPercent: cpu.othersPercent(),
    serverCpuMs: serverMs,
    backendCpuMs: backendsMs,
    loadCpuMs: loadMs,
    tagReads: tags === null ? 0 : targets.length,
    startedUs,
    endedUs,
    eventLoopOnCpuMs,
    eventLoopWaitMs,
    serverThreadsCpuMs: threadsMs
  }
}
