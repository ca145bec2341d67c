// The Project object of the external API and the requests that return it.
import Type, { type Static } from 'typebox'
import { DateOnly, DAY_PATTERN, DIGITS, Id, Nullable, operatelyFlags, PAGE_HEADERS, Shared, Timestamp } from '../schemas/common.js'
import { notFoundExample } from '../http/responses.js'

const strict = { additionalProperties: false } as const

/** The limits of a project's name and description (projects/rules.ts applies them). */
export const NAME_MAX_LENGTH = 255
export const DESCRIPTION_MAX_BYTES = 512 * 1024
export const DESCRIPTION_MAX_DEPTH = 64
const DESCRIPTION_LIMITS = `at most ${DESCRIPTION_MAX_BYTES / 1024} KiB and ${DESCRIPTION_MAX_DEPTH} levels deep`

export const PersonSchema = Type.Object({
  id: Id,
  full_name: Type.String(),
  email: Type.String(),
  title: Nullable(Type.String()),
  avatar_url: Nullable(Type.String()),
  type: Type.Enum(['human', 'guest'])
}, { ...strict, $id: 'Person', description: 'A person of the company' })

const ContextualDate = Type.Object({
  date_type: Type.Enum(['day', 'month', 'quarter', 'year']),
  value: Type.String(),
  date: DateOnly
}, strict)

export const TimeframeSchema = Type.Object({
  contextual_start_date: Nullable(ContextualDate),
  contextual_end_date: Nullable(ContextualDate)
}, { ...strict, $id: 'Timeframe', description: 'Start and end, each as precise as it was planned (a day, a month, a quarter or a year)' })

export const ContributorSchema = Type.Object({
  id: Id,
  role: Type.Enum(['champion', 'reviewer', 'contributor']),
  responsibility: Nullable(Type.String()),
  access_level: Nullable(Type.Integer({ description: 'Access level of the binding: 10 view, 40 comment, 70 edit, 100 full' })),
  person: Shared(PersonSchema)
}, { ...strict, $id: 'Contributor', description: 'A person working on the project and their role' })

export const GoalSchema = Type.Object({
  id: Id,
  name: Type.String(),
  status: Type.String(),
  is_closed: Type.Boolean(),
  is_archived: Type.Boolean(),
  timeframe: Nullable(Shared(TimeframeSchema)),
  inserted_at: Timestamp,
  updated_at: Timestamp
}, { ...strict, $id: 'Goal' })

export const SpaceSchema = Type.Object({ id: Id, name: Type.String() }, { ...strict, $id: 'Space' })

export const KeyResourceSchema = Type.Object({
  id: Id,
  title: Type.String(),
  link: Type.String(),
  resource_type: Type.String()
}, { ...strict, $id: 'KeyResource' })

export const CheckInSchema = Type.Object({
  id: Id,
  status: Type.Enum(['on_track', 'caution', 'off_track']),
  description: Nullable(Type.String({ description: 'JSON text' })),
  author: Shared(PersonSchema),
  inserted_at: Timestamp,
  acknowledged_at: Nullable(Timestamp),
  acknowledged_by: Nullable(Shared(PersonSchema))
}, { ...strict, $id: 'CheckIn', description: "A check-in: the champion's report on how the project is going" })

export const MilestoneSchema = Type.Object({
  id: Id,
  title: Type.String(),
  status: Type.Enum(['pending', 'done']),
  description: Nullable(Type.String({ description: 'JSON text' })),
  due_date: Nullable(DateOnly),
  completed_at: Nullable(Timestamp),
  inserted_at: Timestamp
}, { ...strict, $id: 'Milestone' })

export const NotificationSchema = Type.Object({
  id: Id,
  action: Type.String(),
  read: Type.Boolean(),
  read_at: Nullable(Timestamp),
  inserted_at: Timestamp
}, { ...strict, $id: 'Notification' })

export const SubscriberSchema = Type.Object({
  role: Type.String({ description: "The person's role on the project or title" }),
  priority: Type.Boolean(),
  is_subscribed: Type.Boolean(),
  person: Shared(PersonSchema)
}, { ...strict, $id: 'Subscriber' })

