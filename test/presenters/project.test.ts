// The Project object's rules, from rows alone: no database. Each rule of SPEC parts 6
// and 7 that is not a plain column is checked at its edges, then toProject on a row
// shaped as the aggregate returns it.
import t from 'tap'
import { Value } from 'typebox/value'
import { KEPT_COLUMNS, PERSONAL_COLUMNS, type ProjectText, type ProjectView } from '../../src/db/project-aggregate.js'
import fc from 'fast-check'
import {
  iso, nextMilestone, permissions, privacy, projectAnswer, projectStatus, subscriberRole, toProject, toTimeframe, writeProjectAnswer
} from '../../src/presenters/project.js'
import { AnswerCache, plainAnswer, type AnswerPart } from '../../src/plugins/answers.js'
import { CHILDREN_FIELDS, PROJECT_RUNS, writeProject } from '../../src/schemas/serializer.js'
import { ProjectSchema } from '../../src/schemas/projects.js'
import { COMPONENTS } from '../../src/schemas/components.js'
import { shortId } from '../../src/ids.js'

/** An answer's parts as the text a client that does not accept gzip is sent. */
const plain = (parts: readonly AnswerPart[]) => Buffer.concat(plainAnswer(parts)).toString()

t.test('status: result when closed, then paused, outdated, the last check-in, pending', async (t) => {
  const base = { state: 'active' as const, success_status: null, is_outdated: false, last_check_in: null }
  t.equal(projectStatus(base), 'pending')
  t.equal(projectStatus({ ...base, last_check_in: { status: 'caution' } }), 'caution')
  t.equal(projectStatus({ ...base, is_outdated: true, last_check_in: { status: 'on_track' } }), 'outdated')
  t.equal(projectStatus({ ...base, state: 'paused', is_outdated: true }), 'paused')
  t.equal(projectStatus({ ...base, state: 'closed', success_status: 'missed', last_check_in: { status: 'on_track' } }), 'missed')
  t.equal(projectStatus({ ...base, state: 'closed', success_status: 'achieved' }), 'achieved')
  // Closed without a result recorded falls through to the other rules.
  t.equal(projectStatus({ ...base, state: 'closed', last_check_in: { status: 'off_track' } }), 'off_track')
})

t.test('next milestone: the pending one due first; undated only when none is dated', async (t) => {
  const m = (id: string, status: 'pending' | 'done', due: string | null) =>
    ({ id, title: id, status, description: null, due_date: due, completed_at: null, inserted_at: '2026-01-01T00:00:00.000Z' })
  t.equal(nextMilestone([]), null)
  t.equal(nextMilestone([m('a', 'done', '2026-01-01')]), null)
  t.equal(nextMilestone([m('a', 'pending', null), m('b', 'pending', '2026-03-01'), m('c', 'pending', '2026-02-01')])?.id, 'c')
  t.equal(nextMilestone([m('a', 'done', '2025-01-01'), m('b', 'pending', '2026-03-01')])?.id, 'b')
  t.equal(nextMilestone([m('a', 'pending', null), m('b', 'pending', null)])?.id, 'a', 'the first in order when none is dated')
  t.equal(nextMilestone([m('a', 'pending', '2026-03-01'), m('b', 'pending', '2026-03-01')])?.id, 'a', 'the first in order on a tie')
})

t.test('privacy: the widest audience with any access', async (t) => {
  t.equal(privacy({ public_access: 10, company_access: 0, space_access: 0 }), 'public')
  t.equal(privacy({ public_access: 0, company_access: 40, space_access: 70 }), 'internal')
  t.equal(privacy({ public_access: 0, company_access: 0, space_access: 10 }), 'confidential')
  t.equal(privacy({ public_access: 0, company_access: 0, space_access: 0 }), 'secret')
})

t.test('permissions follow the access levels 10, 40, 70, 100', async (t) => {
  t.same(permissions(0), { can_view: false, can_comment: false, can_edit: false, has_full_access: false })
  t.same(permissions(10), { can_view: true, can_comment: false, can_edit: false, has_full_access: false })
  t.same(permissions(40), { can_view: true, can_comment: true, can_edit: false, has_full_access: false })
  t.same(permissions(69), { can_view: true, can_comment: true, can_edit: false, has_full_access: false })
  t.same(permissions(70), { can_view: true, can_comment: true, can_edit: true, has_full_access: false })
  t.same(permissions(100), { can_view: true, can_comment: true, can_edit: true, has_full_access: true })
})

