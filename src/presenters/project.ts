// The Project object of the API from the rows the database returns: public ids,
// timestamps as ISO text, and the rules of SPEC part 7 that are not plain columns
// (status, next_milestone, privacy, permissions, champion/reviewer, subscriber
// roles). Rules that need the clock stay in SQL, where the database's now() is the
// one the row was read against: `is_outdated` is computed by the aggregate
// (db/project-aggregate.ts, isOutdated). So does a contributor's level, by the rule
// access levels count it with (db/access.ts, contributorLevel).
import { ACCESS } from '../db/access.js'
import type { ListedProject } from '../db/project-list.js'
import type { ChangedProject } from '../db/project-mutations.js'
import { childrenVersionOf, cutChildren, cutProject, parseProject, readerPart, type KeptColumn, type PersonRow, type ProjectText, type ProjectView, type ReaderPart, type VersionedProject } from '../db/project-aggregate.js'
import { answerKey, heldAt, heldVersion, keep, type AnswerCache, type AnswerPart, type RecentVersions } from '../plugins/answers.js'
import type { Deflated } from '../gzip.js'
import { AFTER_READER_FIELDS, PROJECT_RUNS, READER_FIELDS, writeProject, writeReaderFields, type ChildrenField } from '../schemas/serializer.js'
import { shortId, sluggedId } from '../ids.js'
import type { Notification, Person, Project } from '../schemas/projects.js'

// How PostgreSQL writes a UTC timestamp in JSON: `2026-11-24T10:00:00.123456+00:00`,
// the fraction (up to 6 digits) left out when zero. Its shape, character by
// character: d a digit, anything else itself.
const POSTGRES_UTC = 'dddd-dd-ddTdd:dd:dd'
const UTC_SUFFIX = '+00:00'
const DIGIT = 'd'.charCodeAt(0)
const DOT = '.'.charCodeAt(0)
const ZERO = '0'.charCodeAt(0)
const NINE = '9'.charCodeAt(0)

const isDigit = (code: number) => code >= ZERO && code <= NINE

/** The length of the fraction (0 to 6 digits) of a timestamp in PostgreSQL's UTC form, or -1 when it is not in that form. */
function postgresUtcFraction (text: string): number {
  const length = text.length
  // 19 characters, an optional `.` and 1 to 6 digits, then `+00:00`.
  if (length < 25 || length > 32 || length === 26 || !text.endsWith(UTC_SUFFIX)) return -1
  for (let i = 0; i < POSTGRES_UTC.length; i++) {
    const shape = POSTGRES_UTC.charCodeAt(i)
    const code = text.charCodeAt(i)
    if (shape === DIGIT ? !isDigit(code) : code !== shape) return -1
  }
  if (length === 25) return 0
  if (text.charCodeAt(19) !== DOT) return -1
  for (let i = 20; i < length - UTC_SUFFIX.length; i++) {
    if (!isDigit(text.charCodeAt(i))) return -1
  }
  return length - 26
}

/**
 * ISO 8601 in UTC with milliseconds, as Date#toISOString writes it (extra digits
 * truncated). Answers hold hundreds of timestamps that arrive in PostgreSQL's form,
 * which is rewritten as text; anything else goes through Date.
 */
export function iso (value: Date | string): string {
  if (typeof value === 'string') {
    const fraction = postgresUtcFraction(value)
    if (fraction >= 3) return value.slice(0, 23) + 'Z'
    if (fraction > 0) return value.slice(0, 20 + fraction) + (fraction === 1 ? '00Z' : '0Z')
    if (fraction === 0) return value.slice(0, 19) + '.000Z'
  }
  return new Date(value).toISOString()
}
export const isoOrNull = (value: Date | string | null) => value === null ? null : iso(value)

export function toPerson (p: PersonRow): Person {
  return { id: shortId(p.id), full_name: p.full_name, email: p.email, title: p.title, avatar_url: p.avatar_url, type: p.type }
}

