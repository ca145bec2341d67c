// The security matrix: every kind of token, against every operation, on a project
// of every privacy and an archived one, answered with exactly the status and code
// the contract gives (an explicit table, not the server's logic again). Beside it:
// tokens are nowhere in the database or the logs in clear, errors carry no stack
// or SQL, an invisible project's 404 is byte for byte the 404 of one that does
// not exist, and a body over the limit is a 413 that writes nothing. With
// conditional headers that never match, every cell keeps its answer but a 200,
// which becomes the condition's 412 or 304.
import { randomBytes, randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import type { Test } from 'tap'
import t from '../tap.js'
import type { Db } from '../../src/db/index.js'
import type { AccessLevel } from '../../src/db/types.js'
import { revokeToken } from '../../src/auth/tokens.js'
import { shortId } from '../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, notifyOf, tokenFor } from '../helper.js'

const BASE = '/api/external/v1/projects'
const REALM = 'Bearer realm="api"'
const INVALID_TOKEN = 'Bearer realm="api", error="invalid_token"'
const INSUFFICIENT_SCOPE = 'Bearer realm="api", error="insufficient_scope"'
// A stack frame, a source position or SQL; in an error, also the name of a table
// (a Project legitimately has a key named like one: notifications).
const LEAK = /\bat \S+ \(|\bat file:|\.ts:\d|\.js:\d|\b(SELECT|UPDATE|INSERT|DELETE)\b|relation "/
const TABLE_NAME = /\b(webhooks|webhook_deliveries|companies|people|spaces|space_members|goals|projects|project_contributors|project_pins|project_milestones|project_key_resources|project_check_ins|project_retrospectives|project_task_statuses|subscription_lists|subscriptions|api_tokens|activities|notifications)\b/

type Kind = 'write' | 'read_only' | 'expired' | 'revoked' | 'suspended' | 'foreign' | 'malformed' | 'other_scheme' | 'empty' | 'missing'
type Op = 'update_name' | 'update_description' | 'get'
type Visibility = 'public' | 'internal' | 'confidential' | 'secret' | 'archived'
const VISIBILITIES: Visibility[] = ['public', 'internal', 'confidential', 'secret', 'archived']

// Who is who: `member` belongs to the company and to the space of every project
// below, and is no contributor; `outsider` belongs to another company.
// public       public 10, company 40, space 70: member edits (space), outsider views (public)
// internal     company 40:                      member views (company), outsider sees nothing
// confidential space 100:                       member has full access (space), outsider sees nothing
// secret       none:                            nobody sees it (no binding, no admin)
// archived     company 70, space 70, archived:  member may read it, no one may change it
//
// Cells: 200, 401 (unauthenticated), 403:forbidden, 403:read_only_token, 404 (not_found).
const TABLE = `
kind          op                  public               internal             confidential         secret  archived
write         update_name         200                  403:forbidden        200                  404     404
write         update_description  200                  403:forbidden        200                  404     404
write         get                 200                  200                  200                  404     200
read_only     update_name         403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     update_description  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     get                 200                  200                  200                  404     200
foreign       update_name         403:forbidden        404                  404                  404     404
foreign       update_description  403:forbidden        404                  404                  404     404
foreign       get                 200                  404                  404                  404     404
expired       update_name         401                  401                  401                  401     401
expired       update_description  401                  401                  401                  401     401
expired       get                 401                  401                  401                  401     401
revoked       update_name         401                  401                  401                  401     401
revoked       update_description  401                  401                  401                  401     401
revoked       get                 401                  401                  401                  401     401
suspended     update_name         401                  401                  401                  401     401
suspended     update_description  401                  401                  401                  401     401
suspended     get                 401                  401                  401                  401     401
malformed     update_name         401                  401                  401                  401     401
malformed     update_description  401                  401                  401                  401     401
malformed     get                 401                  401                  401                  401     401
other_scheme  update_name         401                  401                  401                  401     401
other_scheme  update_description  401                  401                  401                  401     401
other_scheme  get                 401                  401                  401                  401     401
empty         update_name         401                  401                  401                  401     401
empty         update_description  401                  401                  401                  401     401
empty         get                 401                  401                  401                  401     401
missing       update_name         401                  401                  401                  401     401
missing       update_description  401                  401                  401                  401     401
missing       get                 401                  401                  401                  401     401
`

/** WWW-Authenticate on a 401 by kind: with error="invalid_token" whenever a non-empty Bearer token was presented. */
const CHALLENGE: Partial<Record<Kind, string>> = {
  expired: INVALID_TOKEN, revoked: INVALID_TOKEN, suspended: INVALID_TOKEN, malformed: INVALID_TOKEN,
  other_scheme: REALM, empty: REALM, missing: REALM
}

const DEFAULT_CODE: Record<number, string> = { 401: 'unauthenticated', 404: 'not_found' }

/** A table's cells by `kind op visibility`. */
function cellsOf (table: string): Map<string, { status: number, code: string | null }> {
  const cells = new Map<string, { status: number, code: string | null }>()
  for (const line of table.trim().split('\n').slice(1)) {
    const [kind, op, ...row] = line.trim().split(/\s+/)
    row.forEach((cell, i) => {
      const [status, code] = cell.split(':')
      cells.set(`${kind} ${op} ${VISIBILITIES[i]}`, { status: Number(status), code: code ?? DEFAULT_CODE[Number(status)] ?? null })
    })
  }
  return cells
}
const expected = cellsOf(TABLE)

const { app: server, db } = await build(t)

const company = await createCompany(db)
const member = await createPerson(db, company.id)
const suspendedPerson = await createPerson(db, company.id, { suspended: true })
const space = await createSpace(db, company.id, [member.id, suspendedPerson.id])
const globex = await createCompany(db)
const outsider = await createPerson(db, globex.id)

/** How each visibility's project is made (the lifecycle operations make one per cell, below). */
const ACCESS_OF: Record<Visibility, { access: { public?: AccessLevel, company?: AccessLevel, space?: AccessLevel }, archived?: boolean }> = {
  public: { access: { public: 10, company: 40, space: 70 } },
  internal: { access: { company: 40 } },
  confidential: { access: { space: 100 } },
  secret: { access: { public: 0, company: 0, space: 0 } },
  archived: { access: { company: 70, space: 70 }, archived: true }
}

const projects: Record<Visibility, Awaited<ReturnType<typeof createProject>>> = {
  public: await createProject(db, space, { access: ACCESS_OF.public.access }),
  internal: await createProject(db, space, { access: ACCESS_OF.internal.access }),
  confidential: await createProject(db, space, { access: ACCESS_OF.confidential.access }),
  secret: await createProject(db, space, { access: { public: 0, company: 0, space: 0 } }),
  archived: await createProject(db, space, { access: { company: 70, space: 70 }, archived: true })
}

const write = await tokenFor(db, member.email)
const readOnly = await tokenFor(db, member.email, { readOnly: true })
const expired = await tokenFor(db, member.email, { expiresInDays: 1 })
await db.updateTable('api_tokens').set({ expires_at: new Date(Date.now() - 60_000) }).where('id', '=', expired.id).execute()
const revoked = await tokenFor(db, member.email)
await revokeToken(db, revoked.id)
const suspended = await tokenFor(db, suspendedPerson.email)
const foreign = await tokenFor(db, outsider.email)
const issued = [write, readOnly, expired, revoked, suspended, foreign]

const AUTHORIZATION: Record<Kind, string | undefined> = {
  write: `Bearer ${write.token}`,
  read_only: `Bearer ${readOnly.token}`,
  expired: `Bearer ${expired.token}`,
  revoked: `Bearer ${revoked.token}`,
  suspended: `Bearer ${suspended.token}`,
  foreign: `Bearer ${foreign.token}`,
  malformed: `Bearer ${write.token.slice(0, 20)}!!${write.token.slice(22)}`,
  other_scheme: `Basic ${Buffer.from(`${member.email}:${write.token}`).toString('base64')}`,
  empty: 'Bearer   ',
  missing: undefined
}

let serial = 0

function call (target: FastifyInstance, op: Op, id: string, authorization: string | undefined, value?: string) {
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization }
  if (op === 'get') return target.inject({ method: 'GET', url: `${BASE}/get`, query: { id }, headers })
  const field = op === 'update_name' ? 'name' : 'description'
  return target.inject({ method: 'POST', url: `${BASE}/${op}`, headers, payload: { project_id: id, [field]: value } })
}

async function rowState (id: string) {
  const { rows } = await sql<{ row: string, activities: string }>`
    SELECT (SELECT to_jsonb(p)::text FROM projects p WHERE p.id = ${id}) AS row,
           (SELECT count(*) FROM activities) AS activities`.execute(db)
  return { row: rows[0]!.row, activities: Number(rows[0]!.activities) }
}

function checkEnvelope (t: Test, res: LightMyRequestResponse, status: number, code: string | null, what: string) {
  t.match(res.headers['content-type'], /^application\/json/, `${what}: JSON`)
  const body = res.json()
  t.strictSame(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'], `${what}: the envelope, no details`)
  t.same({ statusCode: body.statusCode, error: body.error, code: body.code }, { statusCode: status, error: STATUS_CODES[status], code }, `${what}: its status and code`)
  t.type(body.message, 'string')
}

t.test('every token kind × operation × visibility answers as the table says', async (t) => {
  t.equal(expected.size, 10 * 3 * 5, 'the table has a cell for every combination')
  for (const kind of Object.keys(AUTHORIZATION) as Kind[]) {
    for (const op of ['update_name', 'update_description', 'get'] as Op[]) {
      for (const visibility of VISIBILITIES) {
        const what = `${kind} ${op} ${visibility}`
        const want = expected.get(what)!
        const project = projects[visibility]
        const value = op === 'update_name' ? `Renamed ${++serial}` : JSON.stringify({ type: 'doc', serial: ++serial })
        const before = await rowState(project.id)
        const res = await call(server, op, project.publicId, AUTHORIZATION[kind], value)
        const after = await rowState(project.id)

        t.equal(res.statusCode, want.status, `${what}: ${want.status} ${want.code ?? ''} (${res.body.slice(0, 120)})`)
        t.notMatch(res.body, LEAK, `${what}: no stack trace or SQL`)
        if (want.status === 200) {
          const body = res.json().project
          t.equal(body.id.endsWith(shortId(project.id)), true, `${what}: the addressed project`)
          if (visibility !== 'archived') t.equal(body.privacy, visibility, `${what}: privacy ${visibility}`)
          t.equal(body.is_archived, visibility === 'archived')
          if (op === 'get') {
            t.equal(after.row, before.row, `${what}: nothing written`)
          } else {
            const field = op === 'update_name' ? 'name' : 'description'
            t.equal(body[field], value, `${what}: answered with the new ${field}`)
            t.equal(JSON.parse(after.row)[field], value, `${what}: stored`)
            t.equal(after.activities, before.activities + 1, `${what}: one activity`)
          }
        } else {
          checkEnvelope(t, res, want.status, want.code, what)
          t.notMatch(res.body, TABLE_NAME, `${what}: no table names`)
          t.equal(after.row, before.row, `${what}: nothing written`)
          t.equal(after.activities, before.activities, `${what}: no activity`)
        }
        const challenge = want.status === 401 ? CHALLENGE[kind] : want.code === 'read_only_token' ? INSUFFICIENT_SCOPE : undefined
        t.equal(res.headers['www-authenticate'], challenge, `${what}: WWW-Authenticate ${challenge ?? 'absent'}`)
      }
    }
  }
})

// The same cells with conditional headers that never match: a stale If-Match on the
// mutations, If-None-Match: * on get. Authentication, read-only, visibility and
// permission answer first, exactly as in the table above; only where it says 200
// does the condition decide: 412 precondition_failed with the current tag for a
// mutation (nothing written), 304 with the tag and no body for get.
function conditionalCell (op: string, cell: { status: number, code: string | null }) {
  if (cell.status !== 200) return cell
  return op === 'get' ? { status: 304, code: null } : { status: 412, code: 'precondition_failed' }
}

t.test('every token kind × operation × visibility with a condition that never matches answers as its table says', async (t) => {
  const conditional = new Map([...expected].map(([key, cell]) => [key, conditionalCell(key.split(' ')[1]!, cell)]))
  t.equal(conditional.size, 10 * 3 * 5, 'the table has a cell for every combination')
  for (const kind of Object.keys(AUTHORIZATION) as Kind[]) {
    for (const op of ['update_name', 'update_description', 'get'] as Op[]) {
      for (const visibility of VISIBILITIES) {
        const what = `${kind} ${op} ${visibility}, conditional`
        const want = conditional.get(`${kind} ${op} ${visibility}`)!
        const project = projects[visibility]
        const headers: Record<string, string> = AUTHORIZATION[kind] === undefined ? {} : { authorization: AUTHORIZATION[kind] }
        const before = await rowState(project.id)
        const res = op === 'get'
          ? await server.inject({ method: 'GET', url: `${BASE}/get`, query: { id: project.publicId }, headers: { ...headers, 'if-none-match': '*' } })
          : await server.inject({
            method: 'POST', url: `${BASE}/${op}`, headers: { ...headers, 'if-match': '"stale"' },
            payload: { project_id: project.publicId, [op === 'update_name' ? 'name' : 'description']: op === 'update_name' ? `Never ${++serial}` : '"never"' }
          })
        const after = await rowState(project.id)

        t.equal(res.statusCode, want.status, `${what}: ${want.status} ${want.code ?? ''} (${res.body.slice(0, 120)})`)
        t.equal(after.row, before.row, `${what}: nothing written`)
        t.equal(after.activities, before.activities, `${what}: no activity`)
        if (want.status === 304) {
          t.equal(res.body, '', `${what}: no body`)
          t.match(res.headers.etag, /^"[A-Za-z0-9_-]{43}"$/, `${what}: the tag`)
          continue
        }
        checkEnvelope(t, res, want.status, want.code, what)
        t.notMatch(res.body, LEAK, `${what}: no stack trace or SQL`)
        if (want.status === 412) {
          const read = await server.inject({ method: 'GET', url: `${BASE}/get`, query: { id: project.publicId }, headers })
          t.equal(res.headers.etag, read.headers.etag, `${what}: the current tag`)
        } else {
          t.equal(res.headers.etag, undefined, `${what}: no tag before the condition is judged`)
        }
        const challenge = want.status === 401 ? CHALLENGE[kind] : want.code === 'read_only_token' ? INSUFFICIENT_SCOPE : undefined
        t.equal(res.headers['www-authenticate'], challenge, `${what}: WWW-Authenticate ${challenge ?? 'absent'}`)
      }
    }
  }
})

// The lifecycle operations (issue 64) under the same kinds and visibilities. Each
// cell has a project of its own, made as the projects above are (again after a 200,
// so every cell starts from the same state): paused for resume, with a contributor
// for update_contributor and delete_contributor, who are addressed by it. Full
// access is needed by move_to_space, delete, update_champion, update_reviewer and
// delete_contributor (the member has it only on the confidential project, whose
// space level is 100), edit access by the others. A 200 stores exactly its change
// with one activity; anything else writes nothing (the project, its contributors,
// activities, subscriptions, notifications, retrospectives, webhook deliveries).
type LifecycleOp = 'update_start_date' | 'update_due_date' | 'update_parent_goal' | 'move_to_space' | 'delete' | 'pause' | 'resume' | 'close' |
  'update_champion' | 'update_reviewer' | 'create_contributor' | 'update_contributor' | 'delete_contributor'
const LIFECYCLE_OPS: LifecycleOp[] = ['update_start_date', 'update_due_date', 'update_parent_goal', 'move_to_space', 'delete', 'pause', 'resume', 'close',
  'update_champion', 'update_reviewer', 'create_contributor', 'update_contributor', 'delete_contributor']
const LIFECYCLE_TABLE = `
kind          op                  public               internal             confidential         secret               archived
write         update_start_date   200                  403:forbidden        200                  404                  404
write         update_due_date     200                  403:forbidden        200                  404                  404
write         update_parent_goal  200                  403:forbidden        200                  404                  404
write         move_to_space       403:forbidden        403:forbidden        200                  404                  404
write         delete              403:forbidden        403:forbidden        200                  404                  404
write         pause               200                  403:forbidden        200                  404                  404
write         resume              200                  403:forbidden        200                  404                  404
write         close               200                  403:forbidden        200                  404                  404
write         update_champion     403:forbidden        403:forbidden        200                  404                  404
write         update_reviewer     403:forbidden        403:forbidden        200                  404                  404
write         create_contributor  200                  403:forbidden        200                  404                  404
write         update_contributor  200                  403:forbidden        200                  404                  404
write         delete_contributor  403:forbidden        403:forbidden        200                  404                  404
read_only     update_start_date   403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     update_due_date     403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     update_parent_goal  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     move_to_space       403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     delete              403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     pause               403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     resume              403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     close               403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     update_champion     403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     update_reviewer     403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     create_contributor  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     update_contributor  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
read_only     delete_contributor  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token  403:read_only_token
foreign       update_start_date   403:forbidden        404                  404                  404                  404
foreign       update_due_date     403:forbidden        404                  404                  404                  404
foreign       update_parent_goal  403:forbidden        404                  404                  404                  404
foreign       move_to_space       403:forbidden        404                  404                  404                  404
foreign       delete              403:forbidden        404                  404                  404                  404
foreign       pause               403:forbidden        404                  404                  404                  404
foreign       resume              403:forbidden        404                  404                  404                  404
foreign       close               403:forbidden        404                  404                  404                  404
foreign       update_champion     403:forbidden        404                  404                  404                  404
foreign       update_reviewer     403:forbidden        404                  404                  404                  404
foreign       create_contributor  403:forbidden        404                  404                  404                  404
foreign       update_contributor  403:forbidden        404                  404                  404                  404
foreign       delete_contributor  403:forbidden        404                  404                  404                  404
expired       update_start_date   401                  401                  401                  401                  401
expired       update_due_date     401                  401                  401                  401                  401
expired       update_parent_goal  401                  401                  401                  401                  401
expired       move_to_space       401                  401                  401                  401                  401
expired       delete              401                  401                  401                  401                  401
expired       pause               401                  401                  401                  401                  401
expired       resume              401                  401                  401                  401                  401
expired       close               401                  401                  401                  401                  401
expired       update_champion     401                  401                  401                  401                  401
expired       update_reviewer     401                  401                  401                  401                  401
expired       create_contributor  401                  401                  401                  401                  401
expired       update_contributor  401                  401                  401                  401                  401
expired       delete_contributor  401                  401                  401                  401                  401
revoked       update_start_date   401                  401                  401                  401                  401
revoked       update_due_date     401                  401                  401                  401                  401
revoked       update_parent_goal  401                  401                  401                  401                  401
revoked       move_to_space       401                  401                  401                  401                  401
revoked       delete              401                  401                  401                  401                  401
revoked       pause               401                  401                  401                  401                  401
revoked       resume              401                  401                  401                  401                  401
revoked       close               401                  401                  401                  401                  401
revoked       update_champion     401                  401                  401                  401                  401
revoked       update_reviewer     401                  401                  401                  401                  401
revoked       create_contributor  401                  401                  401                  401                  401
revoked       update_contributor  401                  401                  401                  401                  401
revoked       delete_contributor  401                  401                  401                  401                  401
suspended     update_start_date   401                  401                  401                  401                  401
suspended     update_due_date     401                  401                  401                  401                  401
suspended     update_parent_goal  401                  401                  401                  401                  401
suspended     move_to_space       401                  401                  401                  401                  401
suspended     delete              401                  401                  401                  401                  401
suspended     pause               401                  401                  401                  401                  401
suspended     resume              401                  401                  401                  401                  401
suspended     close               401                  401                  401                  401                  401
suspended     update_champion     401                  401                  401                  401                  401
suspended     update_reviewer     401                  401                  401                  401                  401
suspended     create_contributor  401                  401                  401                  401                  401
suspended     update_contributor  401                  401                  401                  401                  401
suspended     delete_contributor  401                  401                  401                  401                  401
malformed     update_start_date   401                  401                  401                  401                  401
malformed     update_due_date     401                  401                  401                  401                  401
malformed     update_parent_goal  401                  401                  401                  401                  401
malformed     move_to_space       401                  401                  401                  401                  401
malformed     delete              401                  401                  401                  401                  401
malformed     pause               401                  401                  401                  401                  401
malformed     resume              401                  401                  401                  401                  401
malformed     close               401                  401                  401                  401                  401
malformed     update_champion     401                  401                  401                  401                  401
malformed     update_reviewer     401                  401                  401                  401                  401
malformed     create_contributor  401                  401                  401                  401                  401
malformed     update_contributor  401                  401                  401                  401                  401
malformed     delete_contributor  401                  401                  401                  401                  401
other_scheme  update_start_date   401                  401                  401                  401                  401
other_scheme  update_due_date     401                  401                  401                  401                  401
other_scheme  update_parent_goal  401                  401                  401                  401                  401
other_scheme  move_to_space       401                  401                  401                  401                  401
other_scheme  delete              401                  401                  401                  401                  401
other_scheme  pause               401                  401                  401                  401                  401
other_scheme  resume              401                  401                  401                  401                  401
other_scheme  close               401                  401                  401                  401                  401
other_scheme  update_champion     401                  401                  401                  401                  401
other_scheme  update_reviewer     401                  401                  401                  401                  401
other_scheme  create_contributor  401                  401                  401                  401                  401
other_scheme  update_contributor  401                  401                  401                  401                  401
other_scheme  delete_contributor  401                  401                  401                  401                  401
empty         update_start_date   401                  401                  401                  401                  401
empty         update_due_date     401                  401                  401                  401                  401
empty         update_parent_goal  401                  401                  401                  401                  401
empty         move_to_space       401                  401                  401                  401                  401
empty         delete              401                  401                  401                  401                  401
empty         pause               401                  401                  401                  401                  401
empty         resume              401                  401                  401                  401                  401
empty         close               401                  401                  401                  401                  401
empty         update_champion     401                  401                  401                  401                  401
empty         update_reviewer     401                  401                  401                  401                  401
empty         create_contributor  401                  401                  401                  401                  401
empty         update_contributor  401                  401                  401                  401                  401
empty         delete_contributor  401                  401                  401                  401                  401
missing       update_start_date   401                  401                  401                  401                  401
missing       update_due_date     401                  401                  401                  401                  401
missing       update_parent_goal  401                  401                  401                  401                  401
missing       move_to_space       401                  401                  401                  401                  401
missing       delete              401                  401                  401                  401                  401
missing       pause               401                  401                  401                  401                  401
missing       resume              401                  401                  401                  401                  401
missing       close               401                  401                  401                  401                  401
missing       update_champion     401                  401                  401                  401                  401
missing       update_reviewer     401                  401                  401                  401                  401
missing       create_contributor  401                  401                  401                  401                  401
missing       update_contributor  401                  401                  401                  401                  401
missing       delete_contributor  401                  401                  401                  401                  401
`
const lifecycleExpected = cellsOf(LIFECYCLE_TABLE)

const colleague = await createPerson(db, company.id)
const targetSpace = await createSpace(db, company.id, [member.id])
const goal = await db.insertInto('goals').values({
  company_id: company.id, space_id: space.id, name: 'Grow', timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null,
  timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null
}).returning('id').executeTakeFirstOrThrow()
const START = { date: '2026-03-02', date_type: 'day', value: 'Mar 2, 2026' }
const DUE = { date: '2026-12-31', date_type: 'quarter', value: 'Q4 2026' }
const richText = (text: string) => JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] })

