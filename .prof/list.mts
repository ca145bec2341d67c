import Fastify from 'fastify'
import app, { appOptions } from '/work/main/src/app.js'
import { loadConfig } from '/work/main/src/config.js'
import { createDb, dbOptions } from '/work/main/src/db/index.js'
import { createToken } from '/work/main/src/db/tokens.js'

const config = loadConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/projects_bench', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', AUTH_FAILURE_LIMIT_MAX: '0', NODE_ENV: 'production' })
const db = await createDb(dbOptions(config))
const server = Fastify(appOptions(config))
await server.register(app, { db, config })
await server.ready()
const person = await db.selectFrom('project_contributors').select('person_id').where('role', '=', 'champion').executeTakeFirstOrThrow()
const p = await db.selectFrom('people').select('email').where('id', '=', person.person_id).executeTakeFirstOrThrow()
const { token } = await createToken(db, { email: p.email })
const url = process.argv[2] ?? '/api/external/v1/projects/list?limit=20'
let bytes = 0
const n = Number(process.argv[3] ?? 200)
for (let i = 0; i < 20; i++) await server.inject({ url, headers: { authorization: `Bearer ${token}` } })
const t0 = performance.now()
const cpu0 = process.cpuUsage()
for (let i = 0; i < n; i++) {
  const r = await server.inject({ url, headers: { authorization: `Bearer ${token}` } })
  if (r.statusCode !== 200) throw new Error(r.body)
  bytes += r.body.length
}
const cpu = process.cpuUsage(cpu0)
console.log(url, 'ms/req wall', ((performance.now() - t0) / n).toFixed(2), 'cpu ms/req', ((cpu.user + cpu.system) / 1000 / n).toFixed(2), 'bytes', bytes / n)
await server.close(); await db.destroy()
