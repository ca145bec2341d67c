// POST /api/external/v1/projects/update_name: the rename, its input rules, its
// audit row, and that it touches nothing but the name.
import t from '../../tap.js'
import type { Db } from '../../../src/db/index.js'
import { decodeId, shortId, slug, sluggedId } from '../../../src/ids.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, expectInvalidInput, projectActivities, projectRow, tokenFor } from '../../helper.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const { app, db } = await build(t)

const company = await createCompany(db)
const champion = await createPerson(db, company.id, { fullName: 'Chris Champion' })
const other = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [champion.id])
const token = await tokenFor(db, champion.email)
const api = client(app, token.token)

const OLD = '2020-01-02T03:04:05.678Z'

/** A project of the champion's, last updated long ago so that "advanced" and "unchanged" are exact. */
async function project (options: Parameters<typeof createProject>[2] = {}) {
  const created = await createProject(db, space, { access: { company: 40 }, ...options })
  await addContributor(db, created.id, champion.id, 'champion')
  await db.updateTable('projects').set({ updated_at: OLD }).where('id', '=', created.id).execute()
  return created
}

async function expectRejected (t: Tap, db: Db, body: unknown, path: string, message?: string) {
  const target = await project({ name: 'Untouched' })
  const before = await projectRow(db, target.id)
  const res = await api.updateName({ project_id: target.publicId, name: 'placeholder', ...(body as object) })
  expectInvalidInput(t, res, path, message)
  t.same(await projectRow(db, target.id), before, 'row unchanged')
  t.equal((await db.selectFrom('activities').select('id').where('project_id', '=', target.id).execute()).length, 0, 'no activity')
}