interface Fixture { project: Awaited<ReturnType<typeof createProject>>, binding: string | null }
const fixtures = new Map<string, Fixture>()

/** The cell's project, made on first use and after every 200. */
async function fixture (op: LifecycleOp, visibility: Visibility): Promise<Fixture> {
  const key = `${op} ${visibility}`
  const found = fixtures.get(key)
  if (found !== undefined) return found
  const { access, archived } = ACCESS_OF[visibility]
  const project = await createProject(db, space, { access, archived, state: op === 'resume' ? 'paused' : 'active' })
  const binding = op === 'update_contributor' || op === 'delete_contributor' ? (await addContributor(db, project.id, colleague.id, 'contributor', 10)).id : null
  const made = { project, binding }
  fixtures.set(key, made)
  return made
}

/** The operation's valid body; `id` addresses another project (or contributor) than the fixture's. */
function lifecycleBody (op: LifecycleOp, { project, binding }: Fixture, id?: string): Record<string, unknown> {
  if (op === 'update_contributor') return { contrib_id: id ?? shortId(binding!), responsibility: 'Runs it now' }
  if (op === 'delete_contributor') return { contrib_id: id ?? shortId(binding!) }
  const own: Record<LifecycleOp, Record<string, unknown>> = {
    update_start_date: { start_date: START },
    update_due_date: { due_date: DUE },
    update_parent_goal: { goal_id: shortId(goal.id) },
    move_to_space: { space_id: shortId(targetSpace.id) },
    delete: {},
    pause: { message: richText('Waiting') },
    resume: { message: richText('Going on') },
    close: { retrospective: richText('Done'), success_status: 'achieved' },
    update_champion: { champion_id: shortId(colleague.id) },
    update_reviewer: { reviewer_id: shortId(colleague.id) },
    create_contributor: { person_id: shortId(colleague.id), responsibility: 'Runs it', permissions: 'view_access' },
    update_contributor: {},
    delete_contributor: {}
  }
  return { project_id: id ?? project.publicId, ...own[op] }
}