export const SubscriptionListSchema = Type.Object({
  id: Id,
  send_to_everyone: Type.Boolean(),
  subscriptions: Type.Array(Type.Object({
    id: Id,
    type: Type.Enum(['invited', 'joined', 'mentioned']),
    canceled: Type.Boolean(),
    person: Shared(PersonSchema)
  }, strict))
}, { ...strict, $id: 'SubscriptionList' })

export const RetrospectiveSchema = Type.Object({
  id: Id,
  content: Type.String({ description: 'JSON text' }),
  author: Shared(PersonSchema),
  closed_at: Nullable(Timestamp),
  success_status: Nullable(Type.Enum(['achieved', 'missed']))
}, { ...strict, $id: 'Retrospective' })

export const TaskStatusSchema = Type.Object({
  id: Id,
  label: Type.String(),
  color: Type.Enum(['gray', 'blue', 'green', 'red']),
  index: Type.Integer(),
  value: Type.String(),
  closed: Type.Boolean()
}, { ...strict, $id: 'TaskStatus' })

export const AccessLevelsSchema = Type.Object({
  public: Type.Integer(),
  company: Type.Integer(),
  space: Type.Integer()
}, { ...strict, $id: 'AccessLevels', description: 'Access granted to everyone (public), to the company and to the members of the space: 0 none, 10 view, 40 comment, 70 edit, 100 full' })

export const PermissionsSchema = Type.Object({
  can_view: Type.Boolean(),
  can_comment: Type.Boolean(),
  can_edit: Type.Boolean(),
  has_full_access: Type.Boolean()
}, { ...strict, $id: 'Permissions', description: "What the token's person may do on the project" })

export const ProjectSchema = Type.Object({
  id: Id,
  name: Type.String({ description: `Trimmed, 1 to ${NAME_MAX_LENGTH} characters` }),
  description: Nullable(Type.String({ description: 'The JSON text exactly as last set (usually a rich-text document)' })),
  goal_id: Nullable(Id),
  space_id: Id,
  access_levels: Shared(AccessLevelsSchema),
  archived_at: Nullable(Timestamp),
  closed_at: Nullable(Timestamp),
  inserted_at: Timestamp,
  updated_at: Timestamp,
  next_check_in_scheduled_at: Nullable(Timestamp),
  next_update_scheduled_at: Nullable(Timestamp),
  is_archived: Type.Boolean(),
  is_outdated: Type.Boolean(),
  is_pinned: Type.Boolean(),
  champion: Nullable(Shared(PersonSchema)),
  reviewer: Nullable(Shared(PersonSchema)),
  contributors: Type.Array(Shared(ContributorSchema)),
  goal: Nullable(Shared(GoalSchema)),
  space: Shared(SpaceSchema),
  key_resources: Type.Array(Shared(KeyResourceSchema)),
  last_check_in: Nullable(Shared(CheckInSchema)),
  milestones: Type.Array(Shared(MilestoneSchema), { description: 'In the order of milestones_ordering_state' }),
  next_milestone: Nullable(Shared(MilestoneSchema)),
  milestones_ordering_state: Type.Array(Id),
  my_role: Nullable(Type.Enum(['champion', 'reviewer', 'contributor'], { description: "The token's person's role on the project" })),
  notifications: Type.Array(Shared(NotificationSchema), { description: "The token's person's unread notifications about the project" }),
  permissions: Shared(PermissionsSchema),
  potential_subscribers: Type.Array(Shared(SubscriberSchema)),
  subscription_list: Nullable(Shared(SubscriptionListSchema)),
  privacy: Type.Enum(['public', 'internal', 'confidential', 'secret'], { description: 'Derived from access_levels' }),
  retrospective: Nullable(Shared(RetrospectiveSchema)),
  state: Type.Enum(['active', 'paused', 'closed']),
  status: Type.Enum(['on_track', 'caution', 'off_track', 'paused', 'outdated', 'pending', 'achieved', 'missed']),
  success_status: Nullable(Type.Enum(['achieved', 'missed'], { description: 'Set once the project is closed' })),
  task_statuses: Type.Array(Shared(TaskStatusSchema)),
  tasks_kanban_state: Type.String({ description: 'JSON text of { "<status value>": [task ids] }' }),
  timeframe: Nullable(Shared(TimeframeSchema))
}, { ...strict, $id: 'Project', description: 'A project as the token\'s person sees it: person-specific fields (my_role, permissions, notifications, is_pinned) are theirs' })

