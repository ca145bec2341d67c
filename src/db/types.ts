// Row types of the tables in migrations/. Nullable columns are `T | null`.
import type { ColumnType, Generated, JSONColumnType } from 'kysely'

type Timestamp = ColumnType<Date, Date | string, Date | string>
type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>
type DateOnly = ColumnType<string | null, string | null, string | null>

export type AccessLevel = 0 | 10 | 40 | 70 | 100
export type DateType = 'day' | 'month' | 'quarter' | 'year'
export type ProjectState = 'active' | 'paused' | 'closed'
export type SuccessStatus = 'achieved' | 'missed'
export type CheckInStatus = 'on_track' | 'caution' | 'off_track'
export type ContributorRole = 'champion' | 'reviewer' | 'contributor'

interface TimeframeColumns {
  timeframe_start_type: DateType | null
  timeframe_start_value: string | null
  timeframe_start_date: DateOnly
  timeframe_end_type: DateType | null
  timeframe_end_value: string | null
  timeframe_end_date: DateOnly
}

export interface CompaniesTable {
  id: Generated<string>
  name: string
  /** The company-wide space (Operately's "General"), if it has one. */
  general_space_id: ColumnType<string | null, string | null | undefined, string | null>
  inserted_at: CreatedAt
}

export interface PeopleTable {
  id: Generated<string>
  company_id: string
  full_name: string
  email: string
  title: string | null
  avatar_url: string | null
  type: Generated<'human' | 'guest'>
  is_admin: Generated<boolean>
  suspended_at: NullableTimestamp
  inserted_at: CreatedAt
}

export interface SpacesTable {
  id: Generated<string>
  company_id: string
  name: string
  /** The level the space gives the members of its company (Operately's company_permissions). */
  company_access: Generated<AccessLevel>
  inserted_at: CreatedAt
}

export interface SpaceMembersTable {
  space_id: string
  person_id: string
  /** The member's own level on the space. */
  access_level: Generated<AccessLevel>
  inserted_at: CreatedAt
}

export interface GoalsTable extends TimeframeColumns {
  id: Generated<string>
  company_id: string
  space_id: string
  name: string
  status: Generated<string>
  closed_at: NullableTimestamp
  archived_at: NullableTimestamp
  inserted_at: CreatedAt
  updated_at: CreatedAt
}

export interface ProjectsTable extends TimeframeColumns {
  id: Generated<string>
  company_id: string
  space_id: string
  goal_id: string | null
  name: string
  description: string | null
  public_access: Generated<AccessLevel>
  company_access: Generated<AccessLevel>
  space_access: Generated<AccessLevel>
  state: Generated<ProjectState>
  success_status: SuccessStatus | null
  closed_at: NullableTimestamp
  archived_at: NullableTimestamp
  next_check_in_scheduled_at: NullableTimestamp
  next_update_scheduled_at: NullableTimestamp
  milestones_ordering_state: ColumnType<string[], string[] | undefined, string[]>
  tasks_kanban_state: ColumnType<Record<string, string[]>, string | undefined, string>
  inserted_at: CreatedAt
  updated_at: CreatedAt
}

export interface ProjectPinsTable {
  person_id: string
  project_id: string
  inserted_at: CreatedAt
}

export interface ProjectContributorsTable {
  id: Generated<string>
  project_id: string
  person_id: string
  role: ContributorRole
  responsibility: string | null
  access_level: AccessLevel | null
  inserted_at: CreatedAt
}

export interface ProjectMilestonesTable {
  id: Generated<string>
  project_id: string
  title: string
  status: Generated<'pending' | 'done'>
  description: string | null
  due_date: DateOnly
  completed_at: NullableTimestamp
  inserted_at: CreatedAt
}

export interface ProjectKeyResourcesTable {
  id: Generated<string>
  project_id: string
  title: string
  link: string
  resource_type: Generated<string>
  inserted_at: CreatedAt
}

export interface ProjectCheckInsTable {
  id: Generated<string>
  project_id: string
  author_id: string
  status: CheckInStatus
  description: string | null
  acknowledged_at: NullableTimestamp
  acknowledged_by_id: string | null
  inserted_at: CreatedAt
}

export interface ProjectRetrospectivesTable {
  id: Generated<string>
  project_id: string
  author_id: string
  content: string
  success_status: SuccessStatus | null
  closed_at: NullableTimestamp
  inserted_at: CreatedAt
}

export interface ProjectTaskStatusesTable {
  id: Generated<string>
  project_id: string
  label: string
  color: 'gray' | 'blue' | 'green' | 'red'
  index: number
  value: string
  closed: Generated<boolean>
}

export interface SubscriptionListsTable {
  id: Generated<string>
  project_id: string
  send_to_everyone: Generated<boolean>
  inserted_at: CreatedAt
}

