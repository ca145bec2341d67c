// Builds the app exactly as the server does, on a fresh database this test file
// owns, plus small builders for the rows a test needs.
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { sql, type LogConfig } from 'kysely'
import type { DestinationStream } from 'pino'
import type { Test } from 'tap'
import app, { appOptions } from '../src/app.js'
import { loadConfig, type Config } from '../src/config.js'
import type { Db } from '../src/db/index.js'
import { SCHEMAS, TABLE_PRIVILEGES } from '../src/db/readiness.js'
import { createToken } from '../src/auth/tokens.js'
import type { AccessLevel, ContributorRole } from '../src/db/types.js'
import { sluggedId } from '../src/ids.js'
import { createTestDatabase } from './database.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface TestContext {
  app: FastifyInstance
  db: Db
  /** The database's URL: undefined for an embedded database, or one the caller passed. */
  url: string | undefined
  config: Config
}

/**
 * The configuration a test app runs with: the defaults, logs off, and no rate
 * limits (tests that are about a limit turn it on).
 */
export function testConfig (env: Record<string, string> = {}): Config {
  return loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', AUTH_FAILURE_LIMIT_MAX: '0', ...env })
}

export interface BuildOptions {
  /** Variables over `testConfig`'s defaults. */
  env?: Record<string, string>
  /** Where the app's log lines go (JSON, one per write), at `env.LOG_LEVEL`. */
  logStream?: DestinationStream
  /** Kysely's log for the database `build` creates: a test can watch every statement the app sends. */
  log?: LogConfig
  /**
   * Runs the app on this database instead of a fresh one (a broken one, a
   * one-connection pool, another instance's): whoever created it closes it.
   */
  db?: Db
  /** Called on the bare Fastify instance before the app is registered (a hook that watches the registration). */
  before?: (server: FastifyInstance) => void
}

/**
 * The app as src/server.ts builds it (its Fastify options and plugin), not yet
 * listening or ready, so a test may still add a route. At the test's end the app
 * is closed, and the database too when `build` created it; never one it was given.
 */
export async function build (t: Teardown, options: BuildOptions = {}): Promise<TestContext> {
  if (options.db !== undefined && options.log !== undefined) throw new Error('log applies to a database build creates, not to one it is given')
  let db = options.db
  let url: string | undefined
  if (db === undefined) {
    const database = await createTestDatabase({ log: options.log })
    // Registered first, so it runs after the app is closed (tap runs teardowns last in, first out).
    t.teardown(() => database.close())
    db = database.db
    url = database.url
  }
  const config = testConfig(options.env)
  const server = Fastify(appOptions(config, { logStream: options.logStream }))
  options.before?.(server)
  await server.register(app, { db, config })
  t.teardown(() => server.close())
  return { app: server, db, url, config }
}

/** Polls `condition` every 25 ms until it holds or `ms` have passed; whether it held. */
export async function waitFor (condition: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await condition()) return true
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return await condition()
}