interface Binding { person_id: string, role: string, responsibility: string | null }
type Row = Record<string, unknown> | null
const has = (bindings: Binding[], role: string, responsibility?: string) =>
  bindings.some((b) => b.person_id === colleague.id && b.role === role && (responsibility === undefined || b.responsibility === responsibility))

/** What a 200 of each operation stored, read from the project's row and contributors after it. */
const STORED: Record<LifecycleOp, (row: Row, bindings: Binding[]) => boolean> = {
  update_start_date: (row) => row?.timeframe_start_date === START.date && row.timeframe_start_type === 'day' && row.timeframe_start_value === START.value,
  update_due_date: (row) => row?.timeframe_end_date === DUE.date && row.timeframe_end_type === 'quarter' && row.timeframe_end_value === DUE.value,
  update_parent_goal: (row) => row?.goal_id === goal.id,
  move_to_space: (row) => row?.space_id === targetSpace.id,
  delete: (row, bindings) => row === null && bindings.length === 0,
  pause: (row) => row?.state === 'paused',
  resume: (row) => row?.state === 'active',
  close: (row) => row?.state === 'closed' && row.success_status === 'achieved' && row.closed_at !== null,
  update_champion: (_, bindings) => has(bindings, 'champion'),
  update_reviewer: (_, bindings) => has(bindings, 'reviewer'),
  create_contributor: (_, bindings) => has(bindings, 'contributor', 'Runs it'),
  update_contributor: (_, bindings) => has(bindings, 'contributor', 'Runs it now'),
  delete_contributor: (_, bindings) => bindings.length === 0
}

