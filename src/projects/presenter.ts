// The Project object of the API from the row projects/query.ts reads: public ids,
// timestamps as ISO text, and the rules of SPEC part 7 that are not plain columns
// (status, next_milestone, privacy, permissions, champion/reviewer, subscriber
// roles). Rules that need the clock stay in SQL, where the database's now() is the
// one the row was read against (`is_outdated`), as does a contributor's level.
import { createHash } from 'node:crypto'
import { ACCESS } from './access.js'
import type { ProjectRow } from './query.js'
import { shortId, sluggedId } from '../ids.js'
import { toPerson } from '../people/presenter.js'
import type { Notification, Project } from './schemas.js'

/** ISO 8601 in UTC with milliseconds: from a Date, or from a timestamp as PostgreSQL writes it in JSON (microseconds truncated). */
export function iso (value: Date | string): string {
  return new Date(value).toISOString()
}
export const isoOrNull = (value: Date | string | null) => value === null ? null : iso(value)


/** SPEC part 7's Notification. */
export function toNotification (n: { id: string, action: string, read: boolean, read_at: Date | string | null, inserted_at: Date | string }): Notification {
  return { id: shortId(n.id), action: n.action, read: n.read, read_at: isoOrNull(n.read_at), inserted_at: iso(n.inserted_at) }
}

type TimeframeRow = Pick<ProjectRow, `timeframe_${'start' | 'end'}_${'type' | 'value' | 'date'}`>

export function toTimeframe (r: TimeframeRow): Project['timeframe'] {
  const start = r.timeframe_start_type && r.timeframe_start_value !== null && r.timeframe_start_date !== null
    ? { date_type: r.timeframe_start_type, value: r.timeframe_start_value, date: r.timeframe_start_date }
    : null
  const end = r.timeframe_end_type && r.timeframe_end_value !== null && r.timeframe_end_date !== null
    ? { date_type: r.timeframe_end_type, value: r.timeframe_end_value, date: r.timeframe_end_date }
    : null
  return start || end ? { contextual_start_date: start, contextual_end_date: end } : null
}

/** SPEC part 6: the widest audience that has any access names the privacy. */
export function privacy (levels: { public_access: number, company_access: number, space_access: number }): Project['privacy'] {
  if (levels.public_access > 0) return 'public'
  if (levels.company_access > 0) return 'internal'
  if (levels.space_access > 0) return 'confidential'
  return 'secret'
}

type Milestone = Project['milestones'][number]

/** The pending milestone due first; an undated one only when none is dated; the first such in order. */
export function nextMilestone (milestones: Milestone[]): Milestone | null {
  return milestones.filter((m) => m.status === 'pending').reduce<Milestone | null>((best, m) =>
    best === null || (m.due_date !== null && (best.due_date === null || m.due_date < best.due_date)) ? m : best, null)
}

/**
 * SPEC part 7: a closed project's result; else paused; else outdated when a check-in
 * is overdue by more than 3 days; else the last check-in's status; else pending.
 */
export function projectStatus (row: {
  state: Project['state']
  success_status: Project['success_status']
  is_outdated: boolean
  last_check_in: { status: Project['status'] } | null
}): Project['status'] {
  if (row.state === 'closed' && row.success_status) return row.success_status
  if (row.state === 'paused') return 'paused'
  if (row.is_outdated) return 'outdated'
  return row.last_check_in?.status ?? 'pending'
}

/** SPEC part 6: what each access level allows. */
export function permissions (level: number): Project['permissions'] {
  return {
    can_view: level >= ACCESS.view,
    can_comment: level >= ACCESS.comment,
    can_edit: level >= ACCESS.edit,
    has_full_access: level >= ACCESS.full
  }
}

/** A potential subscriber's role: their responsibility on the project, else their title, else their role. */
export function subscriberRole (contributor: { role: string, responsibility: string | null, person: { title: string | null } }): string {
  return contributor.responsibility ?? contributor.person.title ?? contributor.role
}

type Row<K extends keyof ProjectRow> = NonNullable<ProjectRow[K]>

function toGoal (goal: Row<'goal'>): Project['goal'] {
  return {
    id: sluggedId(goal.id, goal.name),
    name: goal.name,
    status: goal.status,
    is_closed: goal.closed_at !== null,
    is_archived: goal.archived_at !== null,
    timeframe: toTimeframe(goal),
    inserted_at: iso(goal.inserted_at),
    updated_at: iso(goal.updated_at)
  }
}

function toCheckIn (checkIn: Row<'last_check_in'>): Project['last_check_in'] {
  return {
    id: shortId(checkIn.id),
    status: checkIn.status,
    description: checkIn.description,
    author: toPerson(checkIn.author),
    inserted_at: iso(checkIn.inserted_at),
    acknowledged_at: isoOrNull(checkIn.acknowledged_at),
    acknowledged_by: checkIn.acknowledged_by ? toPerson(checkIn.acknowledged_by) : null
  }
}