t.test('renames and answers with the whole project', async (t) => {
  const p = await project({ name: 'Website Redesign' })
  t.equal(p.publicId, `website-redesign-${shortId(p.id)}`)

  const res = await api.updateName({ project_id: p.publicId, name: 'Brand New Site' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.same(Object.keys(body), ['project'])
  t.equal(body.project.name, 'Brand New Site')
  t.equal(body.project.id, `brand-new-site-${shortId(p.id)}`)
  t.equal(decodeId(body.project.id), p.id, 'new id decodes to the same row')
  t.equal(Object.keys(body.project).length, 38)
  t.equal(body.project.my_role, 'champion')
  t.same(body.project.permissions, { can_view: true, can_comment: true, can_edit: true, has_full_access: true })

  t.equal((await projectRow(db, p.id)).name, 'Brand New Site')

  // The id from before the rename still reaches the project.
  const viaOld = await api.get(p.publicId)
  t.equal(viaOld.statusCode, 200)
  t.equal(viaOld.json().project.name, 'Brand New Site')
  t.equal(viaOld.json().project.id, body.project.id)
  const again = await api.updateName({ project_id: p.publicId, name: 'Renamed Through Old Id' })
  t.equal(again.statusCode, 200)
  t.equal(again.json().project.name, 'Renamed Through Old Id')
  t.equal(again.json().project.id, sluggedId(p.id, 'Renamed Through Old Id'))
})

t.test('accepts a canonical UUID, an upper-case UUID and a slug-less id', async (t) => {
  const p = await project()
  const byUuid = await api.updateName({ project_id: p.id, name: 'By UUID' })
  t.equal(byUuid.statusCode, 200)
  t.equal(byUuid.json().project.name, 'By UUID')

  const byUpperUuid = await api.updateName({ project_id: p.id.toUpperCase(), name: 'By upper UUID' })
  t.equal(byUpperUuid.statusCode, 200)
  t.equal(byUpperUuid.json().project.name, 'By upper UUID')

  const short = shortId(p.id)
  t.match(short, /^[0-9A-Za-z]{22}$/)
  const byShort = await api.updateName({ project_id: short, name: 'By short id' })
  t.equal(byShort.statusCode, 200)
  t.equal(byShort.json().project.name, 'By short id')
  t.equal(byShort.json().project.id, `by-short-id-${short}`)
  t.equal((await projectRow(db, p.id)).name, 'By short id')
})

t.test('a name without letters or digits gives an id without a slug', async (t) => {
  const p = await project()
  const res = await api.updateName({ project_id: p.publicId, name: '🚀 !!' })
  t.equal(res.statusCode, 200)
  t.equal(slug('🚀 !!'), '')
  t.equal(res.json().project.id, shortId(p.id))
  t.equal(decodeId(res.json().project.id), p.id)
})

t.test('undecodable and unknown ids are one 404', async (t) => {
  const p = await project({ name: 'Known' })
  const before = await projectRow(db, p.id)
  const bodies = []
  for (const id of ['nope', 'known-', '!!!', `known-${shortId(p.id)}x`, shortId('00000000-0000-4000-8000-000000000000'), '00000000-0000-4000-8000-000000000000', 'zzzzzzzzzzzzzzzzzzzzzz',
    shortId(champion.id), champion.id, shortId(space.id), `known-${'x'.repeat(10_000)}`]) {
    const res = await api.updateName({ project_id: id, name: 'Never' })
    t.equal(res.statusCode, 404, `404 for ${id}`)
    bodies.push(res.json())
  }
  for (const body of bodies) t.same(body, bodies[0])
  t.match(bodies[0], { statusCode: 404, error: 'Not Found', code: 'not_found' })
  t.same(await projectRow(db, p.id), before)
})

t.test('trims surrounding whitespace and stores the trimmed name', async (t) => {
  const p = await project()
  const res = await api.updateName({ project_id: p.publicId, name: '  New name\n\t ' })
  t.equal(res.statusCode, 200)
  t.equal(res.json().project.name, 'New name')
  t.equal(res.json().project.id, `new-name-${shortId(p.id)}`)
  t.equal((await projectRow(db, p.id)).name, 'New name')
  const [activity] = await projectActivities(db, p.id)
  t.equal(activity?.content.new_name, 'New name')

  const crlf = await api.updateName({ project_id: p.publicId, name: '\r\n\u00a0Spaced\u2003 \r\n' })
  t.equal(crlf.statusCode, 200)
  t.equal(crlf.json().project.name, 'Spaced')
  t.equal((await projectRow(db, p.id)).name, 'Spaced')
})

t.test('length is counted in code points', async (t) => {
  const p = await project()
  const astral = '😀'.repeat(255)
  t.equal(astral.length, 510)
  const res = await api.updateName({ project_id: p.publicId, name: astral })
  t.equal(res.statusCode, 200, '255 astral code points accepted')
  t.equal(res.json().project.name, astral)
  t.equal((await projectRow(db, p.id)).name, astral)

  const ascii = 'a'.repeat(255)
  const res2 = await api.updateName({ project_id: p.publicId, name: `  ${ascii}  ` })
  t.equal(res2.statusCode, 200, '255 characters after trimming accepted')
  t.equal((await projectRow(db, p.id)).name, ascii)

  const combining = 'e\u0301'.repeat(127) + 'x' // 255 code points, shown as 128 letters
  const res3 = await api.updateName({ project_id: p.publicId, name: combining })
  t.equal(res3.statusCode, 200)
  t.equal((await projectRow(db, p.id)).name, combining, 'not normalised')

  const one = await api.updateName({ project_id: p.publicId, name: 'x' })
  t.equal(one.statusCode, 200, 'one character accepted')
  t.equal((await projectRow(db, p.id)).name, 'x')
})

t.test('too long names are 400 and change nothing', async (t) => {
  await expectRejected(t, db, { name: '😀'.repeat(256) }, '/name')
  await expectRejected(t, db, { name: 'a'.repeat(256) }, '/name')
  await expectRejected(t, db, { name: 'é'.repeat(300) }, '/name')
  await expectRejected(t, db, { name: 'a'.repeat(100_000) }, '/name')
})

t.test('blank names are 400 name must not be blank: whitespace, and characters that show nothing', async (t) => {
  for (const name of ['', '   ', '\n', ' \t\r\n ', '\u00a0\u2003', '\u200b', '\u200b\u200c\u200d', ' \u2060 ', '\u00ad', '\u3164', '\u0085', '\ufeff\u200b']) {
    await expectRejected(t, db, { name }, '/name', 'name must not be blank')
  }
})

t.test('control characters inside the name are 400', async (t) => {
  for (const name of ['a\u0007b', 'a\nb', 'a\tb', 'a\rb', '\u007f', 'a\u007fb', 'a\u0000b', '\u0000', '\u001b[31mred', 'x\u001f']) {
    await expectRejected(t, db, { name }, '/name')
  }
})

t.test('lone surrogates are 400', async (t) => {
  for (const name of ['\ud800', 'a\udc00b', 'x\ud83d']) {
    await expectRejected(t, db, { name }, '/name')
  }
})

t.test('project_id must be a non-blank string', async (t) => {
  for (const projectId of ['', '  ', '\n\t']) {
    await expectRejected(t, db, { project_id: projectId }, '/project_id')
  }
  for (const projectId of [123, null, ['x'], { id: 'x' }, true]) {
    await expectRejected(t, db, { project_id: projectId }, '/project_id')
  }
})

t.test('name must be a string', async (t) => {
  for (const name of [123, null, ['x'], { a: 1 }, false]) {
    await expectRejected(t, db, { name }, '/name')
  }
})

t.test('missing fields, unknown fields and non-object bodies are 400', async (t) => {
  const p = await project({ name: 'Still here' })
  const before = await projectRow(db, p.id)

  expectInvalidInput(t, await api.updateName({ name: 'No id' }), '/project_id')
  expectInvalidInput(t, await api.updateName({ project_id: p.publicId }), '/name')
  expectInvalidInput(t, await api.updateName({ project_id: p.publicId, name: 'x', description: '{}' }), '/description')
  expectInvalidInput(t, await api.updateName({ project_id: p.publicId, name: 'x', extra: null }), '/extra')

  for (const payload of ['[]', '"x"', '42', 'null', '{"project_id":', '{}']) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/external/v1/projects/update_name',
      headers: { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' },
      payload
    })
    t.equal(res.statusCode, 400, `400 for ${payload}`)
    t.match(res.json(), { statusCode: 400, error: 'Bad Request', code: 'invalid_input' })
  }
  t.same(await projectRow(db, p.id), before)
  t.equal((await projectActivities(db, p.id)).length, 0)
})