export type Project = Static<typeof ProjectSchema>
export type Person = Static<typeof PersonSchema>
export type Notification = Static<typeof NotificationSchema>

// The examples of the OpenAPI document: the demo's Website Redesign as its champion
// sees it after the two example requests below.
export const EXAMPLE_ID = 'website-redesign-0Y9Ntz72ysNZCCSQ5dFUZh'
const EXAMPLE_DESCRIPTION = JSON.stringify({
  type: 'doc',
  content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Launch the new site by January.' }] }]
})
const alice: Person = { id: '1S9sHJdXziGMetRhKlyYI1', full_name: 'Alice Johnson', email: 'alice@acme.test', title: 'Product Manager', avatar_url: null, type: 'human' }
const erin: Person = { id: '6NZUsJ8JHMr98VzwbMu1jM', full_name: 'Erin Walsh', email: 'erin@acme.test', title: 'Chief Operating Officer', avatar_url: null, type: 'human' }
const contentMigration = {
  id: '0o7QS8MAMWsJO5g6keZCKW', title: 'Content migration', status: 'pending', description: null,
  due_date: '2026-12-06', completed_at: null, inserted_at: '2026-09-23T01:57:00.245Z'
} as const

const EXAMPLE_PROJECT: Project = {
  id: 'website-redesign-2-0-0Y9Ntz72ysNZCCSQ5dFUZh',
  name: 'Website Redesign 2.0',
  description: EXAMPLE_DESCRIPTION,
  goal_id: 'double-self-serve-sign-ups-5VnDFx4iX4pR7SHguTsb3h',
  space_id: '4n4mP8tqsmWdH3FuGYjJlP',
  access_levels: { public: 0, company: 40, space: 70 },
  archived_at: null,
  closed_at: null,
  inserted_at: '2026-09-23T01:57:00.245Z',
  updated_at: '2026-11-22T01:57:03.646Z',
  next_check_in_scheduled_at: '2026-11-29T01:57:00.245Z',
  next_update_scheduled_at: null,
  is_archived: false,
  is_outdated: false,
  is_pinned: true,
  champion: alice,
  reviewer: erin,
  contributors: [
    { id: '5YGEXPcufFJnfaWmsKG0If', role: 'champion', responsibility: 'Owns the plan and the launch date', access_level: 100, person: alice },
    { id: '3YC6eOuRHlDnQ2NrNK0B0o', role: 'reviewer', responsibility: 'Reviews check-ins and unblocks budget', access_level: 100, person: erin }
  ],
  goal: {
    id: 'double-self-serve-sign-ups-5VnDFx4iX4pR7SHguTsb3h',
    name: 'Double self-serve sign-ups',
    status: 'on_track',
    is_closed: false,
    is_archived: false,
    timeframe: {
      contextual_start_date: { date_type: 'quarter', value: 'Q4 2026', date: '2026-10-01' },
      contextual_end_date: { date_type: 'quarter', value: 'Q4 2026', date: '2026-12-31' }
    },
    inserted_at: '2026-09-23T01:57:00.245Z',
    updated_at: '2026-09-23T01:57:00.245Z'
  },
  space: { id: '4n4mP8tqsmWdH3FuGYjJlP', name: 'Product' },
  key_resources: [
    { id: '459qm535zu84l4MI7LDuh0', title: 'Designs', link: 'https://www.figma.com/file/acme-website-redesign', resource_type: 'figma' }
  ],
  last_check_in: {
    id: '6xQytSgySkJ0k8j8IKjMOq',
    status: 'on_track',
    description: JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Designs are signed off.' }] }] }),
    author: alice,
    inserted_at: '2026-11-20T01:57:00.245Z',
    acknowledged_at: '2026-11-21T01:57:00.245Z',
    acknowledged_by: erin
  },
  milestones: [contentMigration],
  next_milestone: contentMigration,
  milestones_ordering_state: [contentMigration.id],
  my_role: 'champion',
  notifications: [],
  permissions: { can_view: true, can_comment: true, can_edit: true, has_full_access: true },
  potential_subscribers: [{ role: 'Owns the plan and the launch date', priority: true, is_subscribed: true, person: alice }],
  subscription_list: {
    id: '6RhECB4YkVUwvgK3z95sHO',
    send_to_everyone: false,
    subscriptions: [{ id: '5NVJuVki0Dv4oGiaEWAwW4', type: 'joined', canceled: false, person: alice }]
  },
  privacy: 'internal',
  retrospective: null,
  state: 'active',
  status: 'on_track',
  success_status: null,
  task_statuses: [
    { id: '6lcSTWDfMsOKWwOmEcwgAR', label: 'Not started', color: 'gray', index: 0, value: 'pending', closed: false },
    { id: '34abQhOV21kCZ0QvtTwaMS', label: 'Done', color: 'green', index: 1, value: 'done', closed: true }
  ],
  tasks_kanban_state: '{"pending":[],"done":[]}',
  timeframe: {
    contextual_start_date: { date_type: 'day', value: 'Sep 23, 2026', date: '2026-09-23' },
    contextual_end_date: { date_type: 'quarter', value: 'Q1 2027', date: '2027-03-31' }
  }
}