// A contributor's level comes computed by the aggregate: test/db/access.test.ts.
t.test('a subscriber is named by responsibility, then title, then role', async (t) => {
  t.equal(subscriberRole({ role: 'contributor', responsibility: 'Design', person: { title: 'Designer' } }), 'Design')
  t.equal(subscriberRole({ role: 'contributor', responsibility: null, person: { title: 'Designer' } }), 'Designer')
  t.equal(subscriberRole({ role: 'reviewer', responsibility: null, person: { title: null } }), 'reviewer')
})

t.test('timeframe: each end only when it is complete; null when neither is', async (t) => {
  const none = { timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null, timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null }
  t.equal(toTimeframe(none), null)
  t.same(toTimeframe({ ...none, timeframe_end_type: 'quarter', timeframe_end_value: 'Q4 2026', timeframe_end_date: '2026-12-31' }), {
    contextual_start_date: null,
    contextual_end_date: { date_type: 'quarter', value: 'Q4 2026', date: '2026-12-31' }
  })
  t.equal(toTimeframe({ ...none, timeframe_start_type: 'day', timeframe_start_value: null, timeframe_start_date: '2026-01-01' }), null, 'an incomplete end is left out')
})

const UUIDS = {
  project: '0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9a01',
  space: '0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9a02',
  alice: '0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9a03',
  carol: '0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9a04',
  champion: '0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9a05',
  contributor: '0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9a06',
  milestone1: '0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9a07',
  milestone2: '0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9a08'
}
const alice = { id: UUIDS.alice, full_name: 'Alice Johnson', email: 'alice@acme.test', title: 'Product Manager', avatar_url: null, type: 'human' as const }
const carol = { id: UUIDS.carol, full_name: 'Carol Martinez', email: 'carol@acme.test', title: null, avatar_url: null, type: 'human' as const }

function row (overrides: Partial<ProjectView> = {}): ProjectView {
  return {
    id: UUIDS.project,
    name: 'Website Redesign',
    description: '{"type":"doc"}',
    goal_id: null,
    space_id: UUIDS.space,
    space_name: 'Product',
    public_access: 0,
    company_access: 40,
    space_access: 70,
    archived_at: null,
    closed_at: null,
    // The aggregate's JSON text holds timestamps as PostgreSQL writes them in JSON.
    inserted_at: '2026-09-01T10:00:00+00:00',
    updated_at: '2026-11-01T10:00:00.123456+00:00',
    next_check_in_scheduled_at: '2026-11-29T10:00:00+00:00',
    next_update_scheduled_at: null,
    state: 'active',
    success_status: null,
    tasks_kanban_state: '{}',
    timeframe_start_type: null,
    timeframe_start_value: null,
    timeframe_start_date: null,
    timeframe_end_type: null,
    timeframe_end_value: null,
    timeframe_end_date: null,
    is_outdated: false,
    is_pinned: true,
    my_role: 'champion',
    contributors: [
      { id: UUIDS.champion, role: 'champion', responsibility: null, access_level: 100, person: alice, is_subscribed: true },
      { id: UUIDS.contributor, role: 'contributor', responsibility: 'Front end', access_level: 70, person: carol, is_subscribed: false }
    ],
    goal: null,
    key_resources: [],
    last_check_in: null,
    milestones: [
      { id: UUIDS.milestone1, title: 'Launch', status: 'pending', description: null, due_date: '2026-12-01', completed_at: null, inserted_at: '2026-09-02T10:00:00+00:00' },
      { id: UUIDS.milestone2, title: 'Design', status: 'done', description: null, due_date: '2026-10-01', completed_at: '2026-10-01T12:00:00+00:00', inserted_at: '2026-09-02T10:00:00+00:00' }
    ],
    milestones_ordering_state: [UUIDS.milestone1, UUIDS.milestone2],
    notifications: [],
    subscription_list: null,
    retrospective: null,
    task_statuses: [],
    level: 100,
    ...overrides
  } as ProjectView
}