/** SPEC part 7's Notification. */
export function toNotification (n: { id: string, action: string, read: boolean, read_at: Date | string | null, inserted_at: Date | string }): Notification {
  return { id: shortId(n.id), action: n.action, read: n.read, read_at: isoOrNull(n.read_at), inserted_at: iso(n.inserted_at) }
}

type TimeframeRow = Pick<ProjectView, `timeframe_${'start' | 'end'}_${'type' | 'value' | 'date'}`>

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

/**
 * The people an answer has already written, by UUID: a project names its champion
 * up to four times (champion, contributor, potential subscriber, subscriber) and a
 * page of projects the same company's people again and again. One object each,
 * their id encoded once.
 */
export type PeopleSeen = Map<string, Person>

export function personIn (seen: PeopleSeen, p: PersonRow): Person {
  let person = seen.get(p.id)
  if (person === undefined) {
    person = toPerson(p)
    seen.set(p.id, person)
  }
  return person
}

/** A row of a project's aggregate without its children's columns: its own, and its reader's. */
export type OwnRow = Omit<ProjectView, KeptColumn>

/** The fields of a Project that its children make (CHILDREN_FIELDS). */
export type ChildrenPart = Pick<Project, ChildrenField>

/** The other fields of a Project: its own columns', and its reader's. */
export type OwnPart = Omit<Project, ChildrenField>

/**
 * The fields of the API's Project that the aggregate's children make, from those
 * columns alone (so the same text makes the same fields); `seen` is shared by the
 * projects of one answer.
 */
export function childrenPart (row: Pick<ProjectView, KeptColumn>, seen: PeopleSeen = new Map()): ChildrenPart {
  const person = (p: PersonRow) => personIn(seen, p)
  const milestones = row.milestones.map((m) => ({
    id: shortId(m.id),
    title: m.title,
    status: m.status,
    description: m.description,
    due_date: m.due_date,
    completed_at: isoOrNull(m.completed_at),
    inserted_at: iso(m.inserted_at)
  }))
  const lastCheckIn = row.last_check_in
  // Contributors come ordered by the aggregate: champion, reviewer, then by name.
  const contributors = row.contributors
  const champion = contributors.find((c) => c.role === 'champion')
  const reviewer = contributors.find((c) => c.role === 'reviewer')

  return {
    champion: champion ? person(champion.person) : null,
    reviewer: reviewer ? person(reviewer.person) : null,
    contributors: contributors.map((c) => ({
      id: shortId(c.id),
      role: c.role,
      responsibility: c.responsibility,
      access_level: c.access_level,
      person: person(c.person)
    })),
    goal: row.goal
      ? {
          id: sluggedId(row.goal.id, row.goal.name),
          name: row.goal.name,
          status: row.goal.status,
          is_closed: row.goal.closed_at !== null,
          is_archived: row.goal.archived_at !== null,
          timeframe: toTimeframe(row.goal),
          inserted_at: iso(row.goal.inserted_at),
          updated_at: iso(row.goal.updated_at)
        }
      : null,
    key_resources: row.key_resources.map((k) => ({ id: shortId(k.id), title: k.title, link: k.link, resource_type: k.resource_type })),
    last_check_in: lastCheckIn
      ? {
          id: shortId(lastCheckIn.id),
          status: lastCheckIn.status,
          description: lastCheckIn.description,
          author: person(lastCheckIn.author),
          inserted_at: iso(lastCheckIn.inserted_at),
          acknowledged_at: isoOrNull(lastCheckIn.acknowledged_at),
          acknowledged_by: lastCheckIn.acknowledged_by ? person(lastCheckIn.acknowledged_by) : null
        }
      : null,
    milestones,
    next_milestone: nextMilestone(milestones),
    milestones_ordering_state: row.milestones_ordering_state.map(shortId),
    potential_subscribers: contributors.map((c) => ({
      role: subscriberRole(c),
      priority: c.role !== 'contributor',
      is_subscribed: c.is_subscribed === true,
      person: person(c.person)
    })),
    subscription_list: row.subscription_list
      ? {
          id: shortId(row.subscription_list.id),
          send_to_everyone: row.subscription_list.send_to_everyone,
          subscriptions: row.subscription_list.subscriptions.map((s) => ({
            id: shortId(s.id), type: s.type, canceled: s.canceled, person: person(s.person)
          }))
        }
      : null,
    retrospective: row.retrospective
      ? {
          id: shortId(row.retrospective.id),
          content: row.retrospective.content,
          author: person(row.retrospective.author),
          closed_at: isoOrNull(row.retrospective.closed_at),
          success_status: row.retrospective.success_status
        }
      : null,
    task_statuses: row.task_statuses.map((t) => ({
      id: shortId(t.id), label: t.label, color: t.color, index: t.index, value: t.value, closed: t.closed
    }))
  }
}

