// Captures the SQL the server sends for one request of each operation: the app is
// built in-process exactly as src/server.ts builds it, on a database whose Kysely
// `log` option records every statement with its parameters. Nothing is retyped,
// so the pgbench scripts follow whatever shape the current code has (one statement
// per mutation or several, with or without a transaction). Whether a statement
// goes out as a named prepared statement is read where it leaves for the wire, in
// node-postgres's Client#query, so pgbench can use the same protocol.
import Fastify from 'fastify'
import pg from 'pg'
import { CompiledQuery, sql, type KyselyPlugin, type LogEvent, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely'
import app, { appOptions } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createDb, dbOptions } from '../src/db/index.js'
import { projectChildrenVersion, sharedVersion } from '../src/db/project-aggregate.js'
import { inboxVersion } from './seed.js'
import { ACTIVITIES, OPERATIONS, PER_CONNECTION, httpRequest, type OperationName, type Target } from './operations.js'

export interface CapturedStatement {
  sql: string
  parameters: readonly unknown[]
  /** Rows the statement returned, when it went through the query executor (not BEGIN/COMMIT). */
  rows: number | null
  /** Column names of the result, when it returned rows. */
  columns: string[]
  /** Sent as a named prepared statement (parsed and planned once per connection). */
  named: boolean
}

export interface Capture {
  /** The revision the captured request used (see operations.ts). */
  revision: number
  statements: CapturedStatement[]
  /** Notifications the request wrote. */
  notified: number
  /** The If-Match tag a conditional request carried (its target's current tag, unquoted). */
  ifMatch?: string
  /**
   * A read's: the version its target's project was at (db/project-aggregate.ts,
   * sharedVersion), as a server that read it before tells projects/get's statement;
   * a reader's, the version of their page of notifications (db/notifications.ts),
   * which notifications/list's statement is told.
   */
  known?: string[]
  /**
   * A change's: the version of its target's kept children (db/project-aggregate.ts,
   * childrenVersion), as a server that changed it before tells the change's statement.
   */
  knownChildren?: string[]
}

/** Counts result rows per query id; it changes neither the query nor the result. */
class RowCounter implements KyselyPlugin {
  readonly results = new Map<string, { rows: number, columns: string[] }>()

  transformQuery (args: PluginTransformQueryArgs): RootOperationNode {
    return args.node
  }

  async transformResult (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const first = args.result.rows[0]
    this.results.set(args.queryId.queryId, { rows: args.result.rows.length, columns: first ? Object.keys(first) : [] })
    return args.result
  }
}

/** A PostgreSQL URL, or the embedded database's directory. */
export type DatabaseLocation = string | { dataDir: string }

/** The configuration that names the database at `location` (DATABASE_URL or DATA_DIR). */
export function locationEnv (location: DatabaseLocation): { DATABASE_URL: string } | { DATA_DIR: string } {
  return typeof location === 'string' ? { DATABASE_URL: location } : { DATA_DIR: location.dataDir }
}

/**
 * Sends one request of each of `operations` (every operation unless told) on its
 * target through the app with `inject` and returns the statements each one sent.
 * A read is first sent for its target and for each of `warmUp`'s: the server then
 * holds what it holds under load, and a page of projects/list is asked for with
 * the versions of what recent pages showed (db/project-list.ts, `known`), every
 * company's first page, as in a run.
 */