/** The project's row and contributors, and how many rows every table a change may write holds. */
async function lifecycleState (id: string) {
  const { rows } = await sql<{ row: Row, bindings: Binding[], activities: string, others: string }>`
    SELECT (SELECT to_jsonb(p) FROM projects p WHERE p.id = ${id}) AS row,
           (SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.id), '[]') FROM project_contributors c WHERE c.project_id = ${id}) AS bindings,
           (SELECT count(*) FROM activities) AS activities,
           concat_ws(' ', (SELECT count(*) FROM projects), (SELECT count(*) FROM project_contributors), (SELECT count(*) FROM subscriptions),
             (SELECT count(*) FROM notifications), (SELECT count(*) FROM project_retrospectives), (SELECT count(*) FROM webhook_deliveries)) AS others`.execute(db)
  return { ...rows[0]!, activities: Number(rows[0]!.activities) }
}

/** One cell: the operation's valid body, with a stale If-Match when `conditional` (a 200 then becomes 412). */
async function lifecycleCell (t: Test, kind: Kind, op: LifecycleOp, visibility: Visibility, conditional: boolean) {
  const cell = lifecycleExpected.get(`${kind} ${op} ${visibility}`)!
  const want = conditional ? conditionalCell(op, cell) : cell
  const what = `${kind} ${op} ${visibility}${conditional ? ', conditional' : ''}`
  const made = await fixture(op, visibility)
  const headers: Record<string, string> = AUTHORIZATION[kind] === undefined ? {} : { authorization: AUTHORIZATION[kind] }
  if (conditional) headers['if-match'] = '"stale"'
  const before = await lifecycleState(made.project.id)
  const res = await server.inject({ method: 'POST', url: `${BASE}/${op}`, headers, payload: lifecycleBody(op, made) })
  const after = await lifecycleState(made.project.id)

  t.equal(res.statusCode, want.status, `${what}: ${want.status} ${want.code ?? ''} (${res.body.slice(0, 120)})`)
  t.notMatch(res.body, LEAK, `${what}: no stack trace or SQL`)
  if (want.status === 200) {
    fixtures.delete(`${op} ${visibility}`)
    const body = res.json()
    t.equal(body.project.id.endsWith(shortId(made.project.id)), true, `${what}: the addressed project`)
    t.equal(body.project.privacy, visibility, `${what}: privacy ${visibility}`)
    t.match(res.headers.etag, /^"[A-Za-z0-9_-]{43}"$/, `${what}: its tag`)
    t.ok(STORED[op](after.row, after.bindings), `${what}: stored (${JSON.stringify(after.bindings).slice(0, 200)})`)
    t.equal(after.activities, before.activities + 1, `${what}: one activity`)
  } else {
    checkEnvelope(t, res, want.status, want.code, what)
    t.notMatch(res.body, TABLE_NAME, `${what}: no table names`)
    t.same(after, before, `${what}: nothing written`)
    if (want.status === 412) {
      const read = await server.inject({ method: 'GET', url: `${BASE}/get`, query: { id: made.project.publicId }, headers: { authorization: AUTHORIZATION.write! } })
      t.equal(res.headers.etag, read.headers.etag, `${what}: the current tag`)
    } else {
      t.equal(res.headers.etag, undefined, `${what}: no tag`)
    }
  }
  const challenge = want.status === 401 ? CHALLENGE[kind] : want.code === 'read_only_token' ? INSUFFICIENT_SCOPE : undefined
  t.equal(res.headers['www-authenticate'], challenge, `${what}: WWW-Authenticate ${challenge ?? 'absent'}`)
}

