// The Project object's rules, from rows alone: no database. Each rule of SPEC parts 6
// and 7 that is not a plain column is checked at its edges, then toProject on a row
// shaped as the aggregate returns it.
import t from '../tap.js'
import { Value } from 'typebox/value'
import type { ProjectRow } from '../../src/projects/query.js'
import { iso, nextMilestone, permissions, privacy, projectStatus, subscriberRole, toProject, toTimeframe } from '../../src/projects/presenter.js'
import { ProjectSchema } from '../../src/projects/schemas.js'
import { COMPONENTS } from '../../src/components.js'
import { shortId } from '../../src/ids.js'

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

function row (overrides: Partial<Record<keyof ProjectRow, unknown>> = {}): ProjectRow {
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
  } as ProjectRow
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

t.test('iso: PostgreSQL\'s JSON timestamps written as Date#toISOString writes them', async (t) => {
  t.equal(iso('2026-11-24T10:00:00.123456+00:00'), '2026-11-24T10:00:00.123Z', 'extra digits truncated')
  t.equal(iso('2026-11-24T10:00:00.12+00:00'), '2026-11-24T10:00:00.120Z')
  t.equal(iso('2026-11-24T10:00:00+00:00'), '2026-11-24T10:00:00.000Z', 'no fraction')
  t.equal(iso('2026-11-24T11:00:00.5+01:00'), '2026-11-24T10:00:00.500Z', 'another offset')
  t.equal(iso(new Date('2026-11-24T10:00:00Z')), '2026-11-24T10:00:00.000Z')
})
