// Where the server's CPU goes in each run: a V8 CPU profile of the server (node
// --cpu-prof), cut into the runs by their start and end on the machine's monotonic
// clock (V8's profile and process.hrtime share it), and each sample counted under
// the part of the stack it fell in.
import { readFileSync } from 'node:fs'

/** A run's span on the monotonic clock, in microseconds. */
export interface Window {
  label: string
  startUs: number
  endUs: number
}

/** The parts a sample is counted under, in the order the report shows them. */
export const PARTS = ['app', 'fastify and compiled serializers', 'database driver', 'other packages', 'node (HTTP, streams, timers)', 'socket I/O (system calls)', 'JSON and other built-ins', 'garbage collection', 'idle'] as const
export type Part = typeof PARTS[number]

export interface ProfiledRun {
  label: string
  /** Sampled milliseconds in the window, idle included. */
  totalMs: number
  /** Share of the window's samples per part, in percent. */
  parts: Record<Part, number>
  /** The functions with the most samples of their own (not idle), with their share in percent. */
  top: Array<{ name: string, percent: number }>
}

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame }
interface CpuProfile { nodes: ProfileNode[], startTime: number, samples: number[], timeDeltas: number[] }

// Packages by the part they serve.
const FASTIFY = /\/node_modules\/(fastify|@fastify\/[^/]+|fast-json-stringify|find-my-way|avvio|light-my-request|secure-json-parse|fast-querystring|fast-uri|ajv|helmet|pino|sonic-boom)\//
const DRIVER = /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pg-connection-string|postgres-[^/]+|kysely)\//
// Native functions that are the system calls of sockets, as V8 names them.
const SOCKET_CALLS = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'onStreamRead', 'shutdown', 'close'])

function partOf (frame: CallFrame): Part {
  const { functionName: name, url } = frame
  if (name === '(idle)') return 'idle'
  if (name === '(garbage collector)') return 'garbage collection'
  if (url === '') {
    if (SOCKET_CALLS.has(name)) return 'socket I/O (system calls)'
    // Code compiled at run time has no file: fast-json-stringify's serializers, Ajv's validators.
    if (/^anonymous\d*$/.test(name)) return 'fastify and compiled serializers'
    return 'JSON and other built-ins'
  }
  if (url.startsWith('node:')) return 'node (HTTP, streams, timers)'
  if (FASTIFY.test(url)) return 'fastify and compiled serializers'
  if (DRIVER.test(url)) return 'database driver'
  if (url.includes('/node_modules/')) return 'other packages'
  return 'app'
}

function shortName (frame: CallFrame): string {
  const file = frame.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, '')
  return `${frame.functionName || '(anonymous)'}${file === '' ? '' : ` ${file}:${frame.lineNumber + 1}`}`
}

/** The profile in `file`, one ProfiledRun per window that has samples. */
export function profileRuns (file: string, windows: readonly Window[], topCount = 5): ProfiledRun[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]))
  const runs = windows.map((w) => ({ w, total: 0, parts: new Map<Part, number>(), fns: new Map<string, number>() }))
  let at = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    const run = runs.find((r) => at >= r.w.startUs && at < r.w.endUs)
    if (run === undefined) continue
    const frame = frames.get(profile.samples[i]!)!
    const part = partOf(frame)
    run.total += delta
    run.parts.set(part, (run.parts.get(part) ?? 0) + delta)
    if (part !== 'idle') {
      const name = shortName(frame)
      run.fns.set(name, (run.fns.get(name) ?? 0) + delta)
    }
  }
  return runs.filter((r) => r.total > 0).map(({ w, total, parts, fns }) => ({
    label: w.label,
    totalMs: total / 1000,
    parts: Object.fromEntries(PARTS.map((p) => [p, (100 * (parts.get(p) ?? 0)) / total])) as Record<Part, number>,
    top: [...fns].sort((a, b) => b[1] - a[1]).slice(0, topCount).map(([name, t]) => ({ name, percent: (100 * t) / total }))
  }))
}

/** Now on the monotonic clock the profile uses, in microseconds. */
export function monotonicUs (): number {
  return Number(process.hrtime.bigint() / 1000n)
}
