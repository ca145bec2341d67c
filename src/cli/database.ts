// `migrate` and `seed --demo`: the database's schema and the demo dataset.
import type { Config } from '../config.js'
import type { Db } from '../db/index.js'
import { log, out, parse, UsageError, type Help } from './common.js'

export type DatabaseCommand =
  | { kind: 'migrate' }
  | { kind: 'seed', json: boolean }

export function parseMigrate (rest: string[]): DatabaseCommand | Help {
  const { values } = parse(rest, {})
  return values.help ? { kind: 'help' } : { kind: 'migrate' }
}

export function parseSeed (rest: string[]): DatabaseCommand | Help {
  const { values } = parse(rest, { demo: { type: 'boolean' }, json: { type: 'boolean' } })
  if (values.help) return { kind: 'help' }
  // The only dataset there is; the flag keeps `seed` from being run by accident.
  if (!values.demo) throw new UsageError('seed needs --demo')
  return { kind: 'seed', json: values.json ?? false }
}

export async function runDatabase (command: DatabaseCommand, db: Db, config: Config): Promise<void> {
  if (command.kind === 'migrate') await migrate(db)
  else await seed(db, config, command.json)
}

async function migrate (db: Db): Promise<void> {
  const { migrateToLatest } = await import('../db/migrate.js')
  const applied = await migrateToLatest(db)
  if (applied.length === 0) out('database is up to date')
  for (const migration of applied) out(`applied ${migration}`)
}

async function seed (db: Db, config: Config, json: boolean): Promise<void> {
  const [{ migrateToLatest }, { loadDemo }, { demoSummary }, { localBaseUrl }] = await Promise.all([
    import('../db/migrate.js'), import('../demo/load.js'), import('../demo/summary.js'), import('../config.js')
  ])
  // Logs only: stdout carries the one JSON object.
  for (const migration of await migrateToLatest(db)) log(`applied ${migration}`)
  const demo = await loadDemo(db)
  const { projects, tokens } = demoSummary(demo)
  const created = demo.created
  log(created ? 'demo dataset loaded' : 'demo dataset already present: nothing inserted, new tokens issued')
  if (json) {
    out(JSON.stringify({ projects, tokens }, null, 2))
    return
  }
  out('Projects:')
  for (const [name, id] of Object.entries(projects)) out(`  ${name.padEnd(18)} ${id}`)
  out('\nTokens (shown once):')
  for (const [email, pair] of Object.entries(tokens)) {
    out(`  ${email.padEnd(18)} write      ${pair.write}`)
    out(`  ${''.padEnd(18)} read-only  ${pair.read_only}`)
  }
  const token = tokens['alice@acme.test']?.write
  const project = projects['Website Redesign']
  if (token && project) {
    const base = localBaseUrl(config)
    out('\nTry (with the server running):')
    out(`  curl -s -H 'Authorization: Bearer ${token}' '${base}/api/external/v1/projects/get?id=${project}'`)
  }
}