/** The ETag header of an answer that carries one project (projects/conditional.ts). */
export const ETAG_HEADER = {
  ETag: {
    type: 'string',
    description: 'A strong entity tag of the project as this person reads it: equal for two reads that answer the ' +
      'same bytes, different after any change of the answer. Send it back in If-None-Match (projects/get) or If-Match ' +
      '(the mutations).',
    examples: ['"4n0mQ2b0dCqFZk5mTTyPp1vJdQ9Gq6h3QcXcS8xE2aU"']
  }
}

export const ProjectResponseSchema = Type.Object({ project: Shared(ProjectSchema) }, {
  ...strict,
  headers: ETAG_HEADER,
  description: "The whole project, as the token's person sees it",
  examples: [{ project: EXAMPLE_PROJECT }]
})

const ProjectIdField = Type.String({ description: 'Project id (or canonical UUID)', examples: [EXAMPLE_ID] })

export const UpdateNameBodySchema = Type.Object({
  project_id: ProjectIdField,
  name: Type.String({ description: `New name; trimmed, 1 to ${NAME_MAX_LENGTH} characters, no control characters` })
}, { ...strict, examples: [{ project_id: EXAMPLE_ID, name: EXAMPLE_PROJECT.name }] })

export const UpdateDescriptionBodySchema = Type.Object({
  project_id: ProjectIdField,
  description: Type.String({ description: `JSON text (any JSON value but null), ${DESCRIPTION_LIMITS}` })
}, { ...strict, examples: [{ project_id: EXAMPLE_ID, description: EXAMPLE_DESCRIPTION }] })

const Flag = (description: string) => Type.Optional(Type.Enum(['true', 'false'], { description }))

// Operately's clients may ask for parts of the project with its include_* flags;
// the whole project is always returned, so they are accepted and change nothing,
// but include_markdown. Any other parameter is refused.
export const GetProjectQuerySchema = Type.Object({
  id: ProjectIdField,
  include_markdown: Flag('`true` adds `markdown`: the whole project rendered as Markdown, for people and language models'),
  ...operatelyFlags('include_contributors', 'include_goal', 'include_last_check_in', 'include_milestones', 'include_permissions',
    'include_champion', 'include_reviewer', 'include_space', 'include_resource_hub', 'include_contributors_access_levels',
    'include_access_levels', 'include_privacy', 'include_retrospective', 'include_potential_subscribers',
    'include_unread_notifications', 'include_subscription_list')
}, strict)

