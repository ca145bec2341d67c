// POST /api/external/v1/projects/update_description: the JSON text comes back byte
// for byte, bad JSON and oversized or over-deep documents are refused, the audit
// row is written, and concurrent updates of the two fields lose nothing.
import t from '../../tap.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, expectInvalidInput, projectActivities, projectRow, tokenFor } from '../../helper.js'


const { app, db } = await build(t)

const company = await createCompany(db)
const champion = await createPerson(db, company.id, { fullName: 'Dana Champion' })
const space = await createSpace(db, company.id, [champion.id])
const token = await tokenFor(db, champion.email)
const api = client(app, token.token)

const OLD = '2020-01-02T03:04:05.678Z'
const KIB = 1024

async function project (options: Parameters<typeof createProject>[2] = {}) {
  const created = await createProject(db, space, options)
  await addContributor(db, created.id, champion.id, 'champion')
  await db.updateTable('projects').set({ updated_at: OLD }).where('id', '=', created.id).execute()
  return created
}

async function storedDescription (id: string) {
  const r = await db.selectFrom('projects').select('description').where('id', '=', id).executeTakeFirstOrThrow()
  return r.description
}

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8')
// ASCII only: a raw U+2028 in an assertion message would break the TAP stream.
const label = (s: string) => JSON.stringify(s).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`)

t.test('descriptions come back byte for byte', async (t) => {
  const p = await project({ name: 'Round trip' })
  const texts = [
    '{"b":1,  "a":[1,2,{"z":null}]}',
    ' \n{"type":"doc"}\n ',
    '\r\n\t{"crlf": true}\r\n',
    '"just a string"',
    '42',
    '-0.0e+10',
    '1E400',
    '12345678901234567890123456789',
    'true',
    'false',
    '[]',
    '{}',
    '{"x":"\\u00e9\\ud83d\\ude00"}',
    '{"x":"é😀"}',
    '"e\u0301 vs \u00e9"',
    '{"z":1,"a":2}',
    '{"a":1,"a":2}',
    '"\\u0000 escaped NUL"',
    '"\\ud800 escaped lone surrogate"',
    '{"\\"":"\\\\","/":"\\/"}',
    '{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Hello \u2028 world"}]}]}'
  ]
  let previous: string | null = null
  for (const text of texts) {
    const res = await api.updateDescription({ project_id: p.publicId, description: text })
    t.equal(res.statusCode, 200, `200 for ${label(text)}`)
    t.ok(res.json().project.description === text, `response === ${label(text)}`)
    t.ok((await storedDescription(p.id)) === text, 'db column identical')
    const later = await api.get(p.publicId)
    t.ok(later.json().project.description === text, 'later GET identical')
    const last = (await projectActivities(db, p.id)).at(-1)
    t.same(last?.content, { old_description: previous, new_description: text }, 'activity carries the exact strings')
    previous = text
  }
  t.equal((await projectActivities(db, p.id)).length, texts.length)
})

t.test('rejected descriptions are 400 and change nothing', async (t) => {
  const p = await project({ name: 'Rejections', description: '{"kept":true}' })
  const before = await projectRow(db, p.id)
  const bad = [
    'null',
    ' null ',
    '\nnull\n',
    '',
    '   ',
    'not json',
    '{"a":',
    '{a:1}',
    "{'a':1}",
    '[1,]',
    '{"a":1,}',
    'NaN',
    'undefined',
    '01',
    '"unterminated',
    '"raw\ncontrol"',
    '"a\u0000b"',
    '{"a":1} {"b":2}',
    '\u00a0{}',
    '\ufeff{}',
    '"\ud800"',
    '{"x":"\udc00"}'
  ]
  for (const description of bad) {
    const res = await api.updateDescription({ project_id: p.publicId, description })
    t.comment(label(description))
    expectInvalidInput(t, res, '/description')
  }
  for (const description of [null, 42, true, { type: 'doc' }, ['x']]) {
    expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId, description }), '/description')
  }
  expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId }), '/description')
  expectInvalidInput(t, await api.updateDescription({ description: '{}' }), '/project_id')
  expectInvalidInput(t, await api.updateDescription({ project_id: '', description: '{}' }), '/project_id')
  expectInvalidInput(t, await api.updateDescription({ project_id: ' ', description: '{}' }), '/project_id')
  expectInvalidInput(t, await api.updateDescription({ project_id: 1, description: '{}' }), '/project_id')
  expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId, description: '{}', name: 'x' }), '/name')
  t.same(await projectRow(db, p.id), before, 'row unchanged')
  t.equal((await projectActivities(db, p.id)).length, 0, 'no activity')
})

t.test('at most 512 KiB of UTF-8', async (t) => {
  const p = await project({ name: 'Sizes' })

  const exact = `"${'a'.repeat(512 * KIB - 2)}"`
  t.equal(byteLength(exact), 512 * KIB)
  const ok = await api.updateDescription({ project_id: p.publicId, description: exact })
  t.equal(ok.statusCode, 200, 'exactly 512 KiB accepted')
  t.ok(ok.json().project.description === exact)
  t.ok((await storedDescription(p.id)) === exact)

  // Two bytes per é: under the limit in UTF-16 units, exactly at it in bytes.
  const exactAccented = `"${'é'.repeat(262143)}"`
  t.equal(byteLength(exactAccented), 512 * KIB)
  const ok2 = await api.updateDescription({ project_id: p.publicId, description: exactAccented })
  t.equal(ok2.statusCode, 200, '512 KiB of two-byte characters accepted')
  t.ok((await storedDescription(p.id)) === exactAccented)

  const before = await projectRow(db, p.id)
  const activityCount = (await projectActivities(db, p.id)).length
  const over = `"${'a'.repeat(512 * KIB - 1)}"`
  t.equal(byteLength(over), 512 * KIB + 1)
  expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId, description: over }), '/description')

  const overAccented = `"${'é'.repeat(262144)}"`
  t.equal(overAccented.length, 262146, 'far under 512 Ki UTF-16 units')
  t.equal(byteLength(overAccented), 512 * KIB + 2)
  expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId, description: overAccented }), '/description')

  const bareAccented = 'é'.repeat(262145)
  expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId, description: bareAccented }), '/description')

  const overAstral = `"${'😀'.repeat(131072)}"`
  t.equal(byteLength(overAstral), 512 * KIB + 2)
  expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId, description: overAstral }), '/description')

  t.same(await projectRow(db, p.id), before)
  t.equal((await projectActivities(db, p.id)).length, activityCount)
})

t.test('arrays and objects nest at most 64 deep', async (t) => {
  const p = await project({ name: 'Depth' })
  const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n)
  const objects = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)
  const mixed = (n: number) => Array.from({ length: n }, (_, i) => i % 2 === 0 ? '[' : '{"k":').join('') + '0' +
    Array.from({ length: n }, (_, i) => (n - 1 - i) % 2 === 0 ? ']' : '}').join('')

  for (const text of [arrays(64), objects(64), mixed(64), `[${arrays(63)},${arrays(63)}]`, '{"a":"' + '['.repeat(70) + '"}',
    '["\\"' + '['.repeat(70) + '"]', '"' + '{'.repeat(1000) + '"', `[${'"]",'.repeat(70)}${arrays(63)}]`]) {
    JSON.parse(text)
    const res = await api.updateDescription({ project_id: p.publicId, description: text })
    t.equal(res.statusCode, 200, `accepted: ${text.slice(0, 30)}…`)
    t.ok((await storedDescription(p.id)) === text)
  }

  const before = await projectRow(db, p.id)
  for (const text of [arrays(65), objects(65), mixed(65), `[1,${arrays(64)}]`, `{"x":"]]]]","y":${arrays(64)}}`, `["\\\\",${arrays(64)}]`, `{"\\\\":${arrays(64)}}`, arrays(10_000)]) {
    JSON.parse(text) // valid JSON: only the depth rule refuses it
    expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId, description: text }), '/description')
  }
  expectInvalidInput(t, await api.updateDescription({ project_id: p.publicId, description: '['.repeat(100_000) }), '/description')
  t.same(await projectRow(db, p.id), before)
})

t.test('audit rows carry the old and the new description exactly', async (t) => {
  const p = await project({ name: 'Audited' })
  t.equal(await storedDescription(p.id), null)

  const first = ' {"v": 1} '
  const res = await api.updateDescription({ project_id: p.publicId, description: first })
  t.equal(res.statusCode, 200)
  let rows = await projectActivities(db, p.id)
  t.equal(rows.length, 1)
  t.equal(rows[0]!.action, 'project_description_changed')
  t.same(rows[0]!.content, { old_description: null, new_description: first })
  t.ok(Object.hasOwn(rows[0]!.content, 'old_description'), 'old_description present even when null')
  t.equal(rows[0]!.author_id, champion.id)
  t.equal(rows[0]!.token_id, token.id)
  t.equal(rows[0]!.project_id, p.id)
  t.equal(rows[0]!.company_id, company.id)
  const afterFirst = await projectRow(db, p.id)
  t.ok(new Date(afterFirst.updated_at as string) > new Date(OLD), 'updated_at advanced')

  const second = '{"v":2,"v":3}'
  t.equal((await api.updateDescription({ project_id: p.publicId, description: second })).statusCode, 200)
  rows = await projectActivities(db, p.id)
  t.equal(rows.length, 2)
  t.same(rows[1]!.content, { old_description: first, new_description: second })
})

t.test('the same text again succeeds and records nothing; other whitespace is a change', async (t) => {
  const text = '{"same": true}'
  const p = await project({ name: 'No-op', description: text })
  const before = await projectRow(db, p.id)
  const res = await api.updateDescription({ project_id: p.publicId, description: text })
  t.equal(res.statusCode, 200)
  t.ok(res.json().project.description === text)
  t.equal(res.json().project.updated_at, OLD)
  t.same(await projectRow(db, p.id), before, 'row untouched')
  t.equal((await projectActivities(db, p.id)).length, 0)

  // Equal as JSON, different as text: stored as sent.
  const respaced = '{"same":true}'
  const changed = await api.updateDescription({ project_id: p.publicId, description: respaced })
  t.equal(changed.statusCode, 200)
  t.ok((await storedDescription(p.id)) === respaced)
  t.same((await projectActivities(db, p.id)).map((a) => a.content), [{ old_description: text, new_description: respaced }])
})

t.test('a description change leaves every other column alone', async (t) => {
  const p = await project({ name: 'Columns', access: { public: 0, company: 40, space: 70 }, state: 'paused' })
  await db.insertInto('project_pins').values({ person_id: champion.id, project_id: p.id }).execute()
  const before = await projectRow(db, p.id)
  const res = await api.updateDescription({ project_id: p.publicId, description: '{"type":"doc"}' })
  t.equal(res.statusCode, 200)
  const after = await projectRow(db, p.id)
  const { description: d1, updated_at: u1, ...restBefore } = before
  const { description: d2, updated_at: u2, ...restAfter } = after
  t.same(restAfter, restBefore)
  t.equal(d1, null)
  t.equal(d2, '{"type":"doc"}')
  t.not(u1, u2)
  const body = res.json().project
  t.equal(body.name, 'Columns')
  t.equal(body.state, 'paused')
  t.equal(body.status, 'paused')
  t.equal(body.is_pinned, true)
  t.equal(body.success_status, null)
})

t.test('closed and paused projects can be described; archived ones are 404', async (t) => {
  for (const state of ['closed', 'paused'] as const) {
    const p = await project({ state })
    const res = await api.updateDescription({ project_id: p.publicId, description: `{"state":"${state}"}` })
    t.equal(res.statusCode, 200)
    t.equal(res.json().project.state, state)
    t.equal(await storedDescription(p.id), `{"state":"${state}"}`)
  }
  const archived = await project({ archived: true, description: '"old"' })
  const before = await projectRow(db, archived.id)
  const res = await api.updateDescription({ project_id: archived.publicId, description: '"new"' })
  t.equal(res.statusCode, 404)
  t.match(res.json(), { statusCode: 404, error: 'Not Found', code: 'not_found' })
  t.same(await projectRow(db, archived.id), before)
  t.equal((await projectActivities(db, archived.id)).length, 0)
})

t.test('concurrent updates of name and description lose nothing', async (t) => {
  const p = await project({ name: 'Concurrent start', description: '"start"' })
  const names = Array.from({ length: 20 }, (_, i) => `Concurrent name ${i}`)
  const descriptions = Array.from({ length: 20 }, (_, i) => `{"n":${i}}`)
  const requests = []
  for (let i = 0; i < 20; i++) {
    requests.push(api.updateName({ project_id: p.publicId, name: names[i] }))
    requests.push(api.updateDescription({ project_id: p.publicId, description: descriptions[i] }))
  }
  const responses = await Promise.all(requests)
  t.same(responses.map((r) => r.statusCode), Array(40).fill(200), 'all 200')
  for (const [i, res] of responses.entries()) {
    const project = res.json().project
    if (i % 2 === 0) t.ok(names.includes(project.name))
    else t.ok(descriptions.includes(project.description))
  }

  const final = await db.selectFrom('projects').select(['name', 'description']).where('id', '=', p.id).executeTakeFirstOrThrow()
  t.ok(names.includes(final.name), `final name ${final.name} is one that was sent`)
  t.ok(descriptions.includes(final.description!), `final description ${final.description} is one that was sent`)

  const rows = await projectActivities(db, p.id)
  t.equal(rows.length, 40, 'one activity per request')
  const renames = rows.filter((a) => a.action === 'project_renamed')
  const described = rows.filter((a) => a.action === 'project_description_changed')
  t.equal(renames.length, 20)
  t.equal(described.length, 20)
  t.same(renames.map((a) => a.content.new_name).sort(), [...names].sort())
  t.same(described.map((a) => a.content.new_description).sort(), [...descriptions].sort())

  // The old values chain: each value replaced exactly once, from the start to the final one.
  const chain = (items: Array<{ old: unknown, new: unknown }>, start: unknown, end: unknown) => {
    const olds = items.map((i) => i.old).sort()
    const expected = [start, ...items.map((i) => i.new).filter((v) => v !== end)].sort()
    t.same(olds, expected, 'every old value is the start or a value sent, each once')
  }
  chain(renames.map((a) => ({ old: a.content.old_name, new: a.content.new_name })), 'Concurrent start', final.name)
  chain(described.map((a) => ({ old: a.content.old_description, new: a.content.new_description })), '"start"', final.description)
})

t.test('one rename and one description change at once: both land', async (t) => {
  for (let round = 0; round < 5; round++) {
    const p = await project({ name: `Pair ${round}`, description: '"before"' })
    const [a, b] = await Promise.all([
      api.updateName({ project_id: p.publicId, name: `Pair ${round} renamed` }),
      api.updateDescription({ project_id: p.publicId, description: `{"round":${round}}` })
    ])
    t.equal(a.statusCode, 200)
    t.equal(b.statusCode, 200)
    const final = await db.selectFrom('projects').select(['name', 'description']).where('id', '=', p.id).executeTakeFirstOrThrow()
    t.same(final, { name: `Pair ${round} renamed`, description: `{"round":${round}}` })
    t.equal((await projectActivities(db, p.id)).length, 2)
  }
})
