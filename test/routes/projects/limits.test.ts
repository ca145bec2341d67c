// The resource bounds of the two mutations, at and just past each one: a
// description of at most 512 KiB of UTF-8 nested at most 64 deep, a name of at
// most 255 code points, a body of at most 1 MiB. At a limit the value is taken
// and comes back byte for byte; one byte, level or code point over it is refused
// with the exact error and nothing is written. Then the memory a burst of
// maximal and over-limit requests costs, against a stated budget.
import { createHash } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import type { Test } from 'tap'
import t from '../../tap.js'
import { DESCRIPTION_MAX_BYTES, DESCRIPTION_MAX_DEPTH, NAME_MAX_LENGTH } from '../../../src/projects/schemas.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, tokenFor } from '../../helper.js'

const KIB = 1024
const MIB = 1024 * KIB
const BASE = '/api/external/v1/projects'
/**
 * What the burst below may cost, with headroom over what was observed (see
 * test/README.md): growth of the resident set over its baseline, and its peak.
 * The embedded database lives in this process, in a thread with a JavaScript heap
 * of its own that every statement's values and rows are copied into, so both are
 * higher there.
 */
const GROWTH_BUDGET_MB = process.env.DATABASE_URL ? 300 : 400
const PEAK_BUDGET_MB = process.env.DATABASE_URL ? 700 : 1300

const { app, db } = await build(t)
const company = await createCompany(db)
const champion = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [champion.id])
const token = await tokenFor(db, champion.email)
const api = client(app, token.token)

async function project () {
  const created = await createProject(db, space, { access: { space: 70 }, description: '{"initial":true}' })
  await addContributor(db, created.id, champion.id, 'champion')
  return created
}

const target = await project()

t.test('the limits are the ones the contract states', async (t) => {
  t.equal(DESCRIPTION_MAX_BYTES, 512 * KIB)
  t.equal(DESCRIPTION_MAX_DEPTH, 64)
  t.equal(NAME_MAX_LENGTH, 255)
})

async function state (id: string) {
  const { rows } = await sql<{ row: string, activities: string }>`
    SELECT (SELECT md5(to_jsonb(p)::text) FROM projects p WHERE p.id = ${id}) AS row,
           (SELECT count(*) FROM activities) AS activities`.execute(db)
  return rows[0]!
}

/** Stored as sent: compared in the database by length and digest, then in full. */
async function expectStored (t: Test, id: string, field: 'name' | 'description', value: string) {
  const { rows } = await sql<{ bytes: number, digest: string, value: string }>`
    SELECT octet_length(${sql.ref(field)}) AS bytes, md5(${sql.ref(field)}) AS digest, ${sql.ref(field)} AS value FROM projects WHERE id = ${id}`.execute(db)
  const row = rows[0]!
  t.equal(Number(row.bytes), Buffer.byteLength(value), `${field}: ${Buffer.byteLength(value)} bytes stored`)
  t.equal(row.digest, createHash('md5').update(value, 'utf8').digest('hex'), `${field}: the same bytes`)
  t.ok(row.value === value, `${field} comes back identical`)
}

async function accepted (t: Test, field: 'name' | 'description', value: string, stored = value) {
  const res = field === 'name'
    ? await api.updateName({ project_id: target.publicId, name: value })
    : await api.updateDescription({ project_id: target.publicId, description: value })
  t.equal(res.statusCode, 200, `accepted: ${res.statusCode === 200 ? '' : res.body.slice(0, 200)}`)
  t.ok(res.json().project?.[field] === stored, `the answer carries the ${field}`)
  await expectStored(t, target.id, field, stored)
  const read = await api.get(target.publicId)
  t.ok(read.json().project[field] === stored, `a later get returns the same ${field}`)
}

