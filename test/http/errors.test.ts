// The error table (contract part 3) and the transport rules: routing errors come
// before everything, every error leaves in one envelope, bodies are strict UTF-8
// JSON objects within 1 MiB, validation never coerces, no input yields a 500, and
// every way of missing a project gives the very same 404 body.
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import t from '../tap.js'
import { shortId } from '../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'

const BASE = '/api/external/v1/projects'
const NOT_FOUND = '{"statusCode":404,"error":"Not Found","code":"not_found","message":"project not found"}'
const LEAK = /at .*\.ts:|SELECT|INSERT|UPDATE /

const ctx = await build(t)
const { app, db } = ctx

const company = await createCompany(db)
const alice = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [alice.id])
const ORIGINAL_NAME = 'Errors Fixture'
const ORIGINAL_DESCRIPTION = '{"type":"doc","content":[]}'
const project = await createProject(db, space, {
  name: ORIGINAL_NAME, description: ORIGINAL_DESCRIPTION, access: { space: 70 }
})
await addContributor(db, project.id, alice.id, 'champion')
const archived = await createProject(db, space, { access: { space: 70 }, archived: true })
const secret = await createProject(db, space, { access: { public: 0, company: 0, space: 0 } })
const token = (await tokenFor(db, alice.email)).token
const auth = { authorization: `Bearer ${token}` }

type Mutation = 'update_name' | 'update_description'

/** Posts a raw payload (a string or bytes) with the given content type. */
function postRaw (path: string, payload: string | Buffer, contentType: string | null = 'application/json', headers: Record<string, string> = auth) {
  const all: Record<string, string> = { ...headers }
  if (contentType !== null) all['content-type'] = contentType
  return app.inject({ method: 'POST', url: path, headers: all, payload })
}

function post (op: Mutation, body: unknown, headers: Record<string, string> = auth) {
  return app.inject({ method: 'POST', url: `${BASE}/${op}`, headers, payload: body as object })
}

function get (query: string, headers: Record<string, string> = auth) {
  return app.inject({ method: 'GET', url: `${BASE}/get${query}`, headers })
}

/** The envelope: exactly these keys, the status twice, Node's reason phrase, JSON, no internals. */
function assertError (t: Test, res: LightMyRequestResponse, status: number, code: string, withDetails = false) {
  t.equal(res.statusCode, status, `status ${status}: ${res.body.slice(0, 300)}`)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  const keys = ['code', 'error', 'message', 'statusCode']
  t.strictSame(Object.keys(body).sort(), withDetails ? [...keys, 'details'].sort() : keys)
  t.equal(body.statusCode, status)
  t.equal(body.error, STATUS_CODES[status])
  t.equal(body.code, code)
  t.type(body.message, 'string')
  t.notMatch(res.body, LEAK, 'no stack trace or SQL')
  return body as { statusCode: number, error: string, code: string, message: string, details?: Array<{ path: string, message: string }> }
}

/**
 * A 400 invalid_input. A body that is not JSON text has no field to point at: no
 * details. A value that parsed but breaks the schema has details naming the field.
 */
function assertInvalid (t: Test, res: LightMyRequestResponse, kind: 'unparsable' | 'invalid') {
  return assertError(t, res, 400, 'invalid_input', kind === 'invalid')
}