export const ProjectWithMarkdownResponseSchema = Type.Object({
  project: Shared(ProjectSchema),
  markdown: Type.Optional(Type.String({ description: 'With include_markdown=true: the project as Markdown (title, status, space, goal, timeframe, people, description, milestones, last check-in, retrospective)' }))
}, {
  ...strict,
  headers: ETAG_HEADER,
  description: "The whole project, as the token's person sees it, and with include_markdown=true its Markdown rendering",
  examples: [{ project: EXAMPLE_PROJECT }]
})

/** A page's size when none is asked for, and the most one may hold. */
export const LIST_LIMIT = { default: 20, max: 100 } as const

export const ListProjectsQuerySchema = Type.Object({
  only_my_projects: Flag('`true`: only projects the person is the champion or a contributor of'),
  only_reviewed_by_me: Flag('`true`: only projects the person reviews (wins over only_my_projects)'),
  space_id: Type.Optional(Type.String({ description: 'Only the projects of this space' })),
  goal_id: Type.Optional(Type.String({ description: 'Only the projects of this goal' })),
  include_archived: Flag('`true`: archived projects too (left out by default)'),
  limit: Type.Optional(Type.String({ pattern: DIGITS, description: `Projects per page, 1 to ${LIST_LIMIT.max} (default ${LIST_LIMIT.default})`, examples: ['20'] })),
  cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page, with the same filters' })),
  ...operatelyFlags('include_space', 'include_milestones', 'include_contributors', 'include_last_check_in', 'include_champion',
    'include_reviewer', 'include_goal', 'include_privacy', 'include_retrospective')
}, strict)

export const ProjectListResponseSchema = Type.Object({
  projects: Type.Array(Shared(ProjectSchema), { description: 'By name, then id; each as the person sees it' }),
  next_cursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null on the last page' }))
}, {
  ...strict,
  headers: PAGE_HEADERS,
  description: 'A page of the projects the person can see',
  examples: [{ projects: [EXAMPLE_PROJECT], next_cursor: null }]
})

export const GetProjectHeadersSchema = Type.Object({
  'if-none-match': Type.Optional(Type.String({
    description: 'The ETag of an earlier answer (or several, comma-separated, or `*`): when one names the project as it ' +
      'is now, the answer is 304 without a body. Compared weakly: `W/"…"` matches too. A value that is not `*` or a ' +
      'list of entity tags is 400.',
    examples: ['"4n0mQ2b0dCqFZk5mTTyPp1vJdQ9Gq6h3QcXcS8xE2aU"']
  }))
})

export const UpdateProjectHeadersSchema = Type.Object({
  'if-match': Type.Optional(Type.String({
    description: 'Change the project only if it is still the version this ETag names (one of several, comma-separated), ' +
      'else 412; `*` for any version. Compared strongly: a weak tag (`W/"…"`) never matches. A value that is not `*` ' +
      'or a list of entity tags is 400.',
    examples: ['"4n0mQ2b0dCqFZk5mTTyPp1vJdQ9Gq6h3QcXcS8xE2aU"']
  }))
})

/** projects/get's 304: the ETag and nothing else; no body is sent (the document's `null` is "no content"). */
export const NotModifiedSchema = Type.Unsafe<undefined>({
  type: 'null',
  description: 'Not modified: If-None-Match names the project as the person reads it now. No body; the ETag is the current one.',
  headers: ETAG_HEADER
})

const PROJECT_NOT_FOUND = 'project not found'
export const NO_PROJECT = notFoundExample(PROJECT_NOT_FOUND, 'The project is unknown, its id cannot be decoded, or the person ' +
  'cannot see it: one body for all, so existence never leaks.')
export const NO_EDITABLE_PROJECT = notFoundExample(PROJECT_NOT_FOUND, 'The project is unknown, its id cannot be decoded, it ' +
  'is archived, or the person cannot see it: one body for all, so existence never leaks.')

/** Operately's access levels, as its `access_options_int` allows them. */
export const ACCESS_LEVELS = [0, 10, 40, 70, 100] as const

