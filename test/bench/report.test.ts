// The bench's verdict beside pgbench (bench/report.ts): the server's rate at the
// highest connection count is also put beside pgbench's best rate at any client
// count, so that a pgbench that falls at 50 clients cannot pass for a met target.
import t from 'tap'
import { bestPgbenchRatios, pgbenchKey } from '../../bench/report.js'
import type { LoadResult } from '../../bench/load.js'
import type { PgbenchResult } from '../../bench/pgbench.js'
import type { OperationName } from '../../bench/operations.js'

const server = (operation: OperationName, connections: number, rps: number) => ({ operation, connections, rps }) as LoadResult
const pgbench = (tps: number) => ({ tps }) as PgbenchResult
const settings = { connections: [50, 10], poolSize: 4 }

t.test('pgbench fell at 50 clients: the server is measured against its rate at fewer', async (t) => {
  const rows = bestPgbenchRatios({
    postgres: [server('update_name', 50, 768), server('update_name', 10, 754)],
    pgbench: new Map([[pgbenchKey('update_name', 50), pgbench(669)], [pgbenchKey('update_name', 10), pgbench(1207)], [pgbenchKey('update_name', 4), pgbench(1354)]])
  }, settings)
  t.equal(rows.length, 1)
  t.match(rows[0], { op: 'update_name', clients: 4, tps: 1354, highTps: 669 })
  t.equal(rows[0]!.ratio.toFixed(3), (768 / 1354).toFixed(3), 'the server at 50 connections ÷ pgbench at 4 clients')
})

t.test('pgbench did best at 50 clients: the ratio is the one at 50', async (t) => {
  const rows = bestPgbenchRatios({
    postgres: [server('get', 50, 1800)],
    pgbench: new Map([[pgbenchKey('get', 50), pgbench(2000)], [pgbenchKey('get', 10), pgbench(1900)], [pgbenchKey('get', 4), pgbench(1500)]])
  }, settings)
  t.match(rows, [{ op: 'get', clients: 50, tps: 2000, highTps: 2000 }])
  t.equal(rows[0]!.ratio, 0.9)
})

t.test('an operation without a server run or any pgbench run is left out', async (t) => {
  const rows = bestPgbenchRatios({
    postgres: [server('get', 50, 1800), server('update_name', 10, 700)],
    pgbench: new Map([[pgbenchKey('update_name', 50), pgbench(900)]])
  }, settings)
  t.same(rows, [], 'get has no pgbench run; update_name no server run at 50 connections')
})