async function projectRow (id = project.id) {
  return db.selectFrom('projects').select(['name', 'description', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow()
}

async function activityCount (): Promise<number> {
  const row = await db.selectFrom('activities').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}

/** Asserts that whatever `fn` sends leaves projects and activities as they were. */
async function nothingWritten (t: Test, fn: () => Promise<void>) {
  const before = await db.selectFrom('projects').select(['id', 'name', 'description', 'updated_at']).orderBy('id').execute()
  const activities = await activityCount()
  await fn()
  const after = await db.selectFrom('projects').select(['id', 'name', 'description', 'updated_at']).orderBy('id').execute()
  t.strictSame(after, before, 'projects unchanged')
  t.equal(await activityCount(), activities, 'no activity recorded')
}

t.test('an unknown path is 404 route_not_found, whatever the token', async (t) => {
  const requests: Array<[string, string]> = [
    ['GET', `${BASE}/nope`],
    ['GET', '/'],
    ['POST', '/api/external/v1/nothing'],
    ['POST', `${BASE}/nope`],
    ['GET', '/api/external/v1/projects'],
    ['GET', `${BASE}/get/extra`],
    ['DELETE', '/api/external/v2/projects/get']
  ]
  for (const [method, url] of requests) {
    for (const headers of [{}, { authorization: 'Bearer pat_not_a_real_token' }, auth, { authorization: 'Basic abc' }]) {
      const res = await app.inject({ method: method as 'GET', url, headers })
      const body = assertError(t, res, 404, 'route_not_found')
      t.equal(res.headers['www-authenticate'], undefined, 'no authentication challenge')
      t.ok(body.message.length > 0)
    }
  }
})

t.test('an unknown path is 404 before its body is looked at', async (t) => {
  for (const headers of [{}, { authorization: 'Bearer pat_not_a_real_token' }] as Array<Record<string, string>>) {
    assertError(t, await postRaw('/api/external/v1/nothing', '{bad', 'application/json', headers), 404, 'route_not_found')
    assertError(t, await postRaw(`${BASE}/nope`, 'hello', 'text/plain', headers), 404, 'route_not_found')
    assertError(t, await postRaw(`${BASE}/nope`, JSON.stringify({ a: 'x'.repeat(1024 * 1024) }), 'application/json', headers), 404, 'route_not_found')
  }
})

t.test('a known path with the wrong method is 405 with Allow, whatever the token', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['POST', `${BASE}/get`, 'GET, HEAD'],
    ['PUT', `${BASE}/get`, 'GET, HEAD'],
    ['DELETE', `${BASE}/get`, 'GET, HEAD'],
    ['PATCH', `${BASE}/get`, 'GET, HEAD'],
    ['GET', `${BASE}/update_name`, 'POST'],
    ['PUT', `${BASE}/update_name`, 'POST'],
    ['DELETE', `${BASE}/update_name`, 'POST'],
    ['PATCH', `${BASE}/update_name`, 'POST'],
    ['GET', `${BASE}/update_description`, 'POST'],
    ['PUT', `${BASE}/update_description`, 'POST'],
    ['DELETE', `${BASE}/update_description`, 'POST'],
    ['PATCH', `${BASE}/update_description`, 'POST'],
    ['OPTIONS', `${BASE}/get`, 'GET, HEAD'],
    ['OPTIONS', `${BASE}/update_name`, 'POST'],
    ['GET', `${BASE}/update_name?project_id=x`, 'POST']
  ]
  for (const [method, url, allow] of cases) {
    for (const headers of [{}, { authorization: 'Bearer pat_not_a_real_token' }, auth]) {
      const res = await app.inject({ method: method as 'GET', url, headers })
      assertError(t, res, 405, 'method_not_allowed')
      t.equal(res.headers.allow, allow, `${method} ${url}`)
    }
  }
  // A body does not change the answer, even one that could not be parsed or is too large.
  const big = JSON.stringify({ project_id: project.publicId, name: 'x'.repeat(1024 * 1024) })
  const withBodies: Array<[string, string, string, string, string]> = [
    ['POST', `${BASE}/get`, '{bad', 'application/json', 'GET, HEAD'],
    ['POST', `${BASE}/get`, big, 'application/json', 'GET, HEAD'],
    ['POST', `${BASE}/get`, 'hello', 'text/plain', 'GET, HEAD'],
    ['PUT', `${BASE}/update_name`, '{bad', 'application/json', 'POST'],
    ['PATCH', `${BASE}/update_description`, big, 'application/json', 'POST']
  ]
  for (const [method, url, payload, contentType, allow] of withBodies) {
    const res = await app.inject({ method: method as 'POST', url, headers: { 'content-type': contentType }, payload })
    assertError(t, res, 405, 'method_not_allowed')
    t.equal(res.headers.allow, allow, `${method} ${url} with a ${payload.length}-byte ${contentType} body`)
  }
})

