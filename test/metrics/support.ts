// The metrics side of the tests: a scrape of the metrics server, and a strict
// reader of Prometheus's text format (version 0.0.4) that fails on anything
// `promtool check metrics` would refuse to parse: a line outside the grammar, a
// sample before its family's HELP and TYPE, a family declared twice or split,
// a series given twice, a histogram whose buckets are not cumulative, and what its
// lint refuses: a counter not named *_total, or anything else named so.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createMetricsServer } from '../../src/metrics/server.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface Sample { name: string, labels: Record<string, string>, value: number }
export interface Family { name: string, type: string, help: string, samples: Sample[] }

/** The metrics server on a free loopback port, closed at the test's end; its base URL. */
export async function metricsUrl (t: Teardown): Promise<string> {
  const server: Server = createMetricsServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** GET /metrics: its text, parsed strictly (throws on a format error). */
export async function scrape (url: string): Promise<{ text: string, families: Map<string, Family>, contentType: string }> {
  const response = await fetch(`${url}/metrics`)
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`)
  const text = await response.text()
  return { text, families: parseExposition(text), contentType: response.headers.get('content-type') ?? '' }
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"'
// Go's strconv.ParseFloat, which Prometheus and promtool read values with, takes Inf and NaN in any case.
const VALUE = '(?:[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?[Ii][Nn][Ff]|[Nn][Aa][Nn])'
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (${VALUE})(?: -?[0-9]+)?$`)
const HELP = new RegExp(`^# HELP (${NAME}) (.*)$`)
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`)
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/g

const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'], counter: [''], gauge: [''], untyped: [''] }

function familyOf (families: Map<string, Family>, name: string): Family | undefined {
  for (const family of families.values()) {
    if (SUFFIXES[family.type]!.some((suffix) => `${family.name}${suffix}` === name)) return family
  }
  return undefined
}

/** Checks that every histogram's buckets are cumulative and end in +Inf = _count. */
function checkHistogram (family: Family): void {
  const series = new Map<string, Sample[]>()
  for (const sample of family.samples.filter((s) => s.name.endsWith('_bucket'))) {
    const { le, ...rest } = sample.labels
    if (le === undefined) throw new Error(`${family.name}: a bucket without le`)
    const key = JSON.stringify(rest)
    series.set(key, [...(series.get(key) ?? []), sample])
  }
  for (const [key, buckets] of series) {
    for (let i = 1; i < buckets.length; i++) {
      if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${family.name}${key}: buckets are not cumulative`)
    }
    const last = buckets.at(-1)!
    if (last.labels.le !== '+Inf') throw new Error(`${family.name}${key}: the last bucket is not +Inf`)
    const count = family.samples.find((s) => s.name === `${family.name}_count` && JSON.stringify(s.labels) === key)
    if (count?.value !== last.value) throw new Error(`${family.name}${key}: _count is not the +Inf bucket`)
  }
}

/** The families of a text exposition; throws on the first line or family that breaks the format. */
export function parseExposition (text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline')
  const families = new Map<string, Family>()
  const helps = new Map<string, string>()
  const seen = new Set<string>()
  let current: Family | undefined
  for (const [index, line] of text.slice(0, -1).split('\n').entries()) {
    const where = `line ${index + 1}: ${JSON.stringify(line)}`
    const help = HELP.exec(line)
    const type = TYPE.exec(line)
    if (line === '') continue // blank lines are allowed between families
    if (help !== null) {
      if (helps.has(help[1]!) || families.has(help[1]!)) throw new Error(`${where}: a second HELP, or HELP after TYPE`)
      helps.set(help[1]!, help[2]!)
    } else if (type !== null) {
      const name = type[1]!
      if (families.has(name)) throw new Error(`${where}: a family declared twice`)
      if (!helps.has(name)) throw new Error(`${where}: TYPE without HELP before it`)
      current = { name, type: type[2]!, help: helps.get(name)!, samples: [] }
      families.set(name, current)
    } else if (line.startsWith('#')) {
      throw new Error(`${where}: not a HELP, TYPE or sample line`)
    } else {
      const sample = SAMPLE.exec(line)
      if (sample === null) throw new Error(`${where}: not a sample line`)
      if (current === undefined || familyOf(new Map([[current.name, current]]), sample[1]!) === undefined) {
        throw new Error(`${where}: a sample outside its family (or of a family without HELP and TYPE)`)
      }
      const labels: Record<string, string> = {}
      for (const [, name, value] of (sample[2] ?? '').matchAll(LABEL_PAIR)) {
        if (name! in labels) throw new Error(`${where}: label ${name} twice`)
        labels[name!] = value!
      }
      const key = `${sample[1]}${JSON.stringify(Object.entries(labels).sort())}`
      if (seen.has(key)) throw new Error(`${where}: a series given twice`)
      seen.add(key)
      current.samples.push({ name: sample[1]!, labels, value: Number(sample[3]!.replace(/inf/i, 'Infinity')) })
    }
  }
  for (const name of helps.keys()) if (!families.has(name)) throw new Error(`${name}: HELP without TYPE`)
  for (const family of families.values()) {
    if (family.type === 'histogram') checkHistogram(family)
    // promtool's lint: only a counter may be named *_total, and a counter must be.
    if ((family.type === 'counter') !== family.name.endsWith('_total')) throw new Error(`${family.name}: a ${family.type} named so`)
  }
  return families
}

/** The value of the one sample named `name` whose labels include `labels`; 0 when there is none. */
export function valueOf (families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = familyOf(families, name)
  const matching = (family?.samples ?? []).filter((s) => s.name === name &&
    Object.entries(labels).every(([key, value]) => s.labels[key] === value))
  if (matching.length > 1) throw new Error(`${name}${JSON.stringify(labels)} matches ${matching.length} series`)
  return matching[0]?.value ?? 0
}