/** What of a project's children its other fields show: the goal's id (goal_id), the last check-in's status (status). */
export interface ChildrenFacts {
  goalId: string | null
  checkInStatus: Project['status'] | null
}

export const childrenFacts = (children: ChildrenPart): ChildrenFacts =>
  ({ goalId: children.goal?.id ?? null, checkInStatus: children.last_check_in?.status ?? null })

/** The other fields of the API's Project: from the project's own columns, its reader's, and what its children tell of themselves. */
export function ownPart (row: OwnRow, facts: ChildrenFacts): OwnPart {
  const isOutdated = row.is_outdated === true
  return {
    id: sluggedId(row.id, row.name),
    name: row.name,
    description: row.description,
    goal_id: facts.goalId,
    space_id: shortId(row.space_id),
    access_levels: { public: row.public_access, company: row.company_access, space: row.space_access },
    archived_at: isoOrNull(row.archived_at),
    closed_at: isoOrNull(row.closed_at),
    inserted_at: iso(row.inserted_at),
    updated_at: iso(row.updated_at),
    next_check_in_scheduled_at: isoOrNull(row.next_check_in_scheduled_at),
    next_update_scheduled_at: isoOrNull(row.next_update_scheduled_at),
    is_archived: row.archived_at !== null,
    is_outdated: isOutdated,
    is_pinned: row.is_pinned === true,
    space: { id: shortId(row.space_id), name: row.space_name },
    my_role: row.my_role ?? null,
    notifications: row.notifications.map(toNotification),
    permissions: permissions(row.level),
    privacy: privacy(row),
    state: row.state,
    status: projectStatus({
      state: row.state,
      success_status: row.success_status,
      is_outdated: isOutdated,
      last_check_in: facts.checkInStatus === null ? null : { status: facts.checkInStatus }
    }),
    success_status: row.success_status,
    tasks_kanban_state: row.tasks_kanban_state,
    timeframe: toTimeframe(row)
  }
}

/**
 * The API's Project from an aggregate row and the person's access level; `seen`
 * is shared by the projects of one answer.
 */
export function toProject (row: ProjectView, seen: PeopleSeen = new Map()): Project {
  const children = childrenPart(row, seen)
  return { ...ownPart(row, childrenFacts(children)), ...children }
}

// projects/get's answer as its schema writes it (`{"project":…}`, no spaces).
const ANSWER_OPEN = '{"project":'
const ANSWER_CLOSE = '}'

/**
 * A project's children's fields as writeProject writes them (PROJECT_RUNS' runs
 * of them, in order), kept by the text of the children they are made from: a
 * change of a project's name or description, or a read of it after one, writes
 * only the rest. The same text makes the same fields (childrenPart), so these
 * bytes are those writeProject would write.
 */
export class KeptChildren {
  private constructor (
    private readonly runs: readonly Buffer[],
    readonly facts: ChildrenFacts,
    readonly byteLength: number
  ) {}