t.test('a rename writes exactly one audit activity and advances updated_at', async (t) => {
  const p = await project({ name: 'Before' })
  const res = await api.updateName({ project_id: p.publicId, name: 'After' })
  t.equal(res.statusCode, 200)

  const rows = await projectActivities(db, p.id)
  t.equal(rows.length, 1)
  const activity = rows[0]!
  t.equal(activity.action, 'project_renamed')
  t.same(activity.content, { old_name: 'Before', new_name: 'After' })
  t.equal(activity.author_id, champion.id)
  t.equal(activity.token_id, token.id)
  t.equal(activity.project_id, p.id)
  t.equal(activity.company_id, company.id)

  const after = await projectRow(db, p.id)
  t.ok(new Date(after.updated_at as string) > new Date(OLD), 'updated_at advanced')
  t.equal(res.json().project.updated_at, new Date(after.updated_at as string).toISOString(), 'response carries the new updated_at')

  const second = await api.updateName({ project_id: p.publicId, name: 'After again' })
  t.equal(second.statusCode, 200)
  const all = await projectActivities(db, p.id)
  t.equal(all.length, 2)
  t.same(all.map((a) => a.content), [{ old_name: 'Before', new_name: 'After' }, { old_name: 'After', new_name: 'After again' }])
})

t.test('setting the current name again succeeds and records nothing', async (t) => {
  const p = await project({ name: 'Same' })
  const before = await projectRow(db, p.id)
  for (const name of ['Same', ' Same ', '\nSame\t']) {
    const res = await api.updateName({ project_id: p.publicId, name })
    t.equal(res.statusCode, 200, `200 for ${JSON.stringify(name)}`)
    t.equal(res.json().project.name, 'Same')
    t.equal(res.json().project.updated_at, OLD)
  }
  t.same(await projectRow(db, p.id), before, 'row untouched, updated_at included')
  t.equal((await projectActivities(db, p.id)).length, 0, 'no activity')

  // A change of case is a change.
  const res = await api.updateName({ project_id: p.publicId, name: 'SAME' })
  t.equal(res.statusCode, 200)
  t.equal((await projectActivities(db, p.id)).length, 1)
})