t.test('415 for a mutation whose body is not UTF-8 application/json', async (t) => {
  await nothingWritten(t, async () => {
    for (const op of ['update_name', 'update_description'] as const) {
      const json = JSON.stringify(op === 'update_name'
        ? { project_id: project.publicId, name: 'Media' }
        : { project_id: project.publicId, description: '"media"' })
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/json; charset=iso-8859-1',
        'application/json; charset=utf-16'
      ]) {
        const res = await postRaw(`${BASE}/${op}`, json, contentType)
        assertError(t, res, 415, 'unsupported_media_type')
      }
      const form = await postRaw(`${BASE}/${op}`, `project_id=${project.publicId}&name=Media`, 'application/x-www-form-urlencoded')
      assertError(t, form, 415, 'unsupported_media_type')
    }
  })
  for (const contentType of ['application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json;charset=utf8', 'Application/JSON']) {
    const res = await postRaw(`${BASE}/update_name`, JSON.stringify({ project_id: project.publicId, name: ORIGINAL_NAME }), contentType)
    t.equal(res.statusCode, 200, contentType)
    t.equal(res.json().project.name, ORIGINAL_NAME)
  }
})

t.test('413 for a body over 1 MiB, nothing written; just under the limit is fine', async (t) => {
  const limit = 1024 * 1024
  // A valid update whose JSON text is exactly limit + 1 bytes.
  const bodyOfSize = (size: number) => {
    const shell = JSON.stringify({ project_id: project.publicId, description: '""' })
    const padding = size - Buffer.byteLength(shell)
    return JSON.stringify({ project_id: project.publicId, description: `"${'x'.repeat(padding)}"` })
  }
  const over = bodyOfSize(limit + 1)
  t.equal(Buffer.byteLength(over), limit + 1)
  await nothingWritten(t, async () => {
    assertError(t, await postRaw(`${BASE}/update_description`, over), 413, 'payload_too_large')
    const name = JSON.stringify({ project_id: project.publicId, name: 'n'.repeat(limit) })
    assertError(t, await postRaw(`${BASE}/update_name`, name), 413, 'payload_too_large')
  })

  // 512 KiB is the largest description; its request is well under 1 MiB.
  const description = `"${'y'.repeat(512 * 1024 - 2)}"`
  t.equal(Buffer.byteLength(description), 512 * 1024)
  const res = await post('update_description', { project_id: project.publicId, description })
  t.equal(res.statusCode, 200)
  t.equal(res.json().project.description, description)
  t.equal((await projectRow()).description, description)

  // Exactly at the limit is not 413 (the description is too long, so it is a 400).
  const atLimit = bodyOfSize(limit)
  t.equal(Buffer.byteLength(atLimit), limit)
  const body = assertInvalid(t, await postRaw(`${BASE}/update_description`, atLimit), 'invalid')
  t.strictSame(body.details?.map((d) => d.path), ['/description'])

  const restore = await post('update_description', { project_id: project.publicId, description: ORIGINAL_DESCRIPTION })
  t.equal(restore.statusCode, 200)
})

