// A page of notifications from the rows its statement returns: no database. A page
// names the same projects and authors again and again; each item is still whole.
import t from 'tap'
import { Value } from 'typebox/value'
import type { NotificationRow } from '../../src/db/notifications.js'
import { shortId, sluggedId } from '../../src/ids.js'
import { toNotificationItems } from '../../src/presenters/notification.js'
import { NotificationItemSchema } from '../../src/schemas/notifications.js'

type Author = { id: string, full_name: string, email: string, title: string | null, avatar_url: string | null, type: 'human' }

const alice: Author = { id: '0b7a6c1e-4d5f-4a3b-9c2d-1e0f9a8b7c6d', full_name: 'Alice Émile', email: 'alice@acme.test', title: 'PM', avatar_url: null, type: 'human' as const }
const bob: Author = { id: '5f4e3d2c-1b0a-4f9e-8d7c-6b5a49382716', full_name: 'Bob', email: 'bob@acme.test', title: null, avatar_url: 'https://example.test/b.png', type: 'human' as const }
const site = { id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f0a1b2c3d', name: 'Website Redesign' }
const app = { id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', name: 'Mobile App' }

function row (n: number, project: typeof site | null, author: Author | null, readAt: string | null): NotificationRow {
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    action: 'project_description_changed',
    read: readAt !== null,
    read_at: readAt,
    inserted_at: `2026-11-2${n}T10:00:0${n}.12345${n}+00:00`,
    project,
    author
  } as unknown as NotificationRow
}

t.test('each item whole, however often its project and author come back', async (t) => {
  const rows = [row(1, site, alice, null), row(2, app, bob, '2026-11-24T12:00:00+00:00'), row(3, site, alice, null), row(4, null, null, null), row(5, site, bob, null)]
  const items = toNotificationItems(rows)
  t.equal(items.length, 5)
  for (const [i, item] of items.entries()) {
    const r = rows[i]!
    t.ok(Value.Check(NotificationItemSchema, item), `item ${i + 1} is a NotificationItem`)
    t.strictSame(item, {
      id: shortId(r.id),
      action: 'project_description_changed',
      read: r.read,
      read_at: r.read_at === null ? null : '2026-11-24T12:00:00.000Z',
      inserted_at: `2026-11-2${i + 1}T10:00:0${i + 1}.123Z`,
      project: r.project === null ? null : { id: sluggedId(r.project.id, r.project.name), name: r.project.name },
      author: r.author === null ? null : { ...r.author, id: shortId(r.author.id) }
    }, `item ${i + 1}`)
  }
  t.equal(items[0]!.project!.id, 'website-redesign-' + shortId(site.id))
  t.equal(JSON.stringify(items[2]), JSON.stringify({ ...items[0], id: items[2]!.id, inserted_at: items[2]!.inserted_at }), 'a repeated project and author written in full')
})