t.test('every token kind × lifecycle operation × visibility answers as its table says', async (t) => {
  t.equal(lifecycleExpected.size, 10 * LIFECYCLE_OPS.length * 5, 'the table has a cell for every combination')
  for (const kind of Object.keys(AUTHORIZATION) as Kind[]) {
    for (const op of LIFECYCLE_OPS) {
      for (const visibility of VISIBILITIES) await lifecycleCell(t, kind, op, visibility, false)
    }
  }
})

t.test('every token kind × lifecycle operation × visibility with a stale If-Match answers as its table says, a 200 as 412', async (t) => {
  for (const kind of Object.keys(AUTHORIZATION) as Kind[]) {
    for (const op of LIFECYCLE_OPS) {
      for (const visibility of VISIBILITIES) await lifecycleCell(t, kind, op, visibility, true)
    }
  }
})

// projects/create, addressed to a space: the member's own (edit access: they are a
// member), one the company may view (40), one hidden from it. Takes no If-Match.
const CREATE_TABLE = `
kind          own                  viewable             hidden
write         200                  403:forbidden        404
read_only     403:read_only_token  403:read_only_token  403:read_only_token
foreign       404                  404                  404
expired       401                  401                  401
revoked       401                  401                  401
suspended     401                  401                  401
malformed     401                  401                  401
other_scheme  401                  401                  401
empty         401                  401                  401
missing       401                  401                  401
`
const viewableSpace = await createSpace(db, company.id)
await db.updateTable('spaces').set({ company_access: 40 }).where('id', '=', viewableSpace.id).execute()
const hiddenSpace = await createSpace(db, company.id)
const createBody = (spaceId: string) => ({
  space_id: spaceId, name: `Created ${++serial}`, anonymous_access_level: 0, company_access_level: 40, space_access_level: 70
})

t.test('every token kind × projects/create × space answers as its table says', async (t) => {
  const [header, ...rows] = CREATE_TABLE.trim().split('\n').map((line) => line.trim().split(/\s+/))
  const spaces: Record<string, { id: string }> = { own: space, viewable: viewableSpace, hidden: hiddenSpace }
  t.equal(rows.length * (header!.length - 1), 10 * 3, 'a cell for every combination')
  for (const [kind, ...cells] of rows as Array<[Kind, ...string[]]>) {
    for (const [i, column] of header!.slice(1).entries()) {
      const what = `${kind} create ${column}`
      const [statusText, code] = cells[i]!.split(':')
      const status = Number(statusText)
      const headers: Record<string, string> = AUTHORIZATION[kind] === undefined ? {} : { authorization: AUTHORIZATION[kind] }
      const body = createBody(shortId(spaces[column]!.id))
      const before = await lifecycleState(randomUUID())
      const res = await server.inject({ method: 'POST', url: `${BASE}/create`, headers, payload: body })
      const after = await lifecycleState(randomUUID())
      t.equal(res.statusCode, status, `${what}: ${cells[i]} (${res.body.slice(0, 120)})`)
      t.notMatch(res.body, LEAK, `${what}: no stack trace or SQL`)
      if (status === 200) {
        const created = await db.selectFrom('projects').select(['id', 'space_id']).where('name', '=', body.name).execute()
        t.same(created.map((p) => p.space_id), [spaces[column]!.id], `${what}: one project in the space`)
        t.equal(res.json().project.id.endsWith(shortId(created[0]!.id)), true, `${what}: answered the new project`)
        t.equal(after.activities, before.activities + 1, `${what}: one activity`)
        continue
      }
      checkEnvelope(t, res, status, code ?? DEFAULT_CODE[status] ?? null, what)
      t.notMatch(res.body, TABLE_NAME, `${what}: no table names`)
      t.same(after, before, `${what}: nothing written`)
      const challenge = status === 401 ? CHALLENGE[kind] : code === 'read_only_token' ? INSUFFICIENT_SCOPE : undefined
      t.equal(res.headers['www-authenticate'], challenge, `${what}: WWW-Authenticate`)
    }
  }
  // The tables below see only the projects above: the lifecycle's are made again when needed.
  await db.deleteFrom('projects').where('id', 'not in', Object.values(projects).map((p) => p.id)).execute()
  fixtures.clear()
})

// The queries beyond the project ones: every token kind on each, answered as the
// table says, and what a 200 shows is the token's own (its person, its company, the
// projects it can see: for the member public, internal and confidential, and the
// archived one when asked; for the outsider the public one).
const QUERIES: Record<string, string> = {
  get_me: '/api/external/v1/people/get_me',
  get_company: '/api/external/v1/companies/get?include_admins=true&include_people=true',
  list: '/api/external/v1/projects/list',
  list_archived: '/api/external/v1/projects/list?include_archived=true&limit=1'
}
const QUERY_TABLE = `
kind          get_me  get_company  list  list_archived
write         200     200          200   200
read_only     200     200          200   200
foreign       200     200          200   200
expired       401     401          401   401
revoked       401     401          401   401
suspended     401     401          401   401
malformed     401     401          401   401
other_scheme  401     401          401   401
empty         401     401          401   401
missing       401     401          401   401
`

t.test('every token kind × every other query answers as the table says, and only with what is its own', async (t) => {
  const rows = QUERY_TABLE.trim().split('\n').slice(1).map((line) => line.trim().split(/\s+/))
  t.equal(rows.length * (rows[0]!.length - 1), 10 * 4, 'a cell for every combination')
  const ownProjects = {
    member: [projects.public, projects.internal, projects.confidential].map((p) => p.id).sort(),
    memberArchived: [projects.public, projects.internal, projects.confidential, projects.archived].map((p) => p.id).sort(),
    outsider: [projects.public.id]
  }
  for (const [kind, ...cells] of rows as Array<[Kind, ...string[]]>) {
    const queries = Object.entries(QUERIES)
    for (const [i, [query, url]] of queries.entries()) {
      const what = `${kind} ${query}`
      const status = Number(cells[i])
      const headers: Record<string, string> = AUTHORIZATION[kind] === undefined ? {} : { authorization: AUTHORIZATION[kind] }
      const res = await server.inject({ method: 'GET', url, headers })
      t.equal(res.statusCode, status, `${what}: ${status} (${res.body.slice(0, 120)})`)
      t.notMatch(res.body, LEAK, `${what}: no stack trace or SQL`)
      t.equal(res.headers['cache-control'], 'no-store', `${what}: not cached`)
      if (status !== 200) {
        checkEnvelope(t, res, status, 'unauthenticated', what)
        t.equal(res.headers['www-authenticate'], CHALLENGE[kind], `${what}: WWW-Authenticate`)
        continue
      }
      const person = kind === 'foreign' ? outsider : member
      const body = res.json()
      if (query === 'get_me') t.equal(body.me.email, person.email, `${what}: the token's person`)
      if (query === 'get_company') {
        t.equal(body.company.id, shortId(kind === 'foreign' ? globex.id : company.id), `${what}: the person's company`)
        t.ok(body.company.people.every((p: { email: string }) => p.email !== suspendedPerson.email), `${what}: no suspended person`)
      }
      if (query.startsWith('list')) {
        // Every page, following the cursors.
        const ids: string[] = []
        let page = body
        for (;;) {
          ids.push(...page.projects.map((p: { id: string }) => p.id))
          if (page.next_cursor === null) break
          page = (await server.inject({ method: 'GET', url: `${url}&cursor=${encodeURIComponent(page.next_cursor)}`.replace('list&', 'list?'), headers })).json()
        }
        const want = kind === 'foreign' ? ownProjects.outsider : query === 'list' ? ownProjects.member : ownProjects.memberArchived
        t.same(ids.map((id) => Object.values(projects).find((p) => id.endsWith(shortId(p.id)))!.id).sort(), want, `${what}: exactly the projects it can see`)
      }
    }
  }
})

