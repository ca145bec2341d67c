// The A/B's report (bench/report.ts): each side's turns of an operation summed up
// as their mean, the ratio new ÷ old, the operations under the target called out;
// the cost of metrics and traces (bench/observability.ts); and the bench's flags
// (bench/options.ts).
import t from '../tap.js'
import type { LoadResult } from '../../bench/load.js'
import type { OperationName } from '../../bench/operations.js'
import { observabilityRows } from '../../bench/observability.js'
import { parseFlags } from '../../bench/options.js'
import { render, slower, summarize, type Figures, type Phase, type Side, type Turn } from '../../bench/report.js'
import { DEFAULT_SIZE } from '../../bench/seed.js'

function turn (side: Side, operation: OperationName, rps: number, options: { phase?: Phase, p99?: number, connections?: number } = {}): Turn {
  const result = {
    operation, connections: options.connections ?? 50, seconds: 8, requests: rps * 8, rps, p50: 10, p99: options.p99 ?? 100,
    non2xx: 0, errors: 0, timeouts: 0, samples: [], maxRssMb: 150, serverCpuMs: 1, backendCpuMs: 2, othersCpuPercent: 30
  } satisfies LoadResult
  return { side, phase: options.phase ?? 'direct', round: 1, result }
}

const turns: Turn[] = [
  turn('new', 'update_name', 400, { p99: 120 }), turn('old', 'update_name', 500), turn('old', 'update_name', 700), turn('new', 'update_name', 600, { p99: 80 }),
  turn('new', 'get', 300), turn('old', 'get', 1000),
  turn('new', 'get', 900, { phase: 'delayed' }), turn('old', 'get', 1000, { phase: 'delayed' })
]

t.test('each side\'s turns as their mean, and the ratio of the means', async (t) => {
  const rows = summarize(turns, 'direct')
  t.equal(rows.length, 2, 'the operations run, in the bench\'s order')
  t.match(rows[0], { operation: 'update_name', connections: 50, sides: { new: { rps: 500, p99: 100, turns: [400, 600] }, old: { rps: 600, turns: [500, 700] } } })
  t.equal(rows[0]!.ratio!.toFixed(4), (500 / 600).toFixed(4))
  t.equal(rows[1]!.ratio, 0.3)
  t.same(slower(rows).map((r) => r.operation), ['get'], 'only get is under 0.75')
  t.same(summarize(turns, 'delayed').map((r) => [r.operation, r.ratio]), [['get', 0.9]], 'the delayed turns apart')
})

t.test('one side alone: no ratio', async (t) => {
  const rows = summarize(turns.filter((x) => x.side === 'new'), 'direct')
  t.same(rows.map((r) => r.ratio), [null, null])
  t.same(slower(rows), [])
})

const settings = {
  date: new Date('2026-12-07T10:00:00Z'), totalSeconds: 900, durationS: 8, warmupS: 4, breakInS: 3, rounds: 2, poolSize: 4,
  connections: [50], size: DEFAULT_SIZE, keepsBodies: false, loadAverage: { start: 3, end: 4 }, postgres: 'PostgreSQL 15'
}
const side = (name: Side, label: string) => ({ side: name, label, database: `bench_${name}`, seedSeconds: 10, rows: { projects: 1205 }, start: 'node', idleRssMb: { direct: 90 } })

t.test('the report names both commits, marks a ratio under 0.75 and lists it', async (t) => {
  const figures: Figures = { sides: [side('new', 'abc1234'), side('old', 'd05b597')], turns, delayed: null, redmine: 'No Redmine was given.', webhooks: null }
  const text = render(figures, settings)
  t.match(text, '**new** abc1234; **old** d05b597')
  t.match(text, '| projects/get | 300 | 1000 | 0.30 ⚠ |')
  t.match(text, /### Under 0\.75 of the old throughput\n\n- projects\/get at 50 connections, directly: 0\.30/)
  t.match(text, 'No Redmine was given.')
})

t.test('a report of one side has no ratio column', async (t) => {
  const text = render({ sides: [side('new', 'abc1234')], turns: turns.filter((x) => x.side === 'new'), delayed: null, redmine: 'none', webhooks: null }, settings)
  t.notMatch(text, 'new ÷ old |')
  t.notMatch(text, 'Under 0.75')
  t.match(text, '| update_name | 500 |')
})

t.test('flags: --against takes a revision; an unknown flag is refused', async (t) => {
  t.match(parseFlags(['--against', 'd05b597', '--no-delay']), { against: 'd05b597', delay: false, build: true, webhooks: true, keep: false })
  t.match(parseFlags([]), { against: null, delay: true })
  t.match(parseFlags(['--cpu-prof']), { cpuProf: true, keep: true }, 'profiles are kept')
  t.throws(() => parseFlags(['--no-embedded']))
})

t.test('metrics and traces: each setting as the mean of its turns and its share of off, a metrics cost over 5 % marked', async (t) => {
  const run = (setting: 'off' | 'metrics' | 'tracing', operation: OperationName, rps: number, p99 = 100) => ({ setting, result: turn('new', operation, rps, { p99 }).result })
  const observability = {
    connections: 50, rounds: 2, durationS: 8, spans: 1234, scrapes: 40,
    runs: [
      run('off', 'update_name', 400), run('off', 'update_name', 600), run('metrics', 'update_name', 490), run('metrics', 'update_name', 490, 120),
      run('tracing', 'update_name', 250), run('off', 'get', 1000), run('metrics', 'get', 900), run('tracing', 'get', 500, 300)
    ]
  }
  t.same(observabilityRows(observability).map((r) => [r.operation, r.setting, r.rps, r.p99, r.share]), [
    ['update_name', 'off', 500, 100, 1], ['update_name', 'metrics', 490, 110, 0.98], ['update_name', 'tracing', 250, 100, 0.5],
    ['get', 'off', 1000, 100, 1], ['get', 'metrics', 900, 100, 0.9], ['get', 'tracing', 500, 300, 0.5]
  ])
  const text = render({ sides: [side('new', 'abc1234')], turns, delayed: null, redmine: 'none', webhooks: null, observability }, settings)
  t.match(text, 'exported 1234 spans')
  t.match(text, '| update_name | metrics off, tracing off | 500 | 100 | 100 % | 400, 600 |', 'each turn too')
  t.match(text, '| update_name | metrics on, scraped every second | 490 | 110 | 98 % | 490, 490 |')
  t.match(text, '| projects/get | metrics on, scraped every second | 900 | 100 | 90 % ⚠ | 900 |')
  t.match(text, '| projects/get | tracing at 100 %, metrics off | 500 | 300 | 50 % | 500 |', 'tracing has no target')
  t.notMatch(render({ sides: [side('new', 'abc1234')], turns, delayed: null, redmine: 'none', webhooks: null }, settings), 'Metrics and traces')
  t.match(parseFlags(['--no-observability']), { observability: false })
  t.match(parseFlags([]), { observability: true })
})