function toSubscriptionList (list: Row<'subscription_list'>): Project['subscription_list'] {
  return {
    id: shortId(list.id),
    send_to_everyone: list.send_to_everyone,
    subscriptions: list.subscriptions.map((s) => ({ id: shortId(s.id), type: s.type, canceled: s.canceled, person: toPerson(s.person) }))
  }
}

function toRetrospective (retrospective: Row<'retrospective'>): Project['retrospective'] {
  return {
    id: shortId(retrospective.id),
    content: retrospective.content,
    author: toPerson(retrospective.author),
    closed_at: isoOrNull(retrospective.closed_at),
    success_status: retrospective.success_status
  }
}

/** The people of a project: champion and reviewer, contributors, and who may subscribe. */
function people (contributors: ProjectRow['contributors']): Pick<Project, 'champion' | 'reviewer' | 'contributors' | 'potential_subscribers'> {
  // Contributors come ordered by the query: champion, reviewer, then by name.
  const champion = contributors.find((c) => c.role === 'champion')
  const reviewer = contributors.find((c) => c.role === 'reviewer')
  return {
    champion: champion ? toPerson(champion.person) : null,
    reviewer: reviewer ? toPerson(reviewer.person) : null,
    contributors: contributors.map((c) => ({
      id: shortId(c.id), role: c.role, responsibility: c.responsibility, access_level: c.access_level, person: toPerson(c.person)
    })),
    potential_subscribers: contributors.map((c) => ({
      role: subscriberRole(c), priority: c.role !== 'contributor', is_subscribed: c.is_subscribed === true, person: toPerson(c.person)
    }))
  }
}

/** The API's Project from its row, as the person it was read for sees it. */
export function toProject (row: ProjectRow): Project {
  const milestones = row.milestones.map((m) => ({
    id: shortId(m.id),
    title: m.title,
    status: m.status,
    description: m.description,
    due_date: m.due_date,
    completed_at: isoOrNull(m.completed_at),
    inserted_at: iso(m.inserted_at)
  }))
  const { champion, reviewer, contributors, potential_subscribers: potentialSubscribers } = people(row.contributors)
  return {
    id: sluggedId(row.id, row.name),
    name: row.name,
    description: row.description,
    goal_id: row.goal === null ? null : sluggedId(row.goal.id, row.goal.name),
    space_id: shortId(row.space_id),
    access_levels: { public: row.public_access, company: row.company_access, space: row.space_access },
    archived_at: isoOrNull(row.archived_at),
    closed_at: isoOrNull(row.closed_at),
    inserted_at: iso(row.inserted_at),
    updated_at: iso(row.updated_at),
    next_check_in_scheduled_at: isoOrNull(row.next_check_in_scheduled_at),
    next_update_scheduled_at: isoOrNull(row.next_update_scheduled_at),
    is_archived: row.archived_at !== null,
    is_outdated: row.is_outdated,
    is_pinned: row.is_pinned === true,
    space: { id: shortId(row.space_id), name: row.space_name },
    my_role: row.my_role ?? null,
    notifications: row.notifications.map(toNotification),
    permissions: permissions(row.level),
    privacy: privacy(row),
    state: row.state,
    status: projectStatus({ state: row.state, success_status: row.success_status, is_outdated: row.is_outdated, last_check_in: row.last_check_in }),
    success_status: row.success_status,
    tasks_kanban_state: row.tasks_kanban_state,
    timeframe: toTimeframe(row),
    champion,
    reviewer,
    contributors,
    goal: row.goal === null ? null : toGoal(row.goal),
    key_resources: row.key_resources.map((k) => ({ id: shortId(k.id), title: k.title, link: k.link, resource_type: k.resource_type })),
    last_check_in: row.last_check_in === null ? null : toCheckIn(row.last_check_in),
    milestones,
    next_milestone: nextMilestone(milestones),
    milestones_ordering_state: row.milestones_ordering_state.map(shortId),
    potential_subscribers: potentialSubscribers,
    subscription_list: row.subscription_list === null ? null : toSubscriptionList(row.subscription_list),
    retrospective: row.retrospective === null ? null : toRetrospective(row.retrospective),
    task_statuses: row.task_statuses.map((t) => ({ id: shortId(t.id), label: t.label, color: t.color, index: t.index, value: t.value, closed: t.closed }))
  }
}

/**
 * The entity tag of a project as one person sees it (RFC 9110 §8.8.3): a digest of
 * the very object answered, so two reads that answer the same project give the
 * same tag and any change of what the person sees (a rename, someone else's edit,
 * a notification, a change of access, the clock making it outdated) gives another.
 * base64url without padding (43 characters), quoted by conditional.ts.
 */
export function projectTag (project: Project): string {
  return createHash('sha256').update(JSON.stringify(project)).digest('base64url')
}