// The notification operations: every token kind on each. A notification of the
// member's (reset to unread before each call) is marked only by the member's write
// token; the outsider's mark of it is the 404 of an unknown id, and every refusal
// leaves it unread.
const NOTIFICATIONS = '/api/external/v1/notifications'
const NOTIFICATION_TABLE = `
kind          list  get_unread_count  mark_as_read         mark_many_as_read    mark_all_as_read
write         200   200               200                  200                  200
read_only     200   200               403:read_only_token  403:read_only_token  403:read_only_token
foreign       200   200               404                  404                  200
expired       401   401               401                  401                  401
revoked       401   401               401                  401                  401
suspended     401   401               401                  401                  401
malformed     401   401               401                  401                  401
other_scheme  401   401               401                  401                  401
empty         401   401               401                  401                  401
missing       401   401               401                  401                  401
`

t.test('every token kind × notification operation answers as the table says, and marks only its own', async (t) => {
  const note = (await notifyOf(db, [{ person_id: member.id, project_id: projects.internal.id, action: 'project_description_changed' }]))[0]!
  const [header, ...rows] = NOTIFICATION_TABLE.trim().split('\n').map((line) => line.trim().split(/\s+/))
  const ops = header!.slice(1)
  t.equal(rows.length * ops.length, 10 * 5, 'a cell for every combination')
  const read = async () => (await db.selectFrom('notifications').select('read').where('id', '=', note.id).executeTakeFirstOrThrow()).read
  for (const [kind, ...cells] of rows as Array<[Kind, ...string[]]>) {
    for (const [i, op] of ops.entries()) {
      const what = `${kind} ${op}`
      const [statusText, code] = cells[i]!.split(':')
      const status = Number(statusText)
      await db.updateTable('notifications').set({ read: false, read_at: null }).where('id', '=', note.id).execute()
      const headers: Record<string, string> = AUTHORIZATION[kind] === undefined ? {} : { authorization: AUTHORIZATION[kind] }
      const payload = op === 'mark_as_read' ? { id: shortId(note.id) } : op === 'mark_many_as_read' ? { ids: [shortId(note.id)] } : {}
      const res = op === 'list' || op === 'get_unread_count'
        ? await server.inject({ method: 'GET', url: `${NOTIFICATIONS}/${op}`, headers })
        : await server.inject({ method: 'POST', url: `${NOTIFICATIONS}/${op}`, headers, payload })
      t.equal(res.statusCode, status, `${what}: ${cells[i]} (${res.body.slice(0, 120)})`)
      t.notMatch(res.body, LEAK, `${what}: no stack trace or SQL`)
      const marks = op.startsWith('mark')
      t.equal(await read(), status === 200 && marks && kind === 'write', `${what}: the member's notification ${status === 200 && marks && kind === 'write' ? 'marked' : 'left unread'}`)
      if (status !== 200) {
        checkEnvelope(t, res, status, code ?? DEFAULT_CODE[status] ?? null, what)
        t.notMatch(res.body, TABLE_NAME, `${what}: no table names`)
        const challenge = status === 401 ? CHALLENGE[kind] : code === 'read_only_token' ? INSUFFICIENT_SCOPE : undefined
        t.equal(res.headers['www-authenticate'], challenge, `${what}: WWW-Authenticate`)
        continue
      }
      const body = res.json()
      const own = kind === 'foreign' ? 0 : 1
      if (op === 'list') t.same(body.notifications.map((n: { id: string }) => n.id), own ? [shortId(note.id)] : [], `${what}: only its own`)
      else if (op === 'get_unread_count') t.same(body, { unread: own }, `${what}: only its own`)
      else t.same(body, {}, what)
    }
  }
})

// The webhook operations: every token kind on each, against a webhook of the
// member's company (made afresh before each call). Only the company's admin manages
// it; the admin of another company gets the 404 of an unknown id for it (and its
// own, empty, list); a refusal changes nothing.
const WEBHOOKS = '/api/external/v1/webhooks'
const WEBHOOK_TABLE = `
kind             create               list           delete               rotate_secret        list_deliveries
admin            200                  200            200                  200                  200
admin_read_only  403:read_only_token  200            403:read_only_token  403:read_only_token  200
foreign_admin    200                  200            404                  404                  404
write            403:forbidden        403:forbidden  403:forbidden        403:forbidden        403:forbidden
read_only        403:read_only_token  403:forbidden  403:read_only_token  403:read_only_token  403:forbidden
foreign          403:forbidden        403:forbidden  403:forbidden        403:forbidden        403:forbidden
expired          401                  401            401                  401                  401
revoked          401                  401            401                  401                  401
suspended        401                  401            401                  401                  401
malformed        401                  401            401                  401                  401
other_scheme     401                  401            401                  401                  401
empty            401                  401            401                  401                  401
missing          401                  401            401                  401                  401
`

t.test('every token kind × webhook operation answers as the table says, and manages only its company\'s', async (t) => {
  const admin = await createPerson(db, company.id, { isAdmin: true })
  const foreignAdmin = await createPerson(db, globex.id, { isAdmin: true })
  const admins = {
    admin: await tokenFor(db, admin.email),
    admin_read_only: await tokenFor(db, admin.email, { readOnly: true }),
    foreign_admin: await tokenFor(db, foreignAdmin.email)
  }
  issued.push(...Object.values(admins)) // looked for in clear below too
  const authorization: Record<string, string | undefined> = {
    ...AUTHORIZATION, ...Object.fromEntries(Object.entries(admins).map(([kind, { token }]) => [kind, `Bearer ${token}`]))
  }
  const [header, ...rows] = WEBHOOK_TABLE.trim().split('\n').map((line) => line.trim().split(/\s+/))
  const ops = header!.slice(1)
  t.equal(rows.length * ops.length, 13 * 5, 'a cell for every combination')
  const state = async () => db.selectFrom('webhooks').select(['id', 'company_id', 'url', 'secret']).orderBy('inserted_at').orderBy('id').execute()
  for (const [kind, ...cells] of rows as Array<[string, ...string[]]>) {
    for (const [i, op] of ops.entries()) {
      const what = `${kind} ${op}`
      const [statusText, code] = cells[i]!.split(':')
      const status = Number(statusText)
      await db.deleteFrom('webhooks').execute()
      const hook = await db.insertInto('webhooks').values({
        company_id: company.id, url: 'https://hooks.example.com/a', events: ['project.renamed'], secret: 'whsec_' + randomBytes(32).toString('base64')
      }).returning('id').executeTakeFirstOrThrow()
      const before = await state()
      const headers: Record<string, string> = authorization[kind] === undefined ? {} : { authorization: authorization[kind] }
      const res = op === 'list' || op === 'list_deliveries'
        ? await server.inject({ method: 'GET', url: `${WEBHOOKS}/${op}`, query: op === 'list' ? {} : { webhook_id: shortId(hook.id) }, headers })
        : await server.inject({ method: 'POST', url: `${WEBHOOKS}/${op}`, headers, payload: op === 'create' ? { url: 'https://hooks.example.com/b' } : { id: shortId(hook.id) } })
      t.equal(res.statusCode, status, `${what}: ${cells[i]} (${res.body.slice(0, 120)})`)
      t.notMatch(res.body, LEAK, `${what}: no stack trace or SQL`)
      const after = await state()
      if (status !== 200) {
        checkEnvelope(t, res, status, code ?? DEFAULT_CODE[status] ?? null, what)
        const challenge = status === 401 ? CHALLENGE[kind as Kind] : code === 'read_only_token' ? INSUFFICIENT_SCOPE : undefined
        t.equal(res.headers['www-authenticate'], challenge, `${what}: WWW-Authenticate`)
        t.same(after, before, `${what}: nothing changed`)
        continue
      }
      const body = res.json()
      if (op === 'create') {
        t.equal(after.length, 2, `${what}: one more webhook`)
        t.equal(after[1]!.company_id, kind === 'foreign_admin' ? globex.id : company.id, `${what}: of the caller's company`)
        t.equal(body.secret, after[1]!.secret, `${what}: its secret shown once`)
      } else if (op === 'list') {
        t.same(body.webhooks.map((w: { id: string }) => w.id), kind === 'foreign_admin' ? [] : [shortId(hook.id)], `${what}: only its company's`)
        t.same(after, before)
      } else if (op === 'delete') {
        t.same(after, [], `${what}: deleted`)
      } else if (op === 'rotate_secret') {
        t.not(after[0]!.secret, before[0]!.secret, `${what}: a new secret`)
        t.equal(body.secret, after[0]!.secret)
      } else {
        t.same(body, { deliveries: [], stranded: 0 }, what)
        t.same(after, before)
      }
    }
  }
  await db.deleteFrom('webhooks').execute()
})