  static of (children: ChildrenPart): KeptChildren {
    const written = CHILDREN_RUNS.map((run) => run.write(children))
    // One buffer of their own, each run a view of it: a small buffer from Node's
    // shared pool would hold on to a whole slab of it for as long as it is kept.
    const text = written.join('')
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text))
    bytes.write(text)
    let at = 0
    const runs = written.map((run) => bytes.subarray(at, at += Buffer.byteLength(run)))
    return new KeptChildren(runs, childrenFacts(children), bytes.length)
  }

  /** The project written, `{…}`, with its other fields. */
  project (own: OwnPart, open = '', close = ''): Buffer {
    const parts: Buffer[] = []
    let text = open + '{'
    let next = 0
    PROJECT_RUNS.forEach((run, i) => {
      if (i > 0) text += ','
      if (!run.children) {
        text += run.write(own)
        return
      }
      parts.push(Buffer.from(text), this.runs[next++]!)
      text = ''
    })
    parts.push(Buffer.from(text + '}' + close))
    return Buffer.concat(parts)
  }
}

const CHILDREN_RUNS = PROJECT_RUNS.filter((run) => run.children)

const childrenKey = (text: string) => answerKey('children', text)

/** A project as its schema writes it, between `open` and `close`, all of it written now. */
function wholeProject (read: ProjectText, seen?: PeopleSeen, open = '', close = ''): Buffer {
  return Buffer.from(open + writeProject(toProject(parseProject(read), seen)) + close)
}

/**
 * A project as its schema writes it, between `open` and `close`, its children's
 * fields from those kept for their text when they are (KeptChildren). A change
 * makes them recent, or writes and keeps them. A read only takes them when they
 * are there, else writes the whole project: the whole project it keeps holds them,
 * and kept or made recent by reads they would push out the whole projects that
 * reads take. `seen` is shared by the projects of one answer.
 */
function writtenProject (answers: AnswerCache, read: ProjectText, options: { change: boolean, seen?: PeopleSeen, open?: string, close?: string, childrenVersion?: string | null }): Buffer {
  const { change, seen, open, close, childrenVersion } = options
  // With nothing kept (ANSWER_CACHE_MB=0), no digest.
  const cut = answers.maxBytes === 0 ? null : cutChildren(read)
  if (cut === null) return wholeProject(read, seen, open, close)
  // Under their version when the statement told it, which names their text as the digest would.
  const key = childrenVersion == null ? childrenKey(cut.children) : childrenVersionKey(childrenVersion)
  const kept = answers.part<KeptChildren>(key, change)
  if (kept !== undefined) return kept.project(ownPart(cut.rest(), kept.facts), open, close)
  if (!change) return wholeProject(read, seen, open, close)
  const row = parseProject(read)
  const written = KeptChildren.of(childrenPart(row, seen))
  answers.set(key, written)
  return written.project(ownPart(row, written.facts), open, close)
}

/**
 * A changed project's answer as the mutations write it, `{"project":…}`: its
 * children's fields from those kept when the server has written them for the same
 * children, else written and kept for the next change or read of the project,
 * which most often leaves its children as they are. The whole answer is not kept:
 * it is read again only if nothing changes the project meanwhile, and kept it would
 * push out answers that are read again.
 */
export function writeProjectAnswer (answers: AnswerCache, read: ChangedProject, held: ReadonlyMap<string, KeptChildren>): Buffer {
  if (read.childrenKept) {
    const kept = heldVersion(held, read.childrenVersion, 'a changed project\'s children')
    // Made recent, as a change's children are.
    answers.part(childrenVersionKey(read.childrenVersion!), true)
    return kept.project(ownPart({ ...JSON.parse(read.aggregate) as Omit<OwnRow, 'level'>, level: read.level }, kept.facts), ANSWER_OPEN, ANSWER_CLOSE)
  }
  return writtenProject(answers, read, { change: true, open: ANSWER_OPEN, close: ANSWER_CLOSE, childrenVersion: read.childrenVersion })
}

/** Where a project's children written at a version (db/project-aggregate.ts, childrenVersion) are kept. */
const childrenVersionKey = (version: string) => `children ${version}`

/**
 * The children of a project this server holds written, at the version its recent
 * changes showed (plugins/answers.ts, RecentVersions, the project's id the scope):
 * what a change may tell the database it need not send. Held here for the request,
 * whatever the cache drops meanwhile.
 */
