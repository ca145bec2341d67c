// POST projects/update_start_date and projects/update_due_date: a contextual date
// round-trips exactly, bad dates are 400, null clears, the same date records
// nothing, and the permission table (edit access) holds.
import t from '../../tap.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, expectInvalidInput, projectActivities, projectRow, tokenFor } from '../../helper.js'

const { app, db } = await build(t)
const company = await createCompany(db)
const champion = await createPerson(db, company.id)
const subscriber = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [champion.id, subscriber.id])
const api = client(app, (await tokenFor(db, champion.email)).token)

async function project () {
  const p = await createProject(db, space, { access: { space: 70 } })
  await addContributor(db, p.id, champion.id, 'champion')
  const list = await db.insertInto('subscription_lists').values({ project_id: p.id }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('subscriptions').values({ subscription_list_id: list.id, person_id: subscriber.id, type: 'joined' }).execute()
  return p
}

const OPS = [
  { op: 'update_start_date', field: 'start_date', key: 'contextual_start_date', action: 'project_start_date_updating', notifies: false },
  { op: 'update_due_date', field: 'due_date', key: 'contextual_end_date', action: 'project_due_date_updating', notifies: true }
] as const

for (const { op, field, key, action, notifies } of OPS) {
  t.test(`${op}: every kind of date round-trips, is recorded, and null clears it`, async (t) => {
    const p = await project()
    const webhook = await db.insertInto('webhooks').values({ company_id: company.id, url: 'https://hooks.example.com/d', events: [op === 'update_start_date' ? 'project.start_date_changed' : 'project.due_date_changed'], secret: 'whsec_x' })
      .returning('id').executeTakeFirstOrThrow()
    const dates = [
      { date: '2026-05-14', date_type: 'day', value: 'May 14, 2026' },
      { date: '2026-06-30', date_type: 'month', value: 'Jun 2026' },
      { date: '2026-06-30', date_type: 'quarter', value: 'Q2 2026' },
      { date: '2026-12-31', date_type: 'year', value: '2026' },
      { date: '2028-02-29', date_type: 'day', value: 'date' }
    ]
    for (const date of dates) {
      const res = await api.project(op, { project_id: p.publicId, [field]: date })
      t.equal(res.statusCode, 200)
      t.same(Object.keys(res.json()), ['success', 'project'])
      t.equal(res.json().success, true)
      t.match(res.headers.etag, /^"/)
      t.same(res.json().project.timeframe[key], date, 'answered as sent')
      t.same((await api.get(p.publicId)).json().project.timeframe[key], date, 'read back as sent')
    }
    const activities = await projectActivities(db, p.id)
    t.equal(activities.length, dates.length)
    t.ok(activities.every((a) => a.action === action))
    t.same(activities[1]!.content, { [`old_${field}`]: dates[0], [`new_${field}`]: dates[1] })
    t.equal((await db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhook.id).execute()).length, dates.length, 'one event each')
    const told = await db.selectFrom('notifications').select('person_id').where('project_id', '=', p.id).execute()
    t.same(told.map((n) => n.person_id), notifies ? dates.map(() => subscriber.id) : [], notifies ? 'subscribers told' : 'nobody told, as Operately')

    const same = await api.project(op, { project_id: p.publicId, [field]: dates[dates.length - 1] })
    t.equal(same.statusCode, 200)
    t.equal((await projectActivities(db, p.id)).length, dates.length, 'the same date records nothing')

    const cleared = await api.project(op, { project_id: p.publicId, [field]: null })
    t.equal(cleared.statusCode, 200)
    t.equal(cleared.json().project.timeframe, null, 'no date left: no timeframe')
    t.equal((await projectRow(db, p.id))[`timeframe_${key === 'contextual_start_date' ? 'start' : 'end'}_date`], null)
    await db.deleteFrom('webhooks').where('id', '=', webhook.id).execute()
  })

  t.test(`${op}: invalid dates and bodies are 400 and change nothing`, async (t) => {
    const p = await project()
    const before = await projectRow(db, p.id)
    const bad: Array<[unknown, string]> = [
      [{ date: '2026-02-30', date_type: 'day', value: 'Feb 30, 2026' }, `/${field}/date`],
      [{ date: '2026-13-01', date_type: 'day', value: 'x' }, `/${field}/date`],
      [{ date: '0000-01-01', date_type: 'year', value: '0' }, `/${field}/date`],
      [{ date: '2026-1-01', date_type: 'day', value: 'x' }, `/${field}/date`],
      [{ date: '2026-06-30', date_type: 'quarter', value: 'Q3 2026' }, `/${field}/value`],
      [{ date: '2026-06-30', date_type: 'month', value: 'June 2026' }, `/${field}/value`],
      [{ date: '2026-06-30', date_type: 'year', value: '2027' }, `/${field}/value`],
      [{ date: '2026-06-30', date_type: 'day', value: ' ' }, `/${field}/value`],
      [{ date: '2026-06-30', date_type: 'week', value: 'W26' }, `/${field}/date_type`],
      [{ date: '2026-06-30', date_type: 'day' }, `/${field}/value`],
      [{ date: '2026-06-30', date_type: 'day', value: 'x', extra: 1 }, `/${field}/extra`],
      ['2026-06-30', `/${field}`]
    ]
    for (const [date, path] of bad) {
      const res = await api.project(op, { project_id: p.publicId, [field]: date })
      t.equal(res.statusCode, 400, `400 for ${JSON.stringify(date)}`)
      t.equal(res.json().code, 'invalid_input')
      t.ok(res.json().details.some((d: { path: string }) => d.path.startsWith(path)), `a detail at ${path}`)
    }
    expectInvalidInput(t, await api.project(op, { project_id: p.publicId }), `/${field}`)
    expectInvalidInput(t, await api.project(op, { project_id: ' ', [field]: null }), '/project_id')
    expectInvalidInput(t, await api.project(op, { project_id: p.publicId, [field]: null, name: 'x' }), '/name')
    t.same(await projectRow(db, p.id), before)
  })

  t.test(`${op}: a due date before the start date is accepted, as Operately; If-Match; read-only`, async (t) => {
    const p = await project()
    await api.project('update_start_date', { project_id: p.publicId, start_date: { date: '2027-01-01', date_type: 'day', value: 'Jan 1, 2027' } })
    const res = await api.project('update_due_date', { project_id: p.publicId, due_date: { date: '2026-01-01', date_type: 'year', value: '2026' } })
    t.equal(res.statusCode, 200)
    const stale = await api.project(op, { project_id: p.publicId, [field]: null }, { 'if-match': '"stale"' })
    t.equal(stale.statusCode, 412)
    const fresh = await api.project(op, { project_id: p.publicId, [field]: null }, { 'if-match': res.headers.etag as string })
    t.equal(fresh.statusCode, 200)
    const readOnly = client(app, (await tokenFor(db, champion.email, { readOnly: true })).token)
    t.equal((await readOnly.project(op, { project_id: p.publicId, [field]: null })).json().code, 'read_only_token')
  })

  // Operately's table: edit access on the project (company, space or own binding).
  const TABLE: Array<{ company: 0 | 10 | 40 | 70, space: 0 | 10 | 40 | 70, binding: 0 | 40 | 70 | 100, expected: number }> = [
    { company: 0, space: 0, binding: 0, expected: 404 },
    { company: 10, space: 0, binding: 0, expected: 403 },
    { company: 40, space: 0, binding: 0, expected: 403 },
    { company: 70, space: 0, binding: 0, expected: 200 },
    { company: 0, space: 40, binding: 0, expected: 403 },
    { company: 0, space: 70, binding: 0, expected: 200 },
    { company: 0, space: 0, binding: 40, expected: 403 },
    { company: 0, space: 0, binding: 70, expected: 200 },
    { company: 0, space: 0, binding: 100, expected: 200 }
  ]
  for (const row of TABLE) {
    t.test(`${op}: company=${row.company} space=${row.space} binding=${row.binding}: ${row.expected}`, async (t) => {
      const person = await createPerson(db, company.id)
      const s = await createSpace(db, company.id, [person.id])
      const p = await createProject(db, s, { access: { company: row.company, space: row.space } })
      if (row.binding > 0) await addContributor(db, p.id, person.id, 'contributor', row.binding as 40)
      const res = await client(app, (await tokenFor(db, person.email)).token).project(op, { project_id: p.publicId, [field]: { date: '2026-03-31', date_type: 'quarter', value: 'Q1 2026' } })
      t.equal(res.statusCode, row.expected)
      t.equal((await projectActivities(db, p.id)).length, row.expected === 200 ? 1 : 0)
    })
  }
}
