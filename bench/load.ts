// The production server as a child process, its memory sampled from /proc, and
// autocannon driving it with a random target per request.
import { readdirSync, readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { launchServer, type ServerProcess } from '../test/launch.js'
import { httpRequest, randomRevision, type OperationName, type Target } from './operations.js'

export interface Server extends ServerProcess {
  logFile: string
  /** RSS once ready, before any load. */
  idleRssMb: number
}

/**
 * Starts `node <entry>` (the build) with only the given configuration, its output
 * in `logFile`, and waits for /health/ready: test/launch.ts, which the tests use too.
 */
export async function startServer (options: { entry: string, env: Record<string, string>, logFile: string, nodeArgs?: string[] }): Promise<Server> {
  const server = await launchServer({ entry: [options.entry], env: options.env, logFile: options.logFile, nodeArgs: options.nodeArgs })
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

function processTicks (pid: number | string): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** Clock ticks used by PostgreSQL backends serving this database (their title names it). */
function backendTicks (database: string): number {
  let ticks = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${database} `)) ticks += processTicks(pid)
    } catch {}
  }
  return ticks
}

/**
 * How much of the machine's CPU went to work that is not this run's: the bench
 * process (autocannon), the server and the database's backends are this run's.
 * Other work on a shared machine makes the figures lower and noisier.
 */
export class CpuMeter {
  private start: { machine: { busy: number, total: number } | null, ours: number }

  constructor (private readonly pids: number[], private readonly database: string | null) {
    this.start = this.snapshot()
  }

  private snapshot () {
    const ours = this.pids.reduce((sum, pid) => sum + processTicks(pid), 0) + (this.database ? backendTicks(this.database) : 0)
    return { machine: machineTicks(), ours }
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
  const { operation, targets } = options
  const samples: string[] = []
  const sampler = new RssSampler(options.pid).start()
  const cpu = new CpuMeter([process.pid, options.pid], options.database)
  let result: autocannon.Result
  try {
    result = await autocannon({
      url: options.url,
      connections: options.connections,
      duration: options.seconds,
      timeout: 10,
      requests: [{
        setupRequest: (request) => {
          const target = targets[Math.floor(Math.random() * targets.length)]!
          const next = httpRequest(operation, target, randomRevision())
          request.method = next.method
          request.path = next.path
          request.headers = next.headers
          request.body = next.body ?? ''
          return request
        },
        onResponse: (status, body) => {
          if ((status < 200 || status > 299) && samples.length < 5) samples.push(`${status} ${body.slice(0, 300)}`)
        }
      }]
    })
  } finally {
    sampler.stop()
  }
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
    othersCpuPercent: cpu.othersPercent()
  }
}