let counter = 0
const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}`

export async function createCompany (db: Db, name = unique('Company')) {
  return db.insertInto('companies').values({ name }).returning(['id', 'name']).executeTakeFirstOrThrow()
}

export async function createPerson (db: Db, companyId: string, options: {
  email?: string, fullName?: string, title?: string | null, isAdmin?: boolean, suspended?: boolean
} = {}) {
  return db.insertInto('people').values({
    company_id: companyId,
    email: options.email ?? `${unique('person')}@example.test`,
    full_name: options.fullName ?? unique('Person'),
    title: options.title ?? null,
    avatar_url: null,
    is_admin: options.isAdmin ?? false,
    suspended_at: options.suspended ? new Date() : null
  }).returning(['id', 'email', 'full_name']).executeTakeFirstOrThrow()
}

/**
 * A company with two people in one space: `author`, champion of `project` (which
 * the space may edit), and `reader`, who may too; for tests of what a change tells.
 */
export async function toldOfProject (db: Db) {
  const company = await createCompany(db)
  const author = await createPerson(db, company.id)
  const reader = await createPerson(db, company.id)
  const space = await createSpace(db, company.id, [author.id, reader.id])
  const project = await createProject(db, space, { name: 'Told of', access: { space: 70 } })
  await addContributor(db, project.id, author.id, 'champion')
  return { company, author, reader, space, project }
}

/** What notifyOf writes: a notification of the person about an activity of the project. */
export interface ProjectNotification {
  person_id: string
  project_id: string
  action: string
  /** The activity's author, whom the notification names: the person themselves unless told. */
  author_id?: string
  read?: boolean
  read_at?: Date | null
  inserted_at?: Date
}

/**
 * Notifications about projects, each of an activity of its project written with
 * it (action and time the notification's): a notification names its activity, with
 * the activity's project and author, or none of them (notifications_activity_fkey).
 */
export async function notifyOf (db: Db, notifications: ProjectNotification[]): Promise<Array<{ id: string }>> {
  const written: Array<{ id: string }> = []
  for (const { author_id: authorId, ...notification } of notifications) {
    const author = authorId ?? notification.person_id
    const { company_id: companyId } = await db.selectFrom('projects').select('company_id').where('id', '=', notification.project_id).executeTakeFirstOrThrow()
    const activity = await db.insertInto('activities').values({
      company_id: companyId, project_id: notification.project_id, author_id: author, action: notification.action,
      content: JSON.stringify({}), ...(notification.inserted_at === undefined ? {} : { inserted_at: notification.inserted_at })
    }).returning('id').executeTakeFirstOrThrow()
    written.push(await db.insertInto('notifications').values({ ...notification, activity_id: activity.id, author_id: author })
      .returning('id').executeTakeFirstOrThrow())
  }
  return written
}

export async function createSpace (db: Db, companyId: string, members: string[] = [], name = unique('Space')) {
  const space = await db.insertInto('spaces').values({ company_id: companyId, name }).returning(['id', 'name']).executeTakeFirstOrThrow()
  if (members.length > 0) {
    await db.insertInto('space_members').values(members.map((person_id) => ({ space_id: space.id, person_id }))).execute()
  }
  return space
}

export async function createProject (db: Db, space: { id: string }, options: {
  name?: string
  description?: string | null
  access?: { public?: AccessLevel, company?: AccessLevel, space?: AccessLevel }
  state?: 'active' | 'paused' | 'closed'
  archived?: boolean
} = {}) {
  const owner = await db.selectFrom('spaces').select('company_id').where('id', '=', space.id).executeTakeFirstOrThrow()
  const state = options.state ?? 'active'
  const project = await db.insertInto('projects').values({
    company_id: owner.company_id,
    space_id: space.id,
    goal_id: null,
    name: options.name ?? unique('Project'),
    description: options.description ?? null,
    public_access: options.access?.public ?? 0,
    company_access: options.access?.company ?? 0,
    space_access: options.access?.space ?? 0,
    state,
    success_status: state === 'closed' ? 'achieved' : null,
    closed_at: state === 'closed' ? new Date() : null,
    archived_at: options.archived ? new Date() : null,
    timeframe_start_type: null,
    timeframe_start_value: null,
    timeframe_start_date: null,
    timeframe_end_type: null,
    timeframe_end_value: null,
    timeframe_end_date: null
  }).returning(['id', 'name']).executeTakeFirstOrThrow()
  return { ...project, publicId: sluggedId(project.id, project.name) }
}

export async function addContributor (db: Db, projectId: string, personId: string, role: ContributorRole, accessLevel: AccessLevel | null = null) {
  return db.insertInto('project_contributors').values({
    project_id: projectId, person_id: personId, role, responsibility: null, access_level: accessLevel
  }).returning('id').executeTakeFirstOrThrow()
}

export async function tokenFor (db: Db, email: string, options: { readOnly?: boolean, expiresInDays?: number } = {}) {
  return createToken(db, { email, readOnly: options.readOnly, expiresInDays: options.expiresInDays })
}

/** Calls the API the way a client does. */
export function client (server: FastifyInstance, token?: string) {
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` }
  return {
    updateName: (body: unknown): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: '/api/external/v1/projects/update_name', headers, payload: body as object }),
    updateDescription: (body: unknown): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: '/api/external/v1/projects/update_description', headers, payload: body as object }),
    /** Any other projects/<op> mutation (issue 64's lifecycle). */
    projects: (op: string, body: unknown): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: `/api/external/v1/projects/${op}`, headers, payload: body as object }),
    get: (id: string): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id }, headers }),
    /** Any other projects/<operation> mutation (create, update_start_date, move_to_space, delete…). */
    project: (operation: string, body: unknown, extra: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: `/api/external/v1/projects/${operation}`, headers: { ...headers, ...extra }, payload: body as object }),
    list: (query: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'GET', url: '/api/external/v1/projects/list', query, headers }),
    getMe: (query: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'GET', url: '/api/external/v1/people/get_me', query, headers }),
    getCompany: (query: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'GET', url: '/api/external/v1/companies/get', query, headers }),
    listNotifications: (query: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'GET', url: '/api/external/v1/notifications/list', query, headers }),
    unreadCount: (): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'GET', url: '/api/external/v1/notifications/get_unread_count', headers }),
    markAllAsRead: (): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: '/api/external/v1/notifications/mark_all_as_read', headers, payload: {} }),
    markManyAsRead: (ids: string[]): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: '/api/external/v1/notifications/mark_many_as_read', headers, payload: { ids } }),
    createWebhook: (body: unknown): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: '/api/external/v1/webhooks/create', headers, payload: body as object }),
    listWebhooks: (): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'GET', url: '/api/external/v1/webhooks/list', headers }),
    deleteWebhook: (id: string): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: '/api/external/v1/webhooks/delete', headers, payload: { id } }),
    rotateWebhookSecret: (id: string): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'POST', url: '/api/external/v1/webhooks/rotate_secret', headers, payload: { id } }),
    listDeliveries: (query: Record<string, string>): Promise<LightMyRequestResponse> =>
      server.inject({ method: 'GET', url: '/api/external/v1/webhooks/list_deliveries', query, headers })
  }
}

