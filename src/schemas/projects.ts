// The Project object of the external API and the requests that return it.
import Type, { type Static } from 'typebox'
import { DateOnly, Id, Nullable, Timestamp } from './common.js'

const strict = { additionalProperties: false } as const

export const PersonSchema = Type.Object({
  id: Id,
  full_name: Type.String(),
  email: Type.String(),
  title: Nullable(Type.String()),
  avatar_url: Nullable(Type.String()),
  type: Type.Enum(['human', 'guest'])
}, strict)

const ContextualDate = Type.Object({
  date_type: Type.Enum(['day', 'month', 'quarter', 'year']),
  value: Type.String(),
  date: DateOnly
}, strict)

export const TimeframeSchema = Type.Object({
  contextual_start_date: Nullable(ContextualDate),
  contextual_end_date: Nullable(ContextualDate)
}, strict)

export const ContributorSchema = Type.Object({
  id: Id,
  role: Type.Enum(['champion', 'reviewer', 'contributor']),
  responsibility: Nullable(Type.String()),
  access_level: Nullable(Type.Integer()),
  person: PersonSchema
}, strict)

export const GoalSchema = Type.Object({
  id: Id,
  name: Type.String(),
  status: Type.String(),
  is_closed: Type.Boolean(),
  is_archived: Type.Boolean(),
  timeframe: Nullable(TimeframeSchema),
  inserted_at: Timestamp,
  updated_at: Timestamp
}, strict)

export const SpaceSchema = Type.Object({ id: Id, name: Type.String() }, strict)

export const KeyResourceSchema = Type.Object({
  id: Id,
  title: Type.String(),
  link: Type.String(),
  resource_type: Type.String()
}, strict)

export const CheckInSchema = Type.Object({
  id: Id,
  status: Type.Enum(['on_track', 'caution', 'off_track']),
  description: Nullable(Type.String({ description: 'JSON text' })),
  author: PersonSchema,
  inserted_at: Timestamp,
  acknowledged_at: Nullable(Timestamp),
  acknowledged_by: Nullable(PersonSchema)
}, strict)

export const MilestoneSchema = Type.Object({
  id: Id,
  title: Type.String(),
  status: Type.Enum(['pending', 'done']),
  description: Nullable(Type.String({ description: 'JSON text' })),
  due_date: Nullable(DateOnly),
  completed_at: Nullable(Timestamp),
  inserted_at: Timestamp
}, strict)

export const NotificationSchema = Type.Object({
  id: Id,
  action: Type.String(),
  read: Type.Boolean(),
  read_at: Nullable(Timestamp),
  inserted_at: Timestamp
}, strict)

export const SubscriberSchema = Type.Object({
  role: Type.String({ description: "The person's role on the project or title" }),
  priority: Type.Boolean(),
  is_subscribed: Type.Boolean(),
  person: PersonSchema
}, strict)

export const SubscriptionListSchema = Type.Object({
  id: Id,
  send_to_everyone: Type.Boolean(),
  subscriptions: Type.Array(Type.Object({
    id: Id,
    type: Type.Enum(['invited', 'joined', 'mentioned']),
    canceled: Type.Boolean(),
    person: PersonSchema
  }, strict))
}, strict)

export const RetrospectiveSchema = Type.Object({
  id: Id,
  content: Type.String({ description: 'JSON text' }),
  author: PersonSchema,
  closed_at: Nullable(Timestamp),
  success_status: Nullable(Type.Enum(['achieved', 'missed']))
}, strict)

export const TaskStatusSchema = Type.Object({
  id: Id,
  label: Type.String(),
  color: Type.Enum(['gray', 'blue', 'green', 'red']),
  index: Type.Integer(),
  value: Type.String(),
  closed: Type.Boolean()
}, strict)

export const AccessLevelsSchema = Type.Object({
  public: Type.Integer(),
  company: Type.Integer(),
  space: Type.Integer()
}, strict)

export const PermissionsSchema = Type.Object({
  can_view: Type.Boolean(),
  can_comment: Type.Boolean(),
  can_edit: Type.Boolean(),
  has_full_access: Type.Boolean()
}, strict)

export const ProjectSchema = Type.Object({
  id: Id,
  name: Type.String(),
  description: Nullable(Type.String({ description: 'The JSON text exactly as last set' })),
  goal_id: Nullable(Id),
  space_id: Id,
  access_levels: AccessLevelsSchema,
  archived_at: Nullable(Timestamp),
  closed_at: Nullable(Timestamp),
  inserted_at: Timestamp,
  updated_at: Timestamp,
  next_check_in_scheduled_at: Nullable(Timestamp),
  next_update_scheduled_at: Nullable(Timestamp),
  is_archived: Type.Boolean(),
  is_outdated: Type.Boolean(),
  is_pinned: Type.Boolean(),
  champion: Nullable(PersonSchema),
  reviewer: Nullable(PersonSchema),
  contributors: Type.Array(ContributorSchema),
  goal: Nullable(GoalSchema),
  space: SpaceSchema,
  key_resources: Type.Array(KeyResourceSchema),
  last_check_in: Nullable(CheckInSchema),
  milestones: Type.Array(MilestoneSchema),
  next_milestone: Nullable(MilestoneSchema),
  milestones_ordering_state: Type.Array(Id),
  my_role: Nullable(Type.Enum(['champion', 'reviewer', 'contributor'])),
  notifications: Type.Array(NotificationSchema),
  permissions: PermissionsSchema,
  potential_subscribers: Type.Array(SubscriberSchema),
  subscription_list: Nullable(SubscriptionListSchema),
  privacy: Type.Enum(['public', 'internal', 'confidential', 'secret']),
  retrospective: Nullable(RetrospectiveSchema),
  state: Type.Enum(['active', 'paused', 'closed']),
  status: Type.Enum(['on_track', 'caution', 'off_track', 'paused', 'outdated', 'pending', 'achieved', 'missed']),
  success_status: Nullable(Type.Enum(['achieved', 'missed'])),
  task_statuses: Type.Array(TaskStatusSchema),
  tasks_kanban_state: Type.String({ description: 'JSON text of { "<status value>": [task ids] }' }),
  timeframe: Nullable(TimeframeSchema)
}, strict)

export type Project = Static<typeof ProjectSchema>
export type Person = Static<typeof PersonSchema>

export const ProjectResponseSchema = Type.Object({ project: ProjectSchema }, strict)

const ProjectIdField = Type.String({ description: 'Project id (or canonical UUID)', examples: ['website-redesign-4Ck0aqTnqYgPo0FVqTbLYS'] })

export const UpdateNameBodySchema = Type.Object({
  project_id: ProjectIdField,
  name: Type.String({ description: 'New name; trimmed, 1 to 255 characters, no control characters' })
}, strict)

export const UpdateDescriptionBodySchema = Type.Object({
  project_id: ProjectIdField,
  description: Type.String({ description: 'JSON text (any JSON value but null), at most 512 KiB and 64 levels deep' })
}, strict)

// Operately's clients may ask for parts of the project with include_* flags; the
// whole project is always returned, so the flags are accepted and change nothing.
// Any other parameter is refused.
export const GetProjectQuerySchema = Type.Object({ id: ProjectIdField }, {
  ...strict,
  patternProperties: {
    '^include_[a-z0-9_]+$': Type.Enum(['true', 'false'], { description: 'Accepted for compatibility; ignored' })
  }
})