export function heldChildren (answers: AnswerCache, recent: RecentVersions, projectId: string): Map<string, KeptChildren> {
  return heldAt<KeptChildren>(answers, recent, projectId, childrenVersionKey)
}

// Where a written project holds its reader's own fields: is_pinned's value, and
// READER_FIELDS' (my_role to permissions), up to the next field's key. A key
// written with a quote before it is a key, never the inside of a string, and none
// of these is the key of a nested object.
const PINNED = Buffer.from(',"is_pinned":')
const FIRST_READER_FIELD = Buffer.from(`,"${READER_FIELDS[0]}":`)
const NEXT_FIELD = Buffer.from(`,"${AFTER_READER_FIELDS}":`)
const TRUE = Buffer.from('true')
const FALSE = Buffer.from('false')

/**
 * A project as the schema writes it for one reader, kept for all of them, compressed
 * (plugins/answers.ts): the reader's own fields are written anew and put in their
 * places between its pieces.
 */
export class KeptProject {
  /** The bytes before is_pinned's value, between it and READER_FIELDS', and after them, each compressed (keep). */
  private readonly head: Deflated
  private readonly middle: Deflated
  private readonly tail: Deflated

  private constructor (bytes: Buffer, pinnedAt: number, pinnedEnd: number, ownAt: number, ownEnd: number) {
    this.head = keep(bytes.subarray(0, pinnedAt))
    this.middle = keep(bytes.subarray(pinnedEnd, ownAt))
    this.tail = keep(bytes.subarray(ownEnd))
    this.byteLength = this.head.byteLength + this.middle.byteLength + this.tail.byteLength
  }

  readonly byteLength: number

  /** A written project's places, or undefined when it does not have them as expected. */
  static of (bytes: Buffer): KeptProject | undefined {
    const pinned = bytes.indexOf(PINNED)
    if (pinned < 0) return undefined
    const pinnedAt = pinned + PINNED.length
    const pinnedEnd = pinnedAt + (bytes[pinnedAt] === TRUE[0] ? TRUE.length : FALSE.length)
    const own = bytes.indexOf(FIRST_READER_FIELD, pinnedEnd)
    const ownEnd = bytes.indexOf(NEXT_FIELD, own)
    if (own < 0 || ownEnd < 0) return undefined
    return new KeptProject(bytes, pinnedAt, pinnedEnd, own + FIRST_READER_FIELD.length, ownEnd)
  }

  /** The project as written for a reader: its pieces, with their bytes between them. */
  for (reader: ReaderPart): AnswerPart[] {
    return [this.head, reader.is_pinned === true ? TRUE : FALSE, this.middle, readerFields(reader), this.tail]
  }
}

// writeReaderFields writes an object of READER_FIELDS: its values are within.
const READER_FIELDS_OPEN = `{"${READER_FIELDS[0]}":`

/** READER_FIELDS' values for a reader, as writeProject writes them between my_role's key and the next field's. */
function readerFields (reader: ReaderPart): Buffer {
  const written = writeReaderFields({
    my_role: reader.my_role ?? null,
    notifications: reader.notifications.map(toNotification),
    permissions: permissions(reader.level)
  })
  return Buffer.from(written.slice(READER_FIELDS_OPEN.length, -1))
}

/**
 * A read project as its schema writes it, in parts: from the pieces kept for the
 * part of its text that every reader shares, with the reader's own fields, else
 * written now and kept (plugins/answers.ts): under `keptUnder` when given (its
 * version's key), else under the digest of that text; its children taken by
 * `childrenVersion` when given. `seen` is shared by the projects of one answer.
 */