t.test('only the name and updated_at change', async (t) => {
  const p = await project({
    name: 'Full row',
    description: '{"type":"doc","content":[]}',
    access: { public: 10, company: 40, space: 70 },
    state: 'closed'
  })
  await db.updateTable('projects').set({
    next_check_in_scheduled_at: '2030-01-01T00:00:00.123Z',
    next_update_scheduled_at: '2030-02-01T00:00:00Z',
    tasks_kanban_state: '{"todo":["a"]}',
    timeframe_start_type: 'quarter',
    timeframe_start_value: 'Q1 2027',
    timeframe_start_date: '2027-01-01',
    timeframe_end_type: null,
    timeframe_end_value: null,
    timeframe_end_date: null
  }).where('id', '=', p.id).execute()
  await db.insertInto('project_pins').values({ person_id: champion.id, project_id: p.id }).execute()
  await db.insertInto('project_pins').values({ person_id: other.id, project_id: p.id }).execute()
  const pinsBefore = await db.selectFrom('project_pins').selectAll().where('project_id', '=', p.id).orderBy('person_id').execute()
  const contributorsBefore = await db.selectFrom('project_contributors').selectAll().where('project_id', '=', p.id).execute()
  const before = await projectRow(db, p.id)
  const responseBefore = (await api.get(p.publicId)).json().project

  const res = await api.updateName({ project_id: p.publicId, name: 'Full row renamed' })
  t.equal(res.statusCode, 200)
  const after = await projectRow(db, p.id)
  const { name: n1, updated_at: u1, ...restBefore } = before
  const { name: n2, updated_at: u2, ...restAfter } = after
  t.same(restAfter, restBefore, 'every other column as it was')
  t.equal(n1, 'Full row')
  t.equal(n2, 'Full row renamed')
  t.not(u2, u1)
  t.same(await db.selectFrom('project_pins').selectAll().where('project_id', '=', p.id).orderBy('person_id').execute(), pinsBefore)
  t.same(await db.selectFrom('project_contributors').selectAll().where('project_id', '=', p.id).execute(), contributorsBefore)

  const renamed = res.json().project
  for (const key of ['description', 'state', 'status', 'success_status', 'closed_at', 'archived_at', 'is_archived',
    'is_outdated', 'is_pinned', 'access_levels', 'privacy', 'timeframe', 'tasks_kanban_state', 'next_check_in_scheduled_at',
    'next_update_scheduled_at', 'inserted_at', 'permissions', 'my_role', 'contributors']) {
    t.same(renamed[key], responseBefore[key], `${key} unchanged in the response`)
  }
  t.equal(renamed.state, 'closed')
  t.equal(renamed.success_status, 'achieved')
  t.equal(renamed.is_pinned, true)
  t.same(renamed.access_levels, { public: 10, company: 40, space: 70 })
})

t.test('closed and paused projects can be renamed; archived ones are 404', async (t) => {
  const closed = await project({ name: 'Closed one', state: 'closed' })
  const closedRes = await api.updateName({ project_id: closed.publicId, name: 'Closed renamed' })
  t.equal(closedRes.statusCode, 200)
  t.equal(closedRes.json().project.name, 'Closed renamed')
  t.equal(closedRes.json().project.state, 'closed')
  t.equal(closedRes.json().project.status, 'achieved')
  t.equal((await projectRow(db, closed.id)).state, 'closed')

  const paused = await project({ name: 'Paused one', state: 'paused' })
  const pausedRes = await api.updateName({ project_id: paused.publicId, name: 'Paused renamed' })
  t.equal(pausedRes.statusCode, 200)
  t.equal(pausedRes.json().project.state, 'paused')
  t.equal(pausedRes.json().project.status, 'paused')
  t.equal((await projectRow(db, paused.id)).name, 'Paused renamed')

  const archived = await project({ name: 'Archived one', archived: true })
  const before = await projectRow(db, archived.id)
  for (const id of [archived.publicId, archived.id]) {
    const res = await api.updateName({ project_id: id, name: 'Archived renamed' })
    t.equal(res.statusCode, 404)
    t.match(res.json(), { statusCode: 404, error: 'Not Found', code: 'not_found' })
  }
  t.same(await projectRow(db, archived.id), before)
  t.equal((await projectActivities(db, archived.id)).length, 0)
})

t.test('a read-only token may not rename', async (t) => {
  const p = await project({ name: 'Read only' })
  const before = await projectRow(db, p.id)
  const readOnly = await tokenFor(db, champion.email, { readOnly: true })
  const res = await client(app, readOnly.token).updateName({ project_id: p.publicId, name: 'Nope' })
  t.equal(res.statusCode, 403)
  t.equal(res.json().code, 'read_only_token')
  t.same(await projectRow(db, p.id), before)
})