t.test('no token is stored in clear: every column of every table', async (t) => {
  const { rows: tables } = await sql<{ name: string }>`
    SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name FROM pg_tables
    WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`.execute(db)
  const names = tables.map((r) => r.name)
  t.ok(names.some((n) => n.endsWith('api_tokens')), 'api_tokens is searched')
  t.ok(names.some((n) => n.endsWith('activities')), 'activities is searched')

  const count = async (needle: string) => {
    let hits = 0
    for (const table of names) {
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.raw(table)} t WHERE strpos(to_jsonb(t)::text, ${needle}) > 0`.execute(db)
      hits += Number(rows[0]!.n)
    }
    return hits
  }
  t.ok(await count(member.email) > 0, 'the search finds what is there (an e-mail)')
  t.equal(Number((await sql<{ n: string }>`SELECT count(*) AS n FROM api_tokens`.execute(db)).rows[0]!.n), issued.length, 'the tokens exist')
  for (const { token } of issued) {
    const secret = token.slice(token.indexOf('_') + 1)
    t.equal(await count(token), 0, `token ${token.slice(0, 8)}… nowhere`)
    t.equal(await count(secret), 0, `its secret part ${secret.slice(0, 4)}… nowhere`)
    t.equal(await count(secret.slice(0, 16)), 0, 'not even its first 16 characters')
  }
})

t.test("an invisible project's 404 is byte for byte the 404 of a project that does not exist", async (t) => {
  const missing = randomUUID()
  // Drop only what differs on every response by design.
  const headers = (res: LightMyRequestResponse) => {
    const { date: _d, 'x-request-id': _r, ...rest } = res.headers
    return rest
  }
  const cases: Array<[string, string | undefined, string]> = [
    ['secret, member', AUTHORIZATION.write, projects.secret.publicId],
    ['secret by short id, member', AUTHORIZATION.write, shortId(projects.secret.id)],
    ['secret by UUID, member', AUTHORIZATION.write, projects.secret.id],
    ['confidential, outsider', AUTHORIZATION.foreign, projects.confidential.publicId],
    ['internal, outsider', AUTHORIZATION.foreign, projects.internal.publicId]
  ]
  for (const op of ['update_name', 'update_description', 'get'] as Op[]) {
    const value = op === 'update_name' ? 'Probe' : '{"probe":true}'
    const absent = await call(server, op, shortId(missing), AUTHORIZATION.write, value)
    t.equal(absent.statusCode, 404)
    for (const [what, authorization, id] of cases) {
      const res = await call(server, op, id, authorization, value)
      t.equal(res.statusCode, 404, `${op}, ${what}: 404`)
      t.equal(res.body, absent.body, `${op}, ${what}: same body bytes`)
      t.same(headers(res), headers(absent), `${op}, ${what}: same headers`)
    }
    if (op !== 'get') {
      const archived = await call(server, op, projects.archived.publicId, AUTHORIZATION.write, value)
      t.equal(archived.body, absent.body, `${op}, archived: same body bytes`)
      t.same(headers(archived), headers(absent), `${op}, archived: same headers`)
    }
  }
})

t.test("under every lifecycle operation and create, what cannot be seen is 404 byte for byte as what does not exist", async (t) => {
  const headers = (res: LightMyRequestResponse) => {
    const { date: _d, 'x-request-id': _r, ...rest } = res.headers
    return rest
  }
  const send = (op: string, payload: Record<string, unknown>, authorization: string) =>
    server.inject({ method: 'POST', url: `${BASE}/${op}`, headers: { authorization }, payload })
  for (const op of LIFECYCLE_OPS) {
    const byContributor = op === 'update_contributor' || op === 'delete_contributor'
    const absent = await send(op, lifecycleBody(op, await fixture(op, 'confidential'), shortId(randomUUID())), AUTHORIZATION.write!)
    t.equal(absent.statusCode, 404, `${op}: unknown id`)
    const cases: Array<[string, string, Visibility]> = [['member', AUTHORIZATION.write!, 'secret'], ['member', AUTHORIZATION.write!, 'archived'],
      ['outsider', AUTHORIZATION.foreign!, 'confidential'], ['outsider', AUTHORIZATION.foreign!, 'internal']]
    for (const [who, authorization, visibility] of cases) {
      const made = await fixture(op, visibility)
      const uuid = byContributor ? made.binding! : made.project.id
      for (const id of [shortId(uuid), uuid, ...(byContributor ? [] : [made.project.publicId])]) {
        const res = await send(op, lifecycleBody(op, made, id), authorization)
        t.equal(res.body, absent.body, `${op}, ${visibility}, ${who}, ${id}: same body bytes`)
        t.same(headers(res), headers(absent), `${op}, ${visibility}, ${who}: same headers`)
      }
    }
  }
  const absent = await send('create', createBody(shortId(randomUUID())), AUTHORIZATION.write!)
  t.equal(absent.statusCode, 404, 'create: unknown space')
  for (const [who, authorization, target] of [['member', AUTHORIZATION.write!, hiddenSpace], ['outsider', AUTHORIZATION.foreign!, space]] as const) {
    const res = await send('create', createBody(shortId(target.id)), authorization)
    t.equal(res.body, absent.body, `create, ${who}: same body bytes`)
    t.same(headers(res), headers(absent), `create, ${who}: same headers`)
  }
})

/** A valid update_description body of exactly `size` bytes. */
function bodyOfSize (id: string, size: number): string {
  const head = `{"project_id":${JSON.stringify(id)},"description":"\\"`
  const tail = '\\""}'
  return `${head}${'x'.repeat(size - head.length - tail.length)}${tail}`
}

async function expectTooLarge (t: Test, target: FastifyInstance, targetDb: Db, id: string, payload: string, message: string) {
  const count = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM activities`.execute(targetDb)).rows[0]!.n)
  const digest = async () => (await sql<{ d: string }>`SELECT md5(string_agg(to_jsonb(p)::text, ',' ORDER BY id)) AS d FROM projects p`.execute(targetDb)).rows[0]!.d
  const before = { activities: await count(), projects: await digest() }
  const res = await target.inject({
    method: 'POST', url: `${BASE}/update_description`, payload, headers: { authorization: AUTHORIZATION.write!, 'content-type': 'application/json' }
  })
  t.equal(res.statusCode, 413)
  t.same(res.json(), { statusCode: 413, error: 'Payload Too Large', code: 'payload_too_large', message })
  t.equal(await count(), before.activities, 'no activity')
  t.equal(await digest(), before.projects, 'no project changed')
}

t.test('a body over the limit is 413 in the envelope and writes nothing', async (t) => {
  const id = projects.confidential.publicId
  const limit = 1024 * 1024
  const over = bodyOfSize(id, limit + 1)
  t.equal(Buffer.byteLength(over), limit + 1)
  await expectTooLarge(t, server, db, id, over, 'body is larger than 1 MiB')
  await expectTooLarge(t, server, db, id, bodyOfSize(id, 8 * limit), 'body is larger than 1 MiB')

  // BODY_LIMIT_BYTES moves the limit: at it is read, one byte past it is not.
  const small = await build(t, { env: { BODY_LIMIT_BYTES: '4096' } })
  const c = await createCompany(small.db)
  const p = await createPerson(small.db, c.id)
  const s = await createSpace(small.db, c.id, [p.id])
  const project = await createProject(small.db, s, { access: { space: 70 } })
  const token = await tokenFor(small.db, p.email)
  const atLimit = bodyOfSize(project.publicId, 4096)
  t.equal(Buffer.byteLength(atLimit), 4096)
  const ok = await small.app.inject({
    method: 'POST', url: `${BASE}/update_description`, payload: atLimit, headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' }
  })
  t.equal(ok.statusCode, 200, 'a body of exactly the limit is accepted')
  t.equal(ok.json().project.description, JSON.parse(atLimit).description)

  const res = await small.app.inject({
    method: 'POST',
    url: `${BASE}/update_description`,
    payload: bodyOfSize(project.publicId, 4097),
    headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' }
  })
  t.equal(res.statusCode, 413)
  t.same(res.json(), { statusCode: 413, error: 'Payload Too Large', code: 'payload_too_large', message: 'body is larger than 4 KiB' })
  const row = await small.db.selectFrom('projects').select('description').where('id', '=', project.id).executeTakeFirstOrThrow()
  t.equal(row.description, JSON.parse(atLimit).description, 'the refused body wrote nothing')
})

t.test('no token ever reaches the logs, at trace level, whatever the request', async (t) => {
  const lines: string[] = []
  const { app: logged, db } = await build(t, { env: { LOG_LEVEL: 'trace' }, logStream: { write: (line: string) => { lines.push(line) } } })

  const c = await createCompany(db)
  const p = await createPerson(db, c.id)
  const s = await createSpace(db, c.id, [p.id])
  const project = await createProject(db, s, { access: { space: 70 } })
  const good = await tokenFor(db, p.email)
  const reader = await tokenFor(db, p.email, { readOnly: true })
  const gone = await tokenFor(db, p.email)
  await revokeToken(db, gone.id)
  const unknown = `pat_${randomBytes(32).toString('base64url')}`
  const garbage = `garbage${randomBytes(12).toString('hex')}`
  const secrets = [good.token, reader.token, gone.token, unknown, garbage]

  const requests: Array<{ what: string, method: 'GET' | 'POST', url: string, authorization?: string, payload?: string, contentType?: string }> = [
    { what: 'valid rename', method: 'POST', url: `${BASE}/update_name`, authorization: `Bearer ${good.token}`, payload: JSON.stringify({ project_id: project.publicId, name: 'Logged' }) },
    { what: 'valid get', method: 'GET', url: `${BASE}/get?id=${project.publicId}`, authorization: `Bearer ${good.token}` },
    { what: 'read-only get', method: 'GET', url: `${BASE}/get?id=${project.publicId}`, authorization: `bearer  ${reader.token}` },
    { what: 'read-only mutation', method: 'POST', url: `${BASE}/update_name`, authorization: `Bearer ${reader.token}`, payload: JSON.stringify({ project_id: project.publicId, name: 'No' }) },
    { what: 'revoked token', method: 'GET', url: `${BASE}/get?id=${project.publicId}`, authorization: `Bearer ${gone.token}` },
    { what: 'unknown token', method: 'GET', url: `${BASE}/get?id=${project.publicId}`, authorization: `Bearer ${unknown}` },
    { what: 'malformed header', method: 'GET', url: `${BASE}/get?id=${project.publicId}`, authorization: `Bearer ${garbage} ${good.token}` },
    { what: 'another scheme', method: 'GET', url: `${BASE}/get?id=${project.publicId}`, authorization: `Token ${good.token}` },
    { what: 'token as a query value', method: 'GET', url: `${BASE}/get?id=${project.publicId}&access_token=${good.token}` },
    { what: 'token as a query value, authenticated', method: 'GET', url: `${BASE}/get?id=${project.publicId}&token=${reader.token}`, authorization: `Bearer ${good.token}` },
    { what: 'token alone in the query string', method: 'GET', url: `${BASE}/get?id=${project.publicId}&${good.token}`, authorization: `Bearer ${good.token}` },
    { what: 'token in the path', method: 'GET', url: `${BASE}/${good.token}`, authorization: `Bearer ${good.token}` },
    { what: 'token in a mutation query string', method: 'POST', url: `${BASE}/update_name?token=${good.token}`, authorization: `Bearer ${good.token}`, payload: JSON.stringify({ project_id: project.publicId, name: 'Query' }) },
    { what: 'invalid body', method: 'POST', url: `${BASE}/update_name`, authorization: `Bearer ${good.token}`, payload: '{"project_id":' },
    { what: 'invalid name', method: 'POST', url: `${BASE}/update_name`, authorization: `Bearer ${good.token}`, payload: JSON.stringify({ project_id: project.publicId, name: '' }) },
    { what: 'unknown project', method: 'POST', url: `${BASE}/update_description`, authorization: `Bearer ${good.token}`, payload: JSON.stringify({ project_id: shortId(randomUUID()), description: '{}' }) },
    { what: 'wrong media type', method: 'POST', url: `${BASE}/update_description`, authorization: `Bearer ${good.token}`, payload: 'x', contentType: 'text/plain' },
    { what: 'wrong method', method: 'GET', url: `${BASE}/update_name?${good.token}`, authorization: `Bearer ${good.token}` }
  ]
  const requestIds: string[] = []
  for (const [i, r] of requests.entries()) {
    const requestId = `log-probe-${i}`
    requestIds.push(requestId)
    const headers: Record<string, string> = { 'x-request-id': requestId }
    if (r.authorization !== undefined) headers.authorization = r.authorization
    if (r.payload !== undefined) headers['content-type'] = r.contentType ?? 'application/json'
    const res = await logged.inject({ method: r.method, url: r.url, headers, ...(r.payload === undefined ? {} : { payload: r.payload }) })
    t.ok(res.statusCode < 500, `${r.what}: answered ${res.statusCode}`)
  }

  t.ok(lines.length >= requests.length * 2, `the logs are written (${lines.length} lines)`)
  for (const requestId of requestIds) t.ok(lines.some((line) => line.includes(`"${requestId}"`)), `${requestId} is in the logs`)
  for (const secret of secrets) {
    const parts = [secret, secret.startsWith('pat_') ? secret.slice(4) : secret]
    const leaking = lines.filter((line) => parts.some((part) => line.includes(part)))
    t.same(leaking.map((line) => line.slice(0, 300)), [], `${secret.slice(0, 8)}… appears in no log line`)
  }
})