const invalid = (path: string, message: string) => ({
  statusCode: 400, error: 'Bad Request', code: 'invalid_input', message: `${path.slice(1)} ${message}`, details: [{ path, message }]
})
const TOO_BIG = invalid('/description', `must be at most ${512 * KIB} bytes (UTF-8)`)
const TOO_DEEP = invalid('/description', 'must not nest arrays and objects more than 64 deep')
const TOO_LONG = invalid('/name', 'must be at most 255 characters')
const OVER_BODY_LIMIT = { statusCode: 413, error: 'Payload Too Large', code: 'payload_too_large', message: 'body is larger than 1 MiB' }

async function refused (t: Test, send: () => Promise<LightMyRequestResponse>, status: number, body: object) {
  const before = await state(target.id)
  const res = await send()
  t.equal(res.statusCode, status, `refused with ${status}`)
  t.same(res.json(), body, 'the exact error')
  t.same(await state(target.id), before, 'nothing written: row and activities as they were')
}

const refuseDescription = (t: Test, description: string, status = 400, body: object = TOO_BIG) =>
  refused(t, () => api.updateDescription({ project_id: target.publicId, description }), status, body)
const refuseName = (t: Test, name: string, status = 400, body: object = TOO_LONG) =>
  refused(t, () => api.updateName({ project_id: target.publicId, name }), status, body)

/** A JSON string literal whose UTF-8 text is exactly `bytes` long, made of `unit` and ASCII filler. */
function jsonStringOfBytes (bytes: number, unit: string): string {
  const unitBytes = Buffer.byteLength(unit)
  const count = Math.floor((bytes - 2) / unitBytes)
  const text = `"${unit.repeat(count)}${'x'.repeat(bytes - 2 - count * unitBytes)}"`
  if (Buffer.byteLength(text) !== bytes) throw new Error('size arithmetic')
  return text
}

/** A rich-text document of exactly `bytes` bytes, with escapes and non-ASCII text in it. */
function documentOfBytes (bytes: number): string {
  const head = '{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Caf\\u00e9 \\"quoted\\"\\n\\ttab — ünïcödé 😀 '
  const tail = '"}]}]}'
  const fill = bytes - Buffer.byteLength(head) - Buffer.byteLength(tail)
  const text = `${head}${'lorem ipsum '.repeat(Math.floor(fill / 12))}${'.'.repeat(fill % 12)}${tail}`
  if (Buffer.byteLength(text) !== bytes) throw new Error('size arithmetic')
  JSON.parse(text)
  return text
}

const LIMIT = 512 * KIB

t.test('a description of exactly 512 KiB is accepted and stored byte for byte', async (t) => {
  for (const [what, text] of [
    ['ASCII', jsonStringOfBytes(LIMIT, 'x')],
    ['two-byte characters', jsonStringOfBytes(LIMIT, 'é')],
    ['three-byte characters', jsonStringOfBytes(LIMIT, '中')],
    ['four-byte characters', jsonStringOfBytes(LIMIT, '😀')],
    ['a document with escapes', documentOfBytes(LIMIT)]
  ] as const) {
    t.equal(Buffer.byteLength(text), LIMIT, `${what}: ${LIMIT} bytes`)
    await t.test(what, (t) => accepted(t, 'description', text))
  }
})

t.test('one byte over 512 KiB is 400, and nothing is written', async (t) => {
  for (const [what, text] of [
    ['ASCII', jsonStringOfBytes(LIMIT + 1, 'x')],
    ['two-byte characters', jsonStringOfBytes(LIMIT + 1, 'é')],
    ['four-byte characters', jsonStringOfBytes(LIMIT + 1, '😀')],
    ['a document with escapes', documentOfBytes(LIMIT + 1)],
    // Half as many characters as bytes: the limit counts bytes, not characters.
    ['262,146 characters, 524,290 bytes', `"${'é'.repeat(LIMIT / 2)}"`]
  ] as const) {
    await t.test(what, (t) => refuseDescription(t, text))
  }
  await t.test('far over, still under the body limit', (t) => refuseDescription(t, jsonStringOfBytes(900 * KIB, 'x')))
})