t.test('toProject: the wire object of SPEC part 7 from an aggregate row', async (t) => {
  const project = toProject(row())
  t.ok(Value.Check(COMPONENTS, ProjectSchema, project), 'matches the response schema')
  t.equal(Object.keys(project).length, 38)
  t.equal(project.id, `website-redesign-${shortId(UUIDS.project)}`)
  t.equal(project.space_id, shortId(UUIDS.space))
  t.same(project.space, { id: shortId(UUIDS.space), name: 'Product' })
  t.equal(project.inserted_at, '2026-09-01T10:00:00.000Z')
  t.equal(project.milestones[1]!.completed_at, '2026-10-01T12:00:00.000Z', 'timestamps normalised to UTC with milliseconds')
  t.equal(project.champion?.id, shortId(UUIDS.alice))
  t.equal(project.reviewer, null)
  t.same(project.contributors.map((c) => [c.role, c.access_level]), [['champion', 100], ['contributor', 70]])
  t.same(project.potential_subscribers.map((s) => [s.role, s.priority, s.is_subscribed]), [['Product Manager', true, true], ['Front end', false, false]])
  t.equal(project.next_milestone?.id, shortId(UUIDS.milestone1))
  t.same(project.milestones_ordering_state, [shortId(UUIDS.milestone1), shortId(UUIDS.milestone2)])
  t.equal(project.privacy, 'internal')
  t.equal(project.status, 'pending')
  t.equal(project.is_archived, false)
  t.same(project.permissions, permissions(100))

  const archived = toProject(row({ archived_at: '2026-11-02T00:00:00+00:00', is_outdated: true, level: 10, my_role: null }))
  t.equal(archived.is_archived, true)
  t.equal(archived.archived_at, '2026-11-02T00:00:00.000Z')
  t.equal(archived.status, 'outdated')
  t.equal(archived.is_outdated, true)
  t.equal(archived.my_role, null)
  t.same(archived.permissions, permissions(10))
})

t.test('iso: PostgreSQL\'s JSON timestamps rewritten as Date#toISOString writes them; anything else through Date', async (t) => {
  t.equal(iso('2026-11-24T10:00:00.123456+00:00'), '2026-11-24T10:00:00.123Z', 'extra digits truncated')
  t.equal(iso('2026-11-24T10:00:00.12+00:00'), '2026-11-24T10:00:00.120Z')
  t.equal(iso('2026-11-24T10:00:00+00:00'), '2026-11-24T10:00:00.000Z', 'no fraction')
  t.equal(iso('2026-11-24T11:00:00.5+01:00'), '2026-11-24T10:00:00.500Z', 'another offset')
  t.equal(iso(new Date('2026-11-24T10:00:00Z')), '2026-11-24T10:00:00.000Z')
  // PostgreSQL's form of any instant from year 1000 to 9999, microseconds with trailing zeros dropped.
  const postgresForm = fc.tuple(fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31) }), fc.integer({ min: 0, max: 999 }))
    .map(([ms, micros]) => {
      const [seconds, fraction] = new Date(ms).toISOString().slice(0, -1).split('.')
      const digits = `${fraction}${String(micros).padStart(3, '0')}`.replace(/0+$/, '')
      return `${seconds}${digits ? `.${digits}` : ''}+00:00`
    })
  fc.assert(fc.property(postgresForm, (text) => iso(text) === new Date(text).toISOString()), { numRuns: 5000 })
  t.pass('5000 instants agree with Date')

  // Near misses go through Date, as a regular expression of the form would send them:
  // any string, from PostgreSQL's form with a character changed, added or removed.
  const FORM = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00:00$/
  const reference = (text: string) => {
    const utc = FORM.exec(text)
    return utc !== null ? `${utc[1]}.${((utc[2] ?? '') + '000').slice(0, 3)}Z` : new Date(text).toISOString()
  }
  const outcome = (f: () => string) => {
    try {
      return f()
    } catch (error) {
      return `throws ${(error as Error).name}`
    }
  }
  const edited = fc.tuple(postgresForm, fc.nat(), fc.constantFrom('', '0', '9', '.', '+', '-', ':', 'T', ' ', 'Z', 'a', '٣'), fc.constantFrom('replace', 'insert', 'remove'))
    .map(([text, at, c, how]) => {
      const i = at % (text.length + 1)
      return how === 'insert' ? text.slice(0, i) + c + text.slice(i) : text.slice(0, i) + (how === 'replace' ? c : '') + text.slice(i + 1)
    })
  fc.assert(fc.property(edited, (text) => outcome(() => iso(text)) === outcome(() => reference(text))), { numRuns: 20000 })
  for (const text of ['2026-11-24T10:00:00.1234567+00:00', '2026-11-24T10:00:00.+00:00', '2026-11-24T10:00:00+01:00', '12026-11-24T10:00:00+00:00', '2026-11-24 10:00:00+00:00']) {
    t.equal(outcome(() => iso(text)), outcome(() => reference(text)), text)
  }
  t.pass('20000 edited forms agree with the form as a regular expression reads it')
})

