// The shared schemas, each added to the app once under its $id (app.ts) and
// referred to with Shared(): Fastify validates and serializes with them, and the
// OpenAPI document lists them as its components under the same names.
import type { TSchema } from 'typebox'
import { ErrorSchema, schemaId } from './schemas/common.js'
import { CompanyMemberSchema, CompanyPermissionsSchema, CompanySchema, GeneralSpaceSchema } from './companies/schemas.js'
import {
  AccessLevelsSchema, CheckInSchema, ContributorSchema, GoalSchema, KeyResourceSchema, MilestoneSchema,
  NotificationSchema, PermissionsSchema, PersonSchema, ProjectSchema, RetrospectiveSchema, SpaceSchema,
  SubscriberSchema, SubscriptionListSchema, TaskStatusSchema, TimeframeSchema
} from './projects/schemas.js'
import { DeliverySchema, WebhookSchema } from './webhooks/schemas.js'

const SHARED: TSchema[] = [
  ErrorSchema, ProjectSchema, PersonSchema, ContributorSchema, GoalSchema, SpaceSchema, KeyResourceSchema,
  CheckInSchema, MilestoneSchema, NotificationSchema, SubscriberSchema, SubscriptionListSchema,
  RetrospectiveSchema, TaskStatusSchema, TimeframeSchema, AccessLevelsSchema, PermissionsSchema, CompanySchema,
  CompanyMemberSchema, CompanyPermissionsSchema, GeneralSpaceSchema, WebhookSchema, DeliverySchema
]

/** Every shared schema by its $id; also TypeBox's context for checking a value against them (Value.Check(COMPONENTS, …)). */
export const COMPONENTS: Readonly<Record<string, TSchema>> = Object.fromEntries(SHARED.map((schema) => [schemaId(schema), schema]))