export const ContextualDateInputSchema = Type.Object({
  date: Type.String({ pattern: DAY_PATTERN, description: 'The calendar date it stands for (YYYY-MM-DD); for a month, quarter or year, one of its days (usually its first or last)', examples: ['2026-06-30'] }),
  date_type: Type.Enum(['day', 'month', 'quarter', 'year'], { description: 'How precise the date is' }),
  value: Type.String({
    description: 'The label a person reads: any text for a day (Operately writes `Jun 30, 2026`); for the others exactly ' +
      'what the date gives: `Jun 2026` (month), `Q2 2026` (quarter), `2026` (year)',
    examples: ['Q2 2026']
  })
}, { ...strict, description: "Operately's contextual date: a date as precisely as it was planned", examples: [{ date: '2026-06-30', date_type: 'quarter', value: 'Q2 2026' }] })

export type ContextualDateInput = Static<typeof ContextualDateInputSchema>

export const ProjectIdBodyField = ProjectIdField

export const SuccessProjectResponseSchema = Type.Object({
  success: Type.Boolean({ description: 'Always true (Operately\'s answer)' }),
  project: Shared(ProjectSchema)
}, {
  ...strict,
  headers: ETAG_HEADER,
  description: "Operately's `success`, and the whole project as the token's person sees it after the change",
  examples: [{ success: true, project: EXAMPLE_PROJECT }]
})

export const NO_EDITABLE_SPACE = notFoundExample('space not found', 'The space is unknown, its id cannot be decoded, it is ' +
  'of another company, or the person cannot see it: one body for all.')

// The lifecycle of a project (issue 64): who leads it, who works on it, and its
// pauses, resumption and closing.

/** A person's id: public (base62) or a canonical UUID. */
const PersonIdField = (description: string) => Type.String({ description, examples: [alice.id] })

/** The most people one pause, resume or close may name to notify. */
export const SUBSCRIBERS_MAX = 1000

const EXAMPLE_MESSAGE = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Waiting for the budget.' }] }] })

/** What pause, resume and close take beside their own text: who is told. */
const Announcement = {
  send_notifications_to_everyone: Type.Optional(Nullable(Type.Boolean({ description: 'true: the project\'s contributors are notified too' }))),
  subscriber_ids: Type.Optional(Nullable(Type.Array(Type.String(), {
    maxItems: SUBSCRIBERS_MAX,
    description: `People of the project's company to notify (their ids), at most ${SUBSCRIBERS_MAX}; those who cannot view the project are left out`
  })))
}

const EXAMPLE_RETROSPECTIVE = {
  id: '2bT0mYqgkS9a4cP0lQ6Zr1', content: EXAMPLE_MESSAGE, author: alice, closed_at: '2026-11-22T01:57:03.646Z', success_status: 'achieved'
} as const
const CLOSED_PROJECT: Project = {
  ...EXAMPLE_PROJECT, state: 'closed', status: 'achieved', success_status: 'achieved', closed_at: EXAMPLE_RETROSPECTIVE.closed_at, retrospective: EXAMPLE_RETROSPECTIVE
}

const RichText = (description: string) => Type.String({ description: `${description}: JSON text (a rich-text document), ${DESCRIPTION_LIMITS}` })

export const PauseBodySchema = Type.Object({
  project_id: ProjectIdField,
  message: RichText('Why the project is paused'),
  ...Announcement
}, { ...strict, examples: [{ project_id: EXAMPLE_ID, message: EXAMPLE_MESSAGE, subscriber_ids: [erin.id] }] })

export const ResumeBodySchema = Type.Object({
  project_id: ProjectIdField,
  message: RichText('Why the project goes on'),
  ...Announcement
}, { ...strict, examples: [{ project_id: EXAMPLE_ID, message: EXAMPLE_MESSAGE }] })

export const CloseBodySchema = Type.Object({
  project_id: ProjectIdField,
  retrospective: RichText('What went well, what did not, what was learnt'),
  success_status: Type.Enum(['achieved', 'missed'], { description: 'Whether the project achieved what it set out to' }),
  ...Announcement
}, { ...strict, examples: [{ project_id: EXAMPLE_ID, retrospective: EXAMPLE_MESSAGE, success_status: 'achieved', send_notifications_to_everyone: true }] })