/** A changed project whose children's version the statement did not tell: its children kept by their text alone. */
const changed = (read: ProjectText) => ({ ...read, etag: '', childrenVersion: null, childrenKept: false })

/** A read project whose version the statement did not tell: kept by its text alone. */
const unversioned = (read: ProjectText) => ({ ...read, version: null, kept: false })

/** A row's aggregate text as PostgreSQL writes it: the project's own columns, its children's (KEPT_COLUMNS), the reader's (PERSONAL_COLUMNS) last. */
function aggregate (r: ProjectView): ProjectText {
  const { level, ...columns } = r
  const last = new Set<string>([...KEPT_COLUMNS, ...PERSONAL_COLUMNS])
  const ordered: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(columns)) if (!last.has(key)) ordered[key] = value
  for (const key of [...KEPT_COLUMNS, ...PERSONAL_COLUMNS]) ordered[key] = columns[key]
  return { level, aggregate: JSON.stringify(ordered) }
}

const person = (n: number, title: string | null = null) => ({ id: `0b0a6a5e-8f5b-4b8e-9a53-1d1f4f0f9b${String(n).padStart(2, '0')}`, full_name: `Person "${n}" é`, email: `p${n}@acme.test`, title, avatar_url: null, type: 'human' as const })

/** Rows with every child present: a goal, a check-in, a retrospective, a subscription list, statuses and resources. */
const full = (overrides: Partial<ProjectView> = {}) => row({
  goal: { id: UUIDS.milestone2, name: 'Grow "revenue"', status: 'active', closed_at: null, archived_at: null, inserted_at: '2026-01-01T00:00:00+00:00', updated_at: '2026-02-01T00:00:00.5+00:00', timeframe_start_type: 'day', timeframe_start_value: 'Jan 1', timeframe_start_date: '2026-01-01', timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null },
  last_check_in: { id: UUIDS.milestone1, status: 'caution', description: '{"type":"doc"}', inserted_at: '2026-11-20T09:00:00.25+00:00', acknowledged_at: null, author: person(1), acknowledged_by: null },
  retrospective: { id: UUIDS.contributor, content: '{}', closed_at: '2026-11-21T00:00:00+00:00', success_status: 'achieved', author: person(2) },
  subscription_list: { id: UUIDS.space, send_to_everyone: false, subscriptions: [{ id: UUIDS.champion, type: 'invited', canceled: false, person: person(3, 'Engineer') }] },
  task_statuses: [{ id: UUIDS.alice, label: 'To do', color: 'gray', index: 0, value: 'pending', closed: false }],
  key_resources: [{ id: UUIDS.carol, title: 'Spec \\ "draft"', link: 'https://x.test/a?b="c"', resource_type: 'link' }],
  notifications: [{ id: UUIDS.project, action: 'project_renamed', read: false, read_at: null, inserted_at: '2026-11-22T00:00:00+00:00' }],
  ...overrides
} as Partial<ProjectView>)

const writtenWhole = (r: ProjectView) => `{"project":${writeProject(toProject(r))}}`

t.test('PROJECT_RUNS: the schema\'s fields once each, in order, and joined they are writeProject\'s bytes', async (t) => {
  t.same(PROJECT_RUNS.flatMap((run) => run.fields), Object.keys(ProjectSchema.properties), 'every field, in the schema\'s order')
  t.same(PROJECT_RUNS.filter((run) => run.children).flatMap((run) => run.fields), CHILDREN_FIELDS, 'the children\'s fields are the children runs\'')
  t.ok(PROJECT_RUNS.every((run, i) => i === 0 || run.children !== PROJECT_RUNS[i - 1]!.children), 'runs alternate')
  for (const [what, r] of [['a plain project', row()], ['every child present', full()], ['closed, archived, no contributors', full({ state: 'closed', success_status: 'missed', archived_at: '2026-11-25T00:00:00+00:00', contributors: [], my_role: null, level: 10 })]] as const) {
    const project = toProject(r)
    t.equal(`{${PROJECT_RUNS.map((run) => run.write(project)).join(',')}}`, writeProject(project), what)
  }
})