/** The whole project row, at full precision, as Postgres prints it. */
export async function projectRow (db: Db, id: string): Promise<Record<string, unknown>> {
  const result = await sql<{ row: Record<string, unknown> }>`SELECT to_jsonb(p) AS row FROM projects p WHERE p.id = ${id}`.execute(db)
  return result.rows[0]!.row
}

export async function projectActivities (db: Db, projectId: string) {
  return db.selectFrom('activities').selectAll().where('project_id', '=', projectId).orderBy('inserted_at').orderBy('id').execute()
}

/** A 400 invalid_input whose one detail points at `path`; `message` is the whole message. */
export function expectInvalidInput (t: Test, res: LightMyRequestResponse, path: string, message?: string): void {
  t.equal(res.statusCode, 400, `400 for ${path}`)
  const body = res.json()
  t.match(body, { statusCode: 400, error: 'Bad Request', code: 'invalid_input', message: String })
  t.equal(body.details?.length, 1, 'one detail')
  t.equal(body.details?.[0]?.path, path)
  t.equal(typeof body.details?.[0]?.message, 'string')
  if (message !== undefined) t.equal(body.message, message)
}

export interface Writer { token: string, tokenId: string, personId: string }
export interface Seeded { id: string, publicId: string, name: string }

/** `count` projects that either of two writers (a company admin and a space member with edit access) may rename. */
export async function seedWriters (db: Db, count: number): Promise<{ projects: Seeded[], writers: Writer[] }> {
  const company = await createCompany(db)
  const admin = await createPerson(db, company.id, { isAdmin: true })
  const member = await createPerson(db, company.id)
  const space = await createSpace(db, company.id, [member.id])
  const projects: Seeded[] = []
  for (let i = 0; i < count; i++) projects.push(await createProject(db, space, { access: { space: 70 } }))
  const writers: Writer[] = []
  for (const person of [admin, member]) {
    const issued = await tokenFor(db, person.email)
    writers.push({ token: issued.token, tokenId: issued.id, personId: person.id })
  }
  return { projects, writers }
}

/** Grants a role exactly what the service's statements need (db/readiness.ts), and the migration table. */
export async function grantServicePrivileges (db: Db, role: string): Promise<void> {
  await sql`GRANT SELECT ON kysely_migration TO ${sql.id(role)}`.execute(db)
  for (const schema of SCHEMAS) await sql`GRANT USAGE ON SCHEMA ${sql.id(schema)} TO ${sql.id(role)}`.execute(db)
  for (const [table, privileges] of Object.entries(TABLE_PRIVILEGES)) {
    await sql`GRANT ${sql.raw(privileges.join(', '))} ON ${sql.table(table)} TO ${sql.id(role)}`.execute(db)
  }
}

/**
 * What a schema validator says by default, which names neither what to send nor
 * what is wrong: a union ("must match a schema in anyOf", "must be a null"), a list
 * of values, a pattern, Ajv's bounds ("must NOT have more than 500 characters",
 * "items ## 0 and 1"). No error message of the API says any of it.
 */
export const VALIDATOR_JARGON = /anyOf|oneOf|allOf|must match a schema|must match pattern|must match format|must be a null|equal to constant|the allowed values|must NOT|##/
