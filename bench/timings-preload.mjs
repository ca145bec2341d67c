// Loaded into a bench server with `node --import` (bench/run.ts, the timings pass; read by bench/timings.ts):
// the server's own clock on each request, to tell a latency's parts apart. It records
//   request    from the request's headers parsed to its response handed to the socket
//              (node:http's diagnostics channels);
//   pool       a wait for one of the pool's connections (pg's Pool#connect without a
//              callback: the API's driver, src/db/dialect.ts; pg-boss's pool passes one);
//   statement  a named statement's round trip, from the call to its result reaching
//              the code that waits for it (pg's Client#query with a name: the API's
//              statements; pg-boss's and the migrations' are unnamed).
// Each as [end, ms], end in µs of the monotonic clock (bench/profile.ts, monotonicUs),
// written as JSON to BENCH_TIMINGS_FILE when the process exits, for the bench to
// cut into its runs. Plain JavaScript: the server runs the build with plain node.
import diagnostics from 'node:diagnostics_channel'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

const file = process.env.BENCH_TIMINGS_FILE
if (file === undefined) throw new Error('bench/timings-preload.mjs needs BENCH_TIMINGS_FILE')

/** pg as the server loads it: from its working directory, the repository. */
const pg = createRequire(path.join(process.cwd(), 'package.json'))('pg')

const nowUs = () => Number(process.hrtime.bigint() / 1000n)
const kept = { request: [], pool: [], statement: [] }
const record = (kind, startUs) => {
  const end = nowUs()
  kept[kind].push([end, (end - startUs) / 1000])
}

const STARTED = Symbol('bench timings: started')
diagnostics.subscribe('http.server.request.start', ({ request }) => { request[STARTED] = nowUs() })
diagnostics.subscribe('http.server.response.finish', ({ request }) => {
  if (request[STARTED] !== undefined) record('request', request[STARTED])
})

const connect = pg.Pool.prototype.connect
pg.Pool.prototype.connect = function (callback) {
  if (callback !== undefined) return connect.call(this, callback)
  const start = nowUs()
  const connected = connect.call(this)
  connected.then(() => record('pool', start), () => {})
  return connected
}

const query = pg.Client.prototype.query
pg.Client.prototype.query = function (config, values, callback) {
  const start = nowUs()
  const result = query.call(this, config, values, callback)
  const named = typeof config === 'object' && config !== null && typeof config.name === 'string'
  if (named && result !== undefined && typeof result.then === 'function') result.then(() => record('statement', start), () => {})
  return result
}

process.on('exit', () => writeFileSync(file, JSON.stringify(kept)))
