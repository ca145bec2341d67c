// Process entry of a webhook delivery worker (`npm run worker`, the image's
// `node dist/src/worker.js`): the API's delivery workers without the API, on
// DATABASE_URL's PostgreSQL, beside any number of API processes and other
// workers. It brings the schema up to date as the server does, and stops
// gracefully on SIGINT/SIGTERM. The embedded database belongs to the one process
// that opened it: there the API process delivers (WEBHOOKS_WORKER=true).
import { tracing } from './tracing/worker.js' // first: it instruments what the imports below load
import { pino } from 'pino'
import { logDestination, loggerOptions } from './logger.js'
import { loadConfigOrExit } from './config.js'
import { createDb, dbOptions } from './db/index.js'
import { migrateToLatest } from './db/migrate.js'
import { describeError } from './errors.js'
import { redactPasswords } from './redact.js'
import { onStop } from './stop-signals.js'
import { watchDatabase } from './metrics/registry.js'
import { startMetricsServer } from './metrics/server.js'
import { PRIVATE_TARGETS_WARNING } from './webhooks/deliver.js'
import { deliveryWorkerOptions, EMBEDDED_REFUSAL, shutdownDeadline, startDeliveryWorker } from './webhooks/worker.js'

async function main (): Promise<void> {
  const config = loadConfigOrExit()
  if (config.DATABASE_URL === undefined) {
    process.stderr.write(`${EMBEDDED_REFUSAL}\n`)
    process.exit(2)
  }

  const log = pino(loggerOptions(config), logDestination(config))
  const db = await createDb(dbOptions(config))
  await migrateToLatest(db)
  if (config.WEBHOOKS_ALLOW_PRIVATE_TARGETS) log.warn(PRIVATE_TARGETS_WARNING)
  // Its jobs are queued by other processes: it looks for them ten times a second.
  const worker = await startDeliveryWorker(db, deliveryWorkerOptions(config, log, { told: false }))
  watchDatabase(db)
  const metrics = await startMetricsServer(config)

  // On SIGTERM/SIGINT: the deliveries in flight finish (those still running near
  // the deadline are handed back to the queue), the pool closes, exit 0.
  onStop({ delay: config.SHUTDOWN_TIMEOUT_MS, logger: log }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'shutting down after an unexpected error')
    else log.info({ signal }, 'shutting down')
    await worker.stop(shutdownDeadline(config.SHUTDOWN_TIMEOUT_MS))
    await metrics?.close()
    await db.destroy()
    await tracing?.shutdown()
    log.info('shut down')
  })
}

main().catch((error: unknown) => {
  // A database URL may stand in the message (a driver's, or a cause's): never its password.
  process.stderr.write(`failed to start: ${redactPasswords(describeError(error))}\n`)
  process.exit(1)
})
