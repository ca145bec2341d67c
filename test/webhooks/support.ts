// What the delivery tests share: a real HTTP receiver on loopback whose answers a
// test scripts, endpoints written straight into the table (with a fresh secret,
// as webhooks/create makes them), a company whose admin edits a project, and the
// delivery workers of this process, stopped at the test's end.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { sql } from 'kysely'
import { pino, type Logger } from 'pino'
import type { Config } from '../../src/config.js'
import type { Db } from '../../src/db/index.js'
import type { WebhookEvent } from '../../src/db/types.js'
import { deliveryWorkerOptions, startDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/worker.js'
import { build, client, createCompany, createPerson, createProject, createSpace, tokenFor, waitFor, type BuildOptions } from '../helper.js'

interface Teardown { teardown: (fn: () => unknown) => void }

/** A request as the receiver got it. */
export interface Received {
  /** 0-based, in order of arrival. */
  index: number
  method: string
  url: string
  headers: Record<string, string>
  body: string
  /** Date.now() when the whole body was in. */
  at: number
}

/** How the receiver answers one request: a status, or never (`hang`), or later (a promise). */
export type Reply = { status: number, headers?: Record<string, string>, body?: string } | 'hang'

export interface Receiver {
  url: string
  port: number
  requests: Received[]
  /** TCP connections accepted so far (a refused target must open none). */
  connections: () => number
  /** Sets how the next requests are answered (200 by default). */
  answer: (reply: (request: Received) => Reply | Promise<Reply>) => void
  /** Waits until `count` requests have come in; whether they did within `ms`. */
  waitForRequests: (count: number, ms?: number) => Promise<boolean>
}

function headersOf (req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

/** An HTTP receiver on `host` (127.0.0.1; '::' for both loopbacks), closed at the test's end. */
export async function startReceiver (t: Teardown, options: { host?: string } = {}): Promise<Receiver> {
  const requests: Received[] = []
  let connections = 0
  const sockets = new Set<Socket>()
  let reply: (request: Received) => Reply | Promise<Reply> = () => ({ status: 200 })
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const received: Received = {
        index: requests.length,
        method: req.method ?? '',
        url: req.url ?? '',
        headers: headersOf(req),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now()
      }
      requests.push(received)
      void Promise.resolve(reply(received)).then((answer) => {
        if (answer === 'hang' || res.destroyed) return
        res.writeHead(answer.status, answer.headers).end(answer.body ?? '')
      })
    })
  })
  server.on('connection', (socket: Socket) => {
    connections++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  const host = options.host ?? '127.0.0.1'
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const { port } = server.address() as AddressInfo
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    requests,
    connections: () => connections,
    answer: (next) => { reply = next },
    waitForRequests: (count, ms = 20_000) => waitFor(() => requests.length >= count, ms)
  }
}

/** A signing secret as webhooks/create makes one: `whsec_` and 32 random bytes in base64. */
export function newSecret (): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** An endpoint of the company, written straight into the table (webhooks/create checks targets; this does not). */
export async function insertWebhook (db: Db, companyId: string, url: string, options: {
  events?: WebhookEvent[]
  previousSecret?: { secret: string, expiresInSeconds: number }
  enabled?: boolean
} = {}): Promise<{ id: string, secret: string }> {
  const secret = newSecret()
  const row = await db.insertInto('webhooks').values({
    company_id: companyId,
    url,
    events: options.events ?? ['project.renamed', 'project.description_changed'],
    secret,
    previous_secret: options.previousSecret?.secret ?? null,
    previous_secret_expires_at: options.previousSecret === undefined
      ? null
      : sql<Date>`now() + ${options.previousSecret.expiresInSeconds} * interval '1 second'`,
    enabled: options.enabled ?? true,
    disabled_reason: options.enabled === false ? 'disabled by the test' : null
  }).returning('id').executeTakeFirstOrThrow()
  return { id: row.id, secret }
}

/** The app on a fresh database (private targets allowed), and a company whose admin may edit a project. */
export async function deliveryFixture (t: Teardown, options: BuildOptions = {}) {
  const context = await build(t, { ...options, env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', ...options.env } })
  const { db } = context
  const company = await createCompany(db)
  const person = await createPerson(db, company.id, { isAdmin: true })
  const space = await createSpace(db, company.id, [person.id])
  const project = await createProject(db, space, { access: { space: 70 } })
  const token = await tokenFor(db, person.email)
  return { ...context, company, person, space, project, token: token.token, api: client(context.app, token.token) }
}

/** Log lines as JSON objects, and a logger that writes them (at debug). */
export function captureLog (): { log: Logger, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const log = pino({ level: 'debug' }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } })
  return { log, lines }
}

/**
 * This process's delivery workers on `db`, stopped (with 5 s of grace) at the test's
 * end: as `npm run worker` starts them unless `turnMs` says how often they look
 * (and `sweepIntervalMs` how often they sweep stranded deliveries).
 */
export async function startWorker (t: Teardown, db: Db, config: Config, log: Logger = pino({ level: 'silent' }), options: { turnMs?: number, sweepIntervalMs?: number } = {}): Promise<DeliveryWorker> {
  const worker = await startDeliveryWorker(db, { ...deliveryWorkerOptions(config, log, { told: false }), ...options })
  let stopped = false
  t.teardown(async () => { if (!stopped) await worker.stop(Date.now() + 5000) })
  return { stop: async (deadline) => { stopped = true; await worker.stop(deadline) } }
}

/** The deliveries of an endpoint, oldest first. */
export async function deliveriesOf (db: Db, webhookId: string) {
  return await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId)
    .orderBy('inserted_at').orderBy('id').execute()
}

/** Waits until the delivery matches; whether it did within `ms`. */
export async function waitForDeliveries (db: Db, webhookId: string, condition: (rows: Awaited<ReturnType<typeof deliveriesOf>>) => boolean, ms = 20_000): Promise<boolean> {
  return await waitFor(async () => condition(await deliveriesOf(db, webhookId)), ms)
}

/** Delivery jobs in the job engine's queue, whatever their state. */
export async function deliveryJobs (db: Db) {
  return await db.selectFrom('pgboss.job').select(['id', 'data', 'state', 'start_after']).where('name', '=', 'webhook-delivery').execute()
}