t.test('a changed project\'s answer: its children written once, kept by their text, then taken for the next change; always the bytes written whole', async (t) => {
  const answers = new AnswerCache(1 << 20)
  const first = full()
  t.equal(writeProjectAnswer(answers, changed(aggregate(first)), new Map()).toString(), writtenWhole(first), 'first change: written whole')
  t.equal(answers.count, 1, 'its children kept')
  t.equal(answers.partHits, 0)

  // Another name, time, reader and reader's part: only the project's own fields and the reader's differ.
  const renamed = full({ name: 'Renamed "again" 🚀', updated_at: '2026-11-26T12:00:00.987654+00:00', is_pinned: false, my_role: null, notifications: [], level: 40 })
  const second = writeProjectAnswer(answers, changed(aggregate(renamed)), new Map()).toString()
  t.equal(answers.partHits, 1, 'next change: children taken from memory')
  t.equal(second, writtenWhole(renamed), 'the same bytes as written whole')
  t.equal(JSON.parse(second).project.goal_id, toProject(renamed).goal_id, 'goal_id from the kept goal')
  t.equal(JSON.parse(second).project.status, 'caution', 'status from the kept check-in')
  t.equal(answers.count, 1, 'nothing more kept')

  // The status decided by the project's own columns over the kept check-in.
  const paused = full({ state: 'paused' })
  t.equal(writeProjectAnswer(answers, changed(aggregate(paused)), new Map()).toString(), writtenWhole(paused), 'paused: its own state wins')
  t.equal(answers.partHits, 2)

  // A child changed: its text is new, so nothing kept is taken.
  const retitled = full({ milestones: [{ ...first.milestones[0]!, title: 'Launch, moved' }, first.milestones[1]!] })
  t.equal(writeProjectAnswer(answers, changed(aggregate(retitled)), new Map()).toString(), writtenWhole(retitled), 'a child changed: written whole')
  t.equal(answers.partHits, 2, 'not from memory')
  t.equal(answers.count, 2, 'the new children kept beside the old')

  // A read of a changed project writes from the kept children, and keeps the whole project it writes.
  const read = full({ name: 'Read after the change' })
  const before = answers.count
  t.equal(plain(projectAnswer(answers, unversioned(aggregate(read)), new Map())), writtenWhole(read), 'a read: the bytes written whole')
  t.equal(answers.partHits, 3, 'from the children a change kept')
  t.equal(answers.count, before + 1, 'the read keeps its project')
})

t.test('a read project is kept compressed, and written again from its pieces byte for byte', async (t) => {
  const answers = new AnswerCache(1 << 20)
  const read = full({ description: JSON.stringify({ type: 'doc', content: Array.from({ length: 40 }, (_, i) => ({ type: 'paragraph', content: [{ type: 'text', text: `Paragraph ${i} of a long description.` }] })) }) })
  const whole = writtenWhole(read)
  t.equal(plain(projectAnswer(answers, unversioned(aggregate(read)), new Map())), whole, 'written: its bytes')
  t.equal(answers.count, 1)
  t.ok(answers.bytes < Buffer.byteLength(whole) / 3, `kept in ${answers.bytes} bytes, under a third of its ${Buffer.byteLength(whole)}`)
  const again = projectAnswer(answers, unversioned(aggregate(read)), new Map())
  t.equal(answers.hits, 1, 'asked again: from memory')
  t.ok(again.some((part) => !Buffer.isBuffer(part)), 'as its kept pieces')
  t.equal(plain(again), whole, 'the same bytes')
  // Another reader: their own fields, between the same pieces.
  const other = full({ description: read.description, is_pinned: false, my_role: null, notifications: [], level: 40 })
  t.equal(plain(projectAnswer(answers, unversioned(aggregate(other)), new Map())), writtenWhole(other), 'another reader: their fields')
  t.equal(answers.hits, 2)
})

t.test('a read keeps no children of its own; with nothing kept, a change is written whole every time', async (t) => {
  const answers = new AnswerCache(1 << 20)
  t.equal(plain(projectAnswer(answers, unversioned(aggregate(full())), new Map())), writtenWhole(full()))
  t.equal(answers.count, 1, 'only the read project')
  const renamed = full({ name: 'After the read' })
  t.equal(writeProjectAnswer(answers, changed(aggregate(renamed)), new Map()).toString(), writtenWhole(renamed))
  t.equal(answers.partHits, 0, 'the change wrote its children')

  const none = new AnswerCache(0)
  for (const name of ['One', 'Two']) {
    const r = full({ name })
    t.equal(writeProjectAnswer(none, changed(aggregate(r)), new Map()).toString(), writtenWhole(r), `${name}: written whole`)
  }
  t.equal(none.count, 0, 'ANSWER_CACHE_MB=0 keeps nothing')
  t.equal(none.partHits, 0)
})
