// The server's own clock on each request (bench/timings-preload.mjs, loaded into a
// server of its own with `node --import`), cut into the bench's runs: how long a
// request spent in the server, how much of that was waiting for one of the pool's
// connections, and how much was its statement's round trip to the database.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Window } from './profile.js'
import { percentile } from './pgbench.js'

/** The module to load into the server (`node --import <this>`), and the variable naming the file it writes. */
export const TIMINGS_PRELOAD = fileURLToPath(new URL('./timings-preload.mjs', import.meta.url))
export const TIMINGS_FILE_VARIABLE = 'BENCH_TIMINGS_FILE'

/** What the preload writes: per kind, [end in µs of the monotonic clock, duration in ms]. */
export interface Recorded {
  request: Array<[number, number]>
  pool: Array<[number, number]>
  statement: Array<[number, number]>
}

export interface Timing {
  count: number
  meanMs: number
  p50Ms: number
  p99Ms: number
}

export interface TimedRun {
  label: string
  /** The request in the server, from its headers parsed to its response handed to the socket. */
  request: Timing | null
  /** Waiting for one of the pool's connections. */
  pool: Timing | null
  /** A statement's round trip, from sending it to its result reaching the code that waits for it. */
  statement: Timing | null
}

/** Count, mean and percentiles of `values` (ms); null for none. */
export function summarize (values: readonly number[]): Timing | null {
  if (values.length === 0) return null
  return {
    count: values.length,
    meanMs: values.reduce((a, b) => a + b, 0) / values.length,
    p50Ms: percentile(values, 0.5)!,
    p99Ms: percentile(values, 0.99)!
  }
}

/** The recorded timings that ended within each window, summarized. */
export function timedRuns (recorded: Recorded, windows: readonly Window[]): TimedRun[] {
  const within = (kind: keyof Recorded, w: Window) => recorded[kind].filter(([end]) => end >= w.startUs && end <= w.endUs).map(([, ms]) => ms)
  return windows.map((w) => ({ label: w.label, request: summarize(within('request', w)), pool: summarize(within('pool', w)), statement: summarize(within('statement', w)) }))
}

/** The file the preload wrote as the server exited, cut into `windows`. */
export function readTimings (file: string, windows: readonly Window[]): TimedRun[] {
  return timedRuns(JSON.parse(readFileSync(file, 'utf8')) as Recorded, windows)
}
