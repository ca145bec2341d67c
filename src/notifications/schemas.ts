// notifications/*: a person's notifications (Operately's names and shapes).
import Type, { type Static } from 'typebox'
import { DIGITS, Id, Nullable, PAGE_HEADERS, Shared, Timestamp } from '../schemas/common.js'
import { NotificationSchema, PersonSchema } from '../projects/schemas.js'

const strict = { additionalProperties: false } as const

/** A page's size when none is asked for (Operately's), and the most one may hold. */
export const NOTIFICATION_PAGE = { default: 100, max: 100 } as const
/** The most ids one mark_many_as_read may name. */
export const MARK_MANY_MAX = 1000

const digits = (description: string, example: string) =>
  Type.Optional(Type.String({ pattern: DIGITS, description, examples: [example] }))

export const ListNotificationsQuerySchema = Type.Object({
  page: digits('Page number, from 1 (default 1)', '1'),
  per_page: digits(`Notifications per page, 1 to ${NOTIFICATION_PAGE.max} (default ${NOTIFICATION_PAGE.default})`, '100')
}, strict)

const ProjectRefSchema = Type.Object({ id: Id, name: Type.String() }, { ...strict, description: 'The project it is about' })

export const NotificationActivitySchema = Type.Object({
  id: Id,
  action: Type.String({ description: "Operately's action name, as the notification's `action`" }),
  inserted_at: Timestamp,
  author: Nullable(Shared(PersonSchema)),
  content: Type.Object({ project: Nullable(ProjectRefSchema) }, {
    additionalProperties: true,
    description: "The action's content in Operately's fields, with the project: `project_renamed` has `old_name` and " +
      '`new_name`; `project_description_changed` has `project_name`, `has_description` and `description` (the new one, ' +
      'JSON text, or null); other actions the fields they recorded'
  })
}, { ...strict, description: "What happened (Operately's nested activity): its action, time, author and content" })

export const NotificationItemSchema = Type.Object({
  ...NotificationSchema.properties,
  project: Nullable(ProjectRefSchema),
  author: Nullable(Shared(PersonSchema)),
  activity: Nullable(NotificationActivitySchema)
}, { ...strict, description: "A notification of the token's person, with the project and the author it is about, and its activity" })

export const NotificationListResponseSchema = Type.Object({
  notifications: Type.Array(NotificationItemSchema, { description: 'Newest first' })
}, {
  ...strict,
  headers: PAGE_HEADERS,
  description: "A page of the person's notifications, newest first",
  examples: [{
    notifications: [{
      id: '2rxDcnYyZ1a8Zm0RE2bN3K',
      action: 'project_description_changed',
      read: false,
      read_at: null,
      inserted_at: '2026-11-24T15:02:11.512Z',
      project: { id: 'website-redesign-0Y9Ntz72ysNZCCSQ5dFUZh', name: 'Website Redesign' },
      author: { id: '1S9sHJdXziGMetRhKlyYI1', full_name: 'Alice Johnson', email: 'alice@acme.test', title: 'Product Manager', avatar_url: null, type: 'human' },
      activity: {
        id: '2rxDcnYyZ1a8Zm0RE2bN3J',
        action: 'project_description_changed',
        inserted_at: '2026-11-24T15:02:11.498Z',
        author: { id: '1S9sHJdXziGMetRhKlyYI1', full_name: 'Alice Johnson', email: 'alice@acme.test', title: 'Product Manager', avatar_url: null, type: 'human' },
        content: {
          project: { id: 'website-redesign-0Y9Ntz72ysNZCCSQ5dFUZh', name: 'Website Redesign' },
          project_name: 'Website Redesign',
          has_description: true,
          description: '{"type":"doc","content":[{"type":"paragraph","content":[{"type":"text","text":"Launch by January."}]}]}'
        }
      }
    }]
  }]
})

export const UnreadCountQuerySchema = Type.Object({}, strict)

export const UnreadCountResponseSchema = Type.Object({
  unread: Type.Integer({ minimum: 0, description: 'Unread notifications of the person' })
}, { ...strict, description: "The number of the person's unread notifications", examples: [{ unread: 1 }] })

export const MarkAsReadBodySchema = Type.Object({
  id: Type.String({ description: 'A notification of the token\'s person', examples: ['2rxDcnYyZ1a8Zm0RE2bN3K'] })
}, { ...strict, examples: [{ id: '2rxDcnYyZ1a8Zm0RE2bN3K' }] })

export const MarkManyAsReadBodySchema = Type.Object({
  ids: Type.Array(Type.String(), { maxItems: MARK_MANY_MAX, description: `Notifications of the token's person, at most ${MARK_MANY_MAX}`, examples: [['2rxDcnYyZ1a8Zm0RE2bN3K']] })
}, { ...strict, examples: [{ ids: ['2rxDcnYyZ1a8Zm0RE2bN3K'] }] })

export const MarkAllAsReadBodySchema = Type.Object({}, { ...strict, examples: [{}] })

export const EmptyResponseSchema = Type.Object({}, { ...strict, description: 'Done', examples: [{}] })

export type NotificationItem = Static<typeof NotificationItemSchema>
export type NotificationActivity = Static<typeof NotificationActivitySchema>