export const CloseResponseSchema = Type.Object({
  retrospective: Type.Object({
    ...RetrospectiveSchema.properties,
    champion: Nullable(Shared(PersonSchema)),
    reviewer: Nullable(Shared(PersonSchema))
  }, { ...strict, description: 'The retrospective just written, with the project\'s champion and reviewer (Operately\'s shape)' }),
  project: Shared(ProjectSchema)
}, {
  ...strict,
  headers: ETAG_HEADER,
  description: "The retrospective, and the whole project as the token's person sees it now",
  examples: [{ retrospective: { ...EXAMPLE_RETROSPECTIVE, champion: alice, reviewer: erin }, project: CLOSED_PROJECT }]
})

export const UpdateChampionBodySchema = Type.Object({
  project_id: ProjectIdField,
  champion_id: Nullable(PersonIdField('The new champion: a person of the project\'s company, not suspended; null: no champion'))
}, { ...strict, examples: [{ project_id: EXAMPLE_ID, champion_id: alice.id }] })

export const UpdateReviewerBodySchema = Type.Object({
  project_id: ProjectIdField,
  reviewer_id: Nullable(PersonIdField('The new reviewer: a person of the project\'s company, not suspended; null: no reviewer'))
}, { ...strict, examples: [{ project_id: EXAMPLE_ID, reviewer_id: erin.id }] })

export const SuccessResponseSchema = Type.Object({
  success: Type.Boolean({ description: 'Always true (Operately\'s answer)' }),
  project: Shared(ProjectSchema)
}, { ...strict, headers: ETAG_HEADER, description: "Done, and the whole project as the token's person sees it now", examples: [{ success: true, project: EXAMPLE_PROJECT }] })

/** Operately's access options a contributor may be given, and their levels. */
export const CONTRIBUTOR_PERMISSIONS = { view_access: 10, comment_access: 40, edit_access: 70, full_access: 100 } as const
const Permissions = Type.Enum(Object.keys(CONTRIBUTOR_PERMISSIONS) as Array<keyof typeof CONTRIBUTOR_PERMISSIONS>, {
  description: 'Access the contributor gets: view_access 10, comment_access 40, edit_access 70, full_access 100; never more than the caller has'
})
const Role = Type.Enum(['champion', 'reviewer', 'contributor'], { description: 'The contributor\'s role (default contributor)' })
const Responsibility = Type.String({ description: 'What the contributor is responsible for; at most 255 characters' })
const ContribIdField = Type.String({ description: 'A contributor\'s id (contributors[].id of the project)', examples: ['5YGEXPcufFJnfaWmsKG0If'] })

export const CreateContributorBodySchema = Type.Object({
  project_id: ProjectIdField,
  person_id: PersonIdField('A person of the project\'s company, not suspended, not yet on the project'),
  responsibility: Responsibility,
  permissions: Permissions,
  role: Type.Optional(Nullable(Role))
}, { ...strict, examples: [{ project_id: EXAMPLE_ID, person_id: erin.id, responsibility: 'Runs the launch', permissions: 'edit_access', role: 'contributor' }] })

export const UpdateContributorBodySchema = Type.Object({
  contrib_id: ContribIdField,
  person_id: Type.Optional(Nullable(PersonIdField('Hand the contributor\'s role to this person (a champion or reviewer is replaced)'))),
  responsibility: Type.Optional(Nullable(Responsibility)),
  permissions: Type.Optional(Nullable(Permissions)),
  role: Type.Optional(Nullable(Role))
}, { ...strict, examples: [{ contrib_id: '5YGEXPcufFJnfaWmsKG0If', responsibility: 'Runs the launch', permissions: 'comment_access' }] })

export const DeleteContributorBodySchema = Type.Object({
  contrib_id: ContribIdField
}, { ...strict, examples: [{ contrib_id: '5YGEXPcufFJnfaWmsKG0If' }] })

export const ContributorResponseSchema = Type.Object({
  contributor: Shared(ContributorSchema),
  project: Shared(ProjectSchema)
}, {
  ...strict,
  headers: ETAG_HEADER,
  description: "The contributor (as it was, when removed), and the whole project as the token's person sees it now",
  examples: [{ contributor: EXAMPLE_PROJECT.contributors[1], project: EXAMPLE_PROJECT }]
})