export async function captureStatements<O extends OperationName = OperationName> (database: DatabaseLocation, targets: Record<O, Target>,
  warmUp: Partial<Record<O, readonly Target[]>> = {}, operations: readonly O[] = OPERATIONS as readonly O[]): Promise<Record<O, Capture>> {
  const config = loadConfig({ ...locationEnv(database), LOG_LEVEL: 'warn', NODE_ENV: 'production', RATE_LIMIT_MAX: '0', DB_POOL_SIZE: '2' })
  const events: LogEvent[] = []
  const named = new Set<string>()
  // Client#query(config) with a name is a named statement, however the code came to send it.
  const query = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as { name?: unknown, text?: unknown } | string | undefined
    if (typeof first === 'object' && first !== null && typeof first.name === 'string' && first.name !== '' && typeof first.text === 'string') {
      named.add(first.text)
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof query
  let db
  try {
    db = await createDb(dbOptions(config), { log: (event) => { events.push(event) } })
  } catch (error) {
    pg.Client.prototype.query = query
    throw error
  }
  const counter = new RowCounter()
  const server = Fastify(appOptions(config))
  try {
    await server.register(app, { db: db.withPlugin(counter), config })
    await server.ready()
    const captures = {} as Record<O, Capture>
    const counting = db
    // Counted outside the captured window, with nothing else writing meanwhile.
    const notifications = async () => {
      const { rows: [row] } = await counting.executeQuery<{ n: string }>(CompiledQuery.raw('SELECT count(*) AS n FROM notifications'))
      return Number(row!.n)
    }
    const version = async (projectId: string) => {
      const { rows: [row] } = await sql<{ version: string }>`SELECT ${sharedVersion(sql`p.xmin`)} AS version FROM projects p WHERE p.id = ${projectId}`.execute(counting)
      return row!.version
    }
    const childrenVersion = async (projectId: string) => {
      const { rows: [row] } = await sql<{ version: string }>`SELECT ${projectChildrenVersion(sql`${projectId}::uuid`)} AS version`.execute(counting)
      return row!.version
    }
    for (const operation of operations) {
      // A revision no run draws (runs draw from 1 up), so the mutation really changes the
      // row; one per operation, so a rename after a rename of the same project does too.
      const revision = -OPERATIONS.indexOf(operation)
      const inject = async (r: ReturnType<typeof httpRequest>) => server.inject({
        method: r.method, url: r.path, headers: r.headers, ...(r.body === undefined ? {} : { payload: r.body })
      })
      // A change is sent twice first (other revisions, not captured): the server then
      // holds the project's children written, as under load, and the first change of
      // a project with mentions, which subscribes people, is behind it.
      let knownChildren: { knownChildren: string[] } | Record<string, never> = {}
      if (ACTIVITIES[operation] > 0) {
        for (const warm of [revision - 100, revision - 200]) await inject(httpRequest(operation, targets[operation], warm, PER_CONNECTION.has(operation) ? String((await inject(httpRequest('get', targets[operation], warm))).headers.etag) : undefined))
        knownChildren = { knownChildren: [await childrenVersion(targets[operation].projectId)] }
      }
      // A conditional request carries the tag of a read just before (not captured).
      let etag: string | undefined
      if (PER_CONNECTION.has(operation)) {
        const read = await inject(httpRequest('get', targets[operation], revision))
        etag = String(read.headers.etag)
      }
      // A read is sent first: what the server does once per process (its cursor key)
      // stays out, and what it keeps is in place.
      if (ACTIVITIES[operation] === 0) {
        for (const target of [...(warmUp[operation] ?? []), targets[operation]]) await inject(httpRequest(operation, target, revision))
      }
      const request = httpRequest(operation, targets[operation], revision, etag)
      const before = await notifications()
      events.length = 0
      const response = await server.inject({
        method: request.method,
        url: request.path,
        headers: request.headers,
        ...(request.body === undefined ? {} : { payload: request.body })
      })
      if (response.statusCode !== 200) {
        throw new Error(`capture: ${operation} answered ${response.statusCode}: ${response.body.slice(0, 500)}`)
      }
      const failed = events.find((e) => e.level === 'error')
      if (failed) throw new Error(`capture: ${operation} had a failing statement: ${failed.query.sql}`)
      const statements = events.map((e) => {
        const result = counter.results.get(e.query.queryId.queryId)
        return {
          sql: e.query.sql,
          parameters: e.query.parameters,
          rows: result?.rows ?? null,
          columns: result?.columns ?? [],
          named: named.has(e.query.sql)
        }
      })
      // A read's: the version its server holds (a reader's, of the page; projects', of the project).
      const known = ACTIVITIES[operation] === 0
        ? { known: [operation === 'list_notifications' ? (await inboxVersion(counting, targets[operation].personId))! : await version(targets[operation].projectId)] }
        : {}
      captures[operation] = { revision, statements, notified: (await notifications()) - before, ...(etag === undefined ? {} : { ifMatch: etag.replace(/^"|"$/g, '') }), ...known, ...knownChildren }
    }
    return captures
  } finally {
    pg.Client.prototype.query = query
    await server.close()
    await db.destroy()
  }
}