t.test('400 for a body that is not a JSON object: never a 500', async (t) => {
  // Text the JSON parser refuses (prototype keys included: they are refused, not dropped).
  const unparsable: Array<[string, string | Buffer]> = [
    ['truncated', '{bad'],
    ['unterminated', '{"a":1'],
    ['empty', ''],
    ['whitespace', '   \n\t '],
    ['trailing garbage', `{"project_id":"${project.publicId}","name":"x"} x`],
    ['single quotes', "{'project_id':'x'}"],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
    ['invalid UTF-8 inside a value', Buffer.concat([
      Buffer.from(`{"project_id":"${project.publicId}","name":"a`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')
    ])],
    ['overlong UTF-8', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])],
    ['__proto__', `{"project_id":"${project.publicId}","name":"x","__proto__":{"admin":true}}`],
    ['nested __proto__', `{"project_id":"${project.publicId}","name":{"__proto__":{"x":1}}}`],
    ['constructor.prototype', `{"project_id":"${project.publicId}","name":"x","constructor":{"prototype":{"admin":true}}}`],
    ['deeply nested, unterminated', '['.repeat(100000)],
    ['two byte order marks', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf]), Buffer.from(`{"project_id":"${project.publicId}","name":"x"}`)])],
    ['a byte order mark and one escaped', `\ufeff\ufeff{"project_id":"${project.publicId}","name":"x"}`]
  ]
  // JSON text that parses to something other than the body's object: the schema refuses it.
  const notAnObject: Array<[string, string]> = [
    ['deeply nested, terminated', '['.repeat(100000) + ']'.repeat(100000)],
    ['deeply nested objects', '{"a":'.repeat(50000) + '1' + '}'.repeat(50000)],
    ['array', '[]'],
    ['string', '"str"'],
    ['number', '42'],
    ['null', 'null'],
    ['true', 'true']
  ]
  await nothingWritten(t, async () => {
    for (const op of ['update_name', 'update_description'] as const) {
      for (const [label, payload] of unparsable) {
        t.comment(`${op}: ${label}`)
        assertInvalid(t, await postRaw(`${BASE}/${op}`, payload), 'unparsable')
      }
      for (const [label, payload] of notAnObject) {
        t.comment(`${op}: ${label}`)
        assertInvalid(t, await postRaw(`${BASE}/${op}`, payload), 'invalid')
      }
    }
  })
  // One byte order mark is taken off, as JSON parsers may.
  const oneMark = await postRaw(`${BASE}/update_name`, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"project_id":"${project.publicId}","name":"One mark"}`)]))
  t.equal(oneMark.statusCode, 200, 'one byte order mark: accepted')
  // A POST with no body at all and no content type: nothing to parse, and the required fields are missing.
  const none = await app.inject({ method: 'POST', url: `${BASE}/update_name`, headers: auth })
  assertInvalid(t, none, 'invalid')
})

t.test('validation details name the field and never coerce', async (t) => {
  await nothingWritten(t, async () => {
    let body = assertError(t, await post('update_name', { project_id: 1, name: 'x' }), 400, 'invalid_input', true)
    t.strictSame(body.details, [{ path: '/project_id', message: 'must be a string' }])
    t.equal(body.message, 'project_id must be a string')

    body = assertError(t, await post('update_name', { project_id: project.publicId }), 400, 'invalid_input', true)
    t.strictSame(body.details, [{ path: '/name', message: 'is required' }])
    t.equal(body.message, 'name is required')

    body = assertError(t, await post('update_description', { project_id: project.publicId }), 400, 'invalid_input', true)
    t.strictSame(body.details, [{ path: '/description', message: 'is required' }])

    body = assertError(t, await post('update_name', { name: 'x' }), 400, 'invalid_input', true)
    t.strictSame(body.details, [{ path: '/project_id', message: 'is required' }])

    body = assertError(t, await post('update_name', { project_id: project.publicId, name: 'x', extra: 1 }), 400, 'invalid_input', true)
    t.strictSame(body.details, [{ path: '/extra', message: 'is not allowed' }])
    t.equal(body.message, 'extra is not allowed')

    body = assertError(t, await post('update_description', { project_id: project.publicId, description: '"x"', name: 'y' }), 400, 'invalid_input', true)
    t.strictSame(body.details, [{ path: '/name', message: 'is not allowed' }])

    body = assertError(t, await post('update_name', { project_id: project.publicId, name: null }), 400, 'invalid_input', true)
    t.strictSame(body.details, [{ path: '/name', message: 'must be a string' }])

    for (const name of [123, true, ['x'], { value: 'x' }]) {
      body = assertError(t, await post('update_name', { project_id: project.publicId, name }), 400, 'invalid_input', true)
      t.strictSame(body.details, [{ path: '/name', message: 'must be a string' }], JSON.stringify(name))
    }
    for (const description of [null, 123, { type: 'doc' }, ['x']]) {
      body = assertError(t, await post('update_description', { project_id: project.publicId, description }), 400, 'invalid_input', true)
      t.strictSame(body.details, [{ path: '/description', message: 'must be a string' }], JSON.stringify(description))
    }
    body = assertError(t, await post('update_name', { project_id: project.id.length, name: 'x' }), 400, 'invalid_input', true)
    t.strictSame(body.details, [{ path: '/project_id', message: 'must be a string' }])

    for (const projectId of ['', '   ', '\n\t']) {
      body = assertInvalid(t, await post('update_name', { project_id: projectId, name: 'x' }), 'invalid')
      t.strictSame(body.details?.map((d) => d.path), ['/project_id'], JSON.stringify(projectId))
    }
  })

  let body = assertError(t, await get(''), 400, 'invalid_input', true)
  t.strictSame(body.details, [{ path: '/id', message: 'is required' }])
  t.equal(body.message, 'id is required')

  body = assertError(t, await get(`?id=${project.publicId}&foo=1`), 400, 'invalid_input', true)
  t.strictSame(body.details, [{ path: '/foo', message: 'is not allowed' }])

  // Operately's include_* flags are accepted (the whole project always comes back)...
  const included = await get(`?id=${project.publicId}&include_milestones=true&include_contributors=false`)
  t.equal(included.statusCode, 200)
  t.equal(Object.keys(included.json().project).length, 38)
  // ...as booleans only.
  body = assertError(t, await get(`?id=${project.publicId}&include_milestones=yes`), 400, 'invalid_input', true)
  t.strictSame(body.details?.map((d) => d.path), ['/include_milestones'])

  body = assertError(t, await get(`?id=${project.publicId}&id=${project.publicId}`), 400, 'invalid_input', true)
  t.strictSame(body.details?.map((d) => d.path), ['/id'])

  assertInvalid(t, await get('?id='), 'invalid')
  assertInvalid(t, await get('?id=%20%20'), 'invalid')
})

t.test('a field that takes one of several kinds is refused once, naming them, or for what is wrong inside the kind sent', async (t) => {
  const send = (op: string, body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `${BASE}/${op}`, headers: auth, payload: { project_id: project.publicId, ...body } })
  const cases: Array<[string, Record<string, unknown>, Array<{ path: string, message: string }>]> = [
    // None of the kinds: one detail, every kind named.
    ['update_parent_goal', { goal_id: 123 }, [{ path: '/goal_id', message: 'must be a string or null' }]],
    ['update_due_date', { due_date: '2027-01-01' }, [{ path: '/due_date', message: 'must be an object or null' }]],
    ['create', { project_id: undefined, space_id: project.publicId, name: 'x', company_access_level: 55 }, [{ path: '/company_access_level', message: 'must be 0, 10, 40, 70 or 100' }]],
    // The kind sent, wrong inside: what is wrong there, not that it is not null.
    ['update_due_date', { due_date: { date: '2027-01-01', date_type: 'dya', value: 'x' } }, [{ path: '/due_date/date_type', message: 'must be one of "day", "month", "quarter", "year"' }]],
    ['update_due_date', { due_date: { date: '2027-01-01', date_type: 'day' } }, [{ path: '/due_date/value', message: 'is required' }]],
    ['update_due_date', { due_date: { date: '2027-01-01', date_type: 'day', value: 'x', extra: 1 } }, [{ path: '/due_date/extra', message: 'is not allowed' }]],
    ['update_parent_goal', { goal_id: ' ' }, [{ path: '/goal_id', message: 'must not be blank' }]],
    // A pattern is said as what it stands for, as a date that does not exist is.
    ['update_due_date', { due_date: { date: '99999-01-01', date_type: 'day', value: 'x' } }, [{ path: '/due_date/date', message: 'must be a calendar date (YYYY-MM-DD)' }]],
    ['update_due_date', { due_date: { date: '2027-02-30', date_type: 'day', value: 'x' } }, [{ path: '/due_date/date', message: 'must be a calendar date (YYYY-MM-DD)' }]]
  ]
  await nothingWritten(t, async () => {
    for (const [op, body, details] of cases) {
      const answer = assertError(t, await send(op, body), 400, 'invalid_input', true)
      t.strictSame(answer.details, details, `${op} ${JSON.stringify(body)}`)
      t.equal(answer.message, details.map((d) => `${d.path.slice(1).replaceAll('/', '.')} ${d.message}`).join('; '))
    }
  })
  // A query parameter with a list of values: they are named.
  const flag = assertError(t, await get(`?id=${project.publicId}&include_markdown=1`), 400, 'invalid_input', true)
  t.strictSame(flag.details, [{ path: '/include_markdown', message: 'must be one of "true", "false"' }])
  const list = assertError(t, await app.inject({ method: 'GET', url: `${BASE}/list?limit=ten`, headers: auth }), 400, 'invalid_input', true)
  t.strictSame(list.details, [{ path: '/limit', message: 'must be a whole number in digits' }])
})

t.test('a value Postgres could not store is a 400, never a 500', async (t) => {
  await nothingWritten(t, async () => {
    for (const name of ['a\u0000b', '\u0000', 'a\ud800b', '\ud800', '\udfff', 'x\ud83d']) {
      const body = assertInvalid(t, await post('update_name', { project_id: project.publicId, name }), 'invalid')
      t.strictSame(body.details?.map((d) => d.path), ['/name'], JSON.stringify(name))
    }
    for (const description of ['"a\u0000b"', '{"a":"\u0000"}', '\u0000', '"\ud800"', '{"a":"\udc00"}', '"x\ud83d"']) {
      const body = assertInvalid(t, await post('update_description', { project_id: project.publicId, description }), 'invalid')
      t.strictSame(body.details?.map((d) => d.path), ['/description'], JSON.stringify(description))
    }
    // Lone surrogates written as JSON escapes in the raw body.
    assertInvalid(t, await postRaw(`${BASE}/update_name`, `{"project_id":"${project.publicId}","name":"a\\ud800"}`), 'invalid')
    assertInvalid(t, await postRaw(`${BASE}/update_description`, `{"project_id":"${project.publicId}","description":"\\"\\udfff\\""}`), 'invalid')
    assertInvalid(t, await postRaw(`${BASE}/update_name`, `{"project_id":"${project.publicId}","name":"a\\u0000"}`), 'invalid')
  })

  // NUL and surrogates in an id are just ids of no project.
  for (const id of ['\u0000', `${project.publicId}\u0000`, '\ud800', 'a\ud800b']) {
    const res = await post('update_name', { project_id: id, name: 'x' })
    t.equal(res.statusCode, 404, JSON.stringify(id))
    t.equal(res.body, NOT_FOUND)
  }
  for (const query of ['?id=%00', '?id=%ED%A0%80', '?id=%FF', `?id=${encodeURIComponent(project.id)}%00`]) {
    const res = await get(query)
    t.equal(res.statusCode, 404, query)
    t.equal(res.body, NOT_FOUND)
  }

  // An escaped NUL inside JSON text is ordinary, storable text: stored byte for byte.
  const escaped = '{"a":"\\u0000"}'
  const res = await post('update_description', { project_id: project.publicId, description: escaped })
  t.equal(res.statusCode, 200)
  t.equal(res.json().project.description, escaped)
  t.equal((await projectRow()).description, escaped)
  t.equal((await post('update_description', { project_id: project.publicId, description: ORIGINAL_DESCRIPTION })).statusCode, 200)
})

t.test('every way of missing a project gives one identical 404 body', async (t) => {
  const unknownUuid = randomUUID()
  const ids = [
    '!!!',
    'zzzzzzzzzzzzzzzzzzzzzz',
    'abc',
    'website-redesign',
    unknownUuid,
    unknownUuid.toUpperCase(),
    shortId(unknownUuid),
    `some-slug-${shortId(unknownUuid)}`,
    `${project.publicId}x`,
    secret.publicId,
    secret.id
  ]
  await nothingWritten(t, async () => {
    for (const id of [...ids, archived.publicId, archived.id]) {
      for (const res of [
        await post('update_name', { project_id: id, name: 'Leak?' }),
        await post('update_description', { project_id: id, description: '"leak?"' })
      ]) {
        t.equal(res.statusCode, 404, id)
        t.equal(res.body, NOT_FOUND, id)
        t.match(res.headers['content-type'], /^application\/json/)
      }
    }
    for (const id of ids) {
      const res = await get(`?id=${encodeURIComponent(id)}`)
      t.equal(res.statusCode, 404, id)
      t.equal(res.body, NOT_FOUND, id)
    }
  })
  // The secret project exists and is untouched; the archived one too.
  t.not((await projectRow(secret.id)).name, 'Leak?')
  t.not((await projectRow(archived.id)).name, 'Leak?')
  // The same ids of a visible project do resolve (the 404s above are not a broken lookup).
  t.equal((await get(`?id=${project.id}`)).statusCode, 200)
  t.equal((await get(`?id=${project.id.toUpperCase()}`)).statusCode, 200)
  t.equal((await get(`?id=${shortId(project.id)}`)).statusCode, 200)
})
