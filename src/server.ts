// Process entry: read the configuration, open and migrate the database, listen,
// and close gracefully on SIGINT/SIGTERM (however many relays deliver it: stop-signals.ts).
import { tracing } from './tracing/api.js' // first: it instruments what the imports below load
import { existsSync } from 'node:fs'
import { chmod, writeFile } from 'node:fs/promises'
import path from 'node:path'
import Fastify from 'fastify'
import app, { appOptions } from './app.js'
import { listenError, loadConfigOrExit, localBaseUrl, type Config } from './config.js'
import { createDb, dbOptions, type Db } from './db/index.js'
import { migrateToLatest } from './db/migrate.js'
import { isEmpty, loadDemo } from './demo/load.js'
import { demoSummary, type DemoSummary } from './demo/summary.js'
import { redactPasswords } from './redact.js'
import { onStop } from './stop-signals.js'
import { describeError } from './errors.js'
import { PRIVATE_TARGETS_WARNING } from './webhooks/deliver.js'
import { deliveryWorkerOptions, shutdownDeadline, startDeliveryWorker, type DeliveryWorker } from './webhooks/worker.js'
import { startMetricsServer, type MetricsServer } from './metrics/server.js'

const DEMO_FILE = 'demo.json'

/** The operator CLI as it is run where this process runs: from source, or the build in an image. */
function cliCommand (): string {
  return import.meta.url.endsWith('/dist/src/server.js') ? 'node dist/src/cli.js' : 'npm run -s cli --'
}

/**
 * The demo's tokens, kept beside the embedded database (owner-only) so that a
 * newcomer can use every demo person while the server runs: the embedded database
 * admits one process, so the CLI cannot issue tokens then.
 */
async function saveDemo (dataDir: string, demo: DemoSummary): Promise<string> {
  const file = path.join(dataDir, DEMO_FILE)
  await writeFile(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 })
  await chmod(file, 0o600)
  return file
}

async function prepareDatabase (config: Config, db: Db): Promise<string | null> {
  await migrateToLatest(db)
  // Only the embedded database is seeded, and only when it is new.
  if (config.DATABASE_URL) return null
  const demoFile = path.join(config.DATA_DIR, DEMO_FILE)
  if (!(await isEmpty(db))) {
    const tokens = existsSync(demoFile)
      ? `Demo projects and tokens for every demo person: ${demoFile}`
      : `Tokens: stop the server, then run ${cliCommand()} tokens create --email <email>`
    return `Embedded database in ${config.DATA_DIR}. ${tokens}`
  }
  const demo = demoSummary(await loadDemo(db))
  const saved = await saveDemo(config.DATA_DIR, demo)
  const token = demo.tokens['alice@acme.test']?.write
  const projectId = demo.projects['Website Redesign']
  const base = localBaseUrl(config)
  return [
    `Loaded the demo data into ${config.DATA_DIR}. Rename a project as alice@acme.test:`,
    '',
    `  curl -s -X POST ${base}/api/external/v1/projects/update_name \\`,
    `    -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' \\`,
    `    -d '{"project_id": "${projectId}", "name": "Website Redesign 2.0"}'`,
    '',
    `Demo projects and a write and a read-only token for every demo person: ${saved}`
  ].join('\n')
}

async function main (): Promise<void> {
  const config = loadConfigOrExit()

  const db = await createDb(dbOptions(config))
  const hint = await prepareDatabase(config, db)
  const server = Fastify(appOptions(config))
  await server.register(app, { db, config })
  if (config.WEBHOOKS_ALLOW_PRIVATE_TARGETS) server.log.warn(PRIVATE_TARGETS_WARNING)
  const worker: DeliveryWorker | null = config.WEBHOOKS_WORKER
    ? await startDeliveryWorker(db, deliveryWorkerOptions(config, server.log, { told: true }))
    : null
  let metrics: MetricsServer | null = null

  // On SIGTERM/SIGINT: stop accepting, let the requests and webhook deliveries in
  // flight finish (deliveries still running near the deadline are handed back to
  // the queue), close the pool, exit 0. Past the deadline (or on a crash) exit 1.
  onStop({ delay: config.SHUTDOWN_TIMEOUT_MS, logger: server.log }, async ({ signal, err }) => {
    if (err) server.log.error({ err }, 'shutting down after an unexpected error')
    else server.log.info({ signal }, 'shutting down')
    const deadline = shutdownDeadline(config.SHUTDOWN_TIMEOUT_MS)
    // The server stops taking requests at once; both then drain side by side.
    const closing = server.close()
    await worker?.stop(deadline)
    await closing
    await metrics?.close()
    await db.destroy()
    await tracing?.shutdown()
    server.log.info('shut down')
  })

  await server.listen({ host: config.HOST, port: config.PORT }).catch((error: unknown) => { throw listenError(error, 'PORT', config.HOST, config.PORT) })
  // Last: a scrape reads the database, and a metrics port taken is said after the API's.
  metrics = await startMetricsServer(config)
  if (hint) process.stdout.write(`\n${hint}\n`)
}

main().catch((error: unknown) => {
  // A database URL may stand in the message (a driver's, or a cause's): never its password.
  process.stderr.write(`failed to start: ${redactPasswords(describeError(error))}\n`)
  process.exit(1)
})