export interface SubscriptionsTable {
  id: Generated<string>
  subscription_list_id: string
  person_id: string
  type: 'invited' | 'joined' | 'mentioned'
  canceled: Generated<boolean>
  inserted_at: CreatedAt
}

/** A person as a project's JSON nests them. */
export interface PersonJson {
  id: string
  full_name: string
  email: string
  title: string | null
  avatar_url: string | null
  type: 'human' | 'guest'
}

export interface ApiTokensTable {
  id: Generated<string>
  person_id: string
  name: string | null
  digest: Buffer
  read_only: Generated<boolean>
  expires_at: NullableTimestamp
  revoked_at: NullableTimestamp
  last_used_at: NullableTimestamp
  inserted_at: CreatedAt
}

export interface ActivitiesTable {
  id: Generated<string>
  company_id: string
  project_id: string | null
  author_id: string
  token_id: string | null
  action: string
  content: JSONColumnType<Record<string, unknown>>
  inserted_at: CreatedAt
}

export interface NotificationsTable {
  id: Generated<string>
  person_id: string
  project_id: string | null
  activity_id: string | null
  /** The author of the activity (activities.author_id), kept with the notification; set whenever activity_id is. */
  author_id: string | null
  action: string
  read: Generated<boolean>
  read_at: NullableTimestamp
  inserted_at: CreatedAt
}

export interface SigningKeysTable {
  name: string
  key: Buffer
  inserted_at: CreatedAt
}

export type WebhookEvent = 'project.renamed' | 'project.description_changed'
  | 'project.created' | 'project.start_date_changed' | 'project.due_date_changed' | 'project.goal_changed'
  | 'project.moved' | 'project.deleted'
  | 'project.champion_changed' | 'project.reviewer_changed'
  | 'project.contributor_added' | 'project.contributor_updated' | 'project.contributor_removed'
  | 'project.paused' | 'project.resumed' | 'project.closed'
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'canceled'

export interface WebhooksTable {
  id: Generated<string>
  company_id: string
  url: string
  events: WebhookEvent[]
  description: Generated<string>
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: NullableTimestamp
  enabled: Generated<boolean>
  disabled_reason: string | null
  disabled_at: NullableTimestamp
  created_by: string | null
  inserted_at: CreatedAt
}

export interface WebhookDeliveriesTable {
  id: Generated<string>
  webhook_id: string
  event_id: string
  event_type: WebhookEvent
  payload: JSONColumnType<Record<string, unknown>>
  status: Generated<DeliveryStatus>
  attempts: Generated<number>
  last_attempt_at: NullableTimestamp
  last_status_code: number | null
  last_error: string | null
  last_duration_ms: number | null
  next_attempt_at: NullableTimestamp
  delivered_at: NullableTimestamp
  /** The W3C traceparent of the traced request that queued it (its attempts are spans of that trace); null otherwise. */
  trace_parent: ColumnType<string | null, string | null | undefined, never>
  inserted_at: CreatedAt
}

/** The job engine's queue table (pg-boss 10, src/db/jobs.ts): the columns a job is made with. */
export interface JobsTable {
  id: Generated<string>
  name: string
  data: JSONColumnType<Record<string, unknown>>
  state: Generated<string>
  start_after: CreatedAt
  expire_in: ColumnType<unknown, string | undefined, never>
  retry_limit: Generated<number>
  retry_delay: Generated<number>
  retry_backoff: Generated<boolean>
  keep_until: CreatedAt
  policy: string | null
}

/** The job engine's queues (pg-boss 10): the policy a queue's jobs are made with. */
export interface JobQueuesTable {
  name: string
  policy: string | null
  retry_limit: number | null
  retry_delay: number | null
  retry_backoff: boolean | null
  expire_seconds: number | null
}

export interface Database {
  companies: CompaniesTable
  people: PeopleTable
  spaces: SpacesTable
  space_members: SpaceMembersTable
  goals: GoalsTable
  projects: ProjectsTable
  project_pins: ProjectPinsTable
  project_contributors: ProjectContributorsTable
  project_milestones: ProjectMilestonesTable
  project_key_resources: ProjectKeyResourcesTable
  project_check_ins: ProjectCheckInsTable
  project_retrospectives: ProjectRetrospectivesTable
  project_task_statuses: ProjectTaskStatusesTable
  subscription_lists: SubscriptionListsTable
  subscriptions: SubscriptionsTable
  api_tokens: ApiTokensTable
  activities: ActivitiesTable
  notifications: NotificationsTable
  signing_keys: SigningKeysTable
  webhooks: WebhooksTable
  webhook_deliveries: WebhookDeliveriesTable
  'pgboss.job': JobsTable
  'pgboss.queue': JobQueuesTable
}