function projectBytes (answers: AnswerCache, read: ProjectText, { seen, keptUnder, childrenVersion }: { seen?: PeopleSeen, keptUnder?: string, childrenVersion?: string | null } = {}): AnswerPart[] {
  const cut = cutProject(read)
  const key = cut === null ? undefined : keptUnder ?? answerKey('project', cut.shared)
  const kept = key === undefined ? undefined : answers.get<KeptProject>(key)
  if (kept !== undefined) return kept.for(cut!.reader())
  // Its children's fields are taken from those a change kept, when there: the whole
  // project kept below holds them, so they are not kept (or made recent) again.
  const bytes = writtenProject(answers, read, { change: false, seen, childrenVersion })
  // A project too large to keep (answers.mayKeep) is written for this request alone.
  const keeping = key === undefined || !answers.mayKeep(bytes.length) ? undefined : KeptProject.of(bytes)
  if (keeping === undefined) return [bytes]
  answers.set(key!, keeping)
  // The same bytes, as the pieces just compressed: a page sent gzip-compressed sends them as they are.
  return keeping.for(cut!.reader())
}

const ANSWER_OPEN_BYTES = Buffer.from(ANSWER_OPEN)
const ANSWER_CLOSE_BYTES = Buffer.from(ANSWER_CLOSE)

/**
 * A read project's answer (projects/get): `{"project":…}`, from what is kept when it
 * can be. A project the database sent as its reader's part alone is written from
 * `held` (heldProjects); every other is kept under its version.
 */
export function projectAnswer (answers: AnswerCache, read: VersionedProject, held: ReadonlyMap<string, KeptProject>): AnswerPart[] {
  return [ANSWER_OPEN_BYTES, ...versionedProjectBytes(answers, read, held), ANSWER_CLOSE_BYTES]
}

// projects/list's answer as its schema writes it (`{"projects":[…],"next_cursor":…}`).
const PAGE_OPEN = Buffer.from('{"projects":[')
const COMMA = Buffer.from(',')

/** Where a project written at a version (db/project-aggregate.ts, sharedVersion) is kept, instead of under its text's digest. */
const versionKey = (version: string) => `project ${version}`

/**
 * The projects this server holds written, at the versions that recent answers of
 * `scope` showed (plugins/answers.ts, RecentVersions): what a request for a page,
 * or for a project, may tell the database it need not send (db/project-list.ts and
 * db/project-aggregate.ts, `known`). Held here for the request, whatever the cache
 * drops meanwhile.
 */
export function heldProjects (answers: AnswerCache, recent: RecentVersions, scope: string): Map<string, KeptProject> {
  return heldAt<KeptProject>(answers, recent, scope, versionKey)
}

/**
 * A page of projects/list, in parts (plugins/answers.ts sends them as they are):
 * each project as projects/get writes it (kept or not), its people shared across
 * the page, and the cursor of the next page. A project the database sent as its
 * reader's part alone is written from `held`; every other is kept under its
 * version too, for the next request for the page.
 */
export function projectPageAnswer (answers: AnswerCache, page: readonly ListedProject[], nextCursor: string | null, held: ReadonlyMap<string, KeptProject>): AnswerPart[] {
  const seen: PeopleSeen = new Map()
  const parts: AnswerPart[] = [PAGE_OPEN]
  page.forEach((read, i) => {
    if (i > 0) parts.push(COMMA)
    parts.push(...versionedProjectBytes(answers, read, held, seen))
  })
  parts.push(Buffer.from(`],"next_cursor":${JSON.stringify(nextCursor)}}`))
  return parts
}

/**
 * A read project as its schema writes it, in parts: from `held` when the database
 * sent its reader's part alone, else as projectBytes writes it, kept under its
 * version for the next request that may tell the database it holds it.
 */
function versionedProjectBytes (answers: AnswerCache, read: VersionedProject, held: ReadonlyMap<string, KeptProject>, seen?: PeopleSeen): AnswerPart[] {
  if (read.kept) {
    const kept = heldVersion(held, read.version, 'a project\'s shared part')
    // Counted as a hit, and made recent, like any answer written from memory.
    answers.get(versionKey(read.version!))
    return kept.for(readerPart(read))
  }
  // Kept under its version, which names the shared text as its digest would, so that
  // a page and a read share one entry whether the database sent the project whole
  // or not; under the digest when the statement could not tell the version.
  return projectBytes(answers, read, { seen, keptUnder: read.version === null ? undefined : versionKey(read.version), childrenVersion: childrenVersionOf(read.version) })
}