t.test('a maximal description whose JSON escaping doubles it is past the 1 MiB body limit: 413', async (t) => {
  // 512 KiB of backslashes: each is sent as two bytes, so the body is over 1 MiB.
  // The description limit alone would take it; the body limit comes first.
  const text = `"${'\\\\'.repeat((LIMIT - 2) / 2)}"`
  t.equal(Buffer.byteLength(text), LIMIT)
  t.ok(Buffer.byteLength(JSON.stringify({ project_id: target.publicId, description: text })) > MIB)
  await refuseDescription(t, text, 413, OVER_BODY_LIMIT)
})

const arrays = (depth: number, inner = '0') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`
const objects = (depth: number) => {
  let text = '0'
  for (let i = 0; i < depth; i++) text = i % 2 === 0 ? `{"k${i}":${text}}` : `[${text},"]\\"[{"]`
  return text
}

t.test('nesting of exactly 64 is accepted and stored byte for byte', async (t) => {
  await t.test('arrays', (t) => accepted(t, 'description', arrays(64)))
  await t.test('objects and arrays, brackets in strings', (t) => accepted(t, 'description', objects(64)))
  // Brackets inside strings, escaped quotes and escaped backslashes are no nesting.
  await t.test('brackets in strings', (t) => accepted(t, 'description', `["\\\\", "\\"[[[[", ${arrays(63)}, "${'['.repeat(1000)}"]`))
  await t.test('64 deep and 512 KiB', async (t) => {
    const shell = arrays(64, '""')
    const text = arrays(64, `"${'y'.repeat(LIMIT - shell.length)}"`)
    t.equal(Buffer.byteLength(text), LIMIT)
    await accepted(t, 'description', text)
  })
})

t.test('one level over 64 is 400, and nothing is written', async (t) => {
  await t.test('arrays', (t) => refuseDescription(t, arrays(65), 400, TOO_DEEP))
  await t.test('objects and arrays', (t) => refuseDescription(t, objects(65), 400, TOO_DEEP))
  await t.test('after an escaped backslash', (t) => refuseDescription(t, `["\\\\", ${arrays(64)}]`, 400, TOO_DEEP))
  await t.test('100,000 deep', (t) => refuseDescription(t, arrays(100_000), 400, TOO_DEEP))
  await t.test('100,000 opened, never closed', (t) => refuseDescription(t, '['.repeat(100_000), 400, TOO_DEEP))
})

t.test('a name of exactly 255 code points is accepted and stored byte for byte', async (t) => {
  for (const [what, name, stored] of [
    ['ASCII', 'a'.repeat(255), undefined],
    ['astral', '😀'.repeat(255), undefined],
    ['combining marks', 'e\u0301'.repeat(127) + 'x', undefined],
    ['mixed widths', 'aé中😀'.repeat(63) + 'abc', undefined],
    ['with 10,000 spaces around it', `${' '.repeat(5000)}${'b'.repeat(255)}${'\n'.repeat(5000)}`, 'b'.repeat(255)]
  ] as const) {
    t.equal([...(stored ?? name).trim()].length, 255, `${what}: 255 code points`)
    await t.test(what, (t) => accepted(t, 'name', name, stored ?? name))
  }
})

t.test('one code point over 255 is 400, and nothing is written', async (t) => {
  for (const [what, name] of [
    ['ASCII', 'a'.repeat(256)],
    ['astral', '😀'.repeat(256)],
    ['combining marks', 'e\u0301'.repeat(128)],
    ['mixed widths', 'aé中😀'.repeat(64)],
    ['100,000 characters', 'n'.repeat(100_000)]
  ] as const) {
    await t.test(what, (t) => refuseName(t, name))
  }
  await t.test('past the body limit: 413', (t) => refuseName(t, 'n'.repeat(MIB), 413, OVER_BODY_LIMIT))
})

t.test('a body over the limit with a charset other than UTF-8 is 415: the media type is checked before the size', async (t) => {
  // Contract part 2: "then the body (415 media type, 413 size, 400 JSON syntax)".
  const payload = JSON.stringify({ project_id: target.publicId, description: jsonStringOfBytes(MIB, 'x') })
  await refused(t, () => app.inject({
    method: 'POST',
    url: `${BASE}/update_description`,
    headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json; charset=latin1' },
    payload
  }), 415, { statusCode: 415, error: 'Unsupported Media Type', code: 'unsupported_media_type', message: 'charset latin1 is not supported; send UTF-8 JSON' })
})

t.test('memory: a burst of maximal and over-limit requests stays within budget', async (t) => {
  const targets = []
  for (let i = 0; i < 20; i++) targets.push(await project())
  const descriptions = targets.map((_, i) => jsonStringOfBytes(LIMIT, String.fromCharCode(0x61 + i)))
  const nestedDescriptions = targets.map((_, i) => arrays(64, `"${String.fromCharCode(0x41 + i).repeat(LIMIT - 130)}"`))
  t.ok(nestedDescriptions.every((d) => Buffer.byteLength(d) === LIMIT), 'the nested ones are 512 KiB too')

  // Warm up, so that the first-use costs (compiled code, pools) are in the baseline.
  await api.updateDescription({ project_id: targets[0]!.publicId, description: '{"warm":true}' })
  const baseline = process.memoryUsage().rss
  let peak = baseline
  const sample = () => { peak = Math.max(peak, process.memoryUsage().rss) }
  const timer = setInterval(sample, 5)
  const send = async (promise: Promise<LightMyRequestResponse>) => {
    const res = await promise
    sample()
    return res
  }
  try {
    const maximal = await Promise.all(targets.map((p, i) => send(api.updateDescription({ project_id: p.publicId, description: descriptions[i] }))))
    t.same(maximal.map((r) => r.statusCode), targets.map(() => 200), '20 maximal descriptions at once: all 200')
    const nestedResults = await Promise.all(targets.map((p, i) => send(api.updateDescription({ project_id: p.publicId, description: nestedDescriptions[i] }))))
    t.same(nestedResults.map((r) => r.statusCode), targets.map(() => 200), '20 maximally nested at once: all 200')

    const over = await Promise.all([
      ...Array.from({ length: 5 }, () => send(app.inject({
        method: 'POST', url: `${BASE}/update_description`, payload: `{"description":"${'z'.repeat(8 * MIB)}"}`,
        headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' }
      }))),
      ...Array.from({ length: 5 }, () => send(api.updateDescription({ project_id: target.publicId, description: jsonStringOfBytes(900 * KIB, 'q') }))),
      ...Array.from({ length: 5 }, () => send(api.updateDescription({ project_id: target.publicId, description: arrays(200_000) })))
    ])
    t.same(over.map((r) => r.statusCode), [...Array(5).fill(413), ...Array(10).fill(400)], 'over-limit bodies: 413 and 400')
  } finally {
    clearInterval(timer)
  }

  const { rows } = await sql<{ id: string, digest: string }>`SELECT id, md5(description) AS digest FROM projects WHERE id IN (${sql.join(targets.map((p) => p.id))})`.execute(db)
  const stored = new Map(rows.map((r) => [r.id, r.digest]))
  t.same(targets.map((p) => stored.get(p.id)), nestedDescriptions.map((d) => createHash('md5').update(d).digest('hex')), 'the last writes are stored exactly')

  const [baselineMb, peakMb, growthMb] = [baseline / MIB, peak / MIB, (peak - baseline) / MIB].map(Math.round) as [number, number, number]
  t.comment(`rss baseline ${baselineMb} MB, peak ${peakMb} MB, growth ${growthMb} MB`)
  t.ok(growthMb < GROWTH_BUDGET_MB, `resident set grew ${growthMb} MB, under the ${GROWTH_BUDGET_MB} MB budget`)
  t.ok(peakMb < PEAK_BUDGET_MB, `resident set peaked at ${peakMb} MB, under the ${PEAK_BUDGET_MB} MB budget`)
})
