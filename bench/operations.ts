// The operations the bench drives, as HTTP requests built from one target (a
// person with a write token and, for the project operations, a project they may
// edit). Only the public API is used, so the same requests drive any version of
// the server.
import { shortId } from '../src/ids.js'

export type OperationName = 'update_name' | 'update_name_if_match' | 'update_description' | 'update_description_mentions' | 'list_notifications' | 'get' | 'list_projects'

export const OPERATIONS: readonly OperationName[] = ['update_name', 'update_name_if_match', 'update_description', 'update_description_mentions', 'list_notifications', 'get', 'list_projects']

/** How the table names an operation. */
export const LABELS: Record<OperationName, string> = {
  update_name: 'update_name',
  update_name_if_match: 'update_name, If-Match',
  update_description: 'update_description',
  update_description_mentions: 'update_description (100 subscribers, 20 mentions)',
  list_notifications: 'notifications/list',
  get: 'projects/get',
  list_projects: 'projects/list (a page of 20)'
}

/**
 * The targets an operation draws from (seed.ts): the normal projects' champions;
 * the champions of the projects with a long subscription list, whose every change
 * mentions people and notifies about a hundred; or the readers, people whose inbox
 * holds a few hundred notifications and gets no new one during the run, so the
 * list they read stays the same size however many notifications the other runs add.
 */
export type TargetSet = 'normal' | 'notified' | 'readers'

export const TARGET_SETS: Record<OperationName, TargetSet> = {
  update_name: 'normal',
  update_name_if_match: 'normal',
  update_description: 'normal',
  update_description_mentions: 'notified',
  list_notifications: 'readers',
  get: 'normal',
  list_projects: 'normal'
}

/**
 * Conditional renames (If-Match with the tag of the project's last answer), so that
 * every request takes the success path: the load generator keeps each project's tag
 * from the ETag of its last answer and never sends two requests on one project at
 * once (a project is taken again only once its answer, and its new tag, are in).
 */
export const PER_CONNECTION: ReadonlySet<OperationName> = new Set(['update_name_if_match'])

/** A person of the project's company whom its new descriptions mention. */
export interface Mention {
  /** Canonical UUID. */
  id: string
  name: string
}

/**
 * A project and the champion whose write token the requests carry; for a reader,
 * the reader and the project of their newest notification.
 */
export interface Target {
  /** 1-based position within its set (normal, notified or readers). */
  n: number
  projectId: string
  /** The id clients use: base62 of the UUID. */
  publicId: string
  personId: string
  /** The clear token, for the Authorization header. */
  token: string
  /** Whom each new description mentions, in document order: none but for the notified set. */
  mentions: Mention[]
}

// A marker inside a JSON string value: replacing it keeps the text valid JSON.
export const REVISION_MARKER = '__REV__'

function paragraph (text: string): unknown {
  return { type: 'paragraph', content: [{ type: 'text', text }] }
}

/**
 * A rich-text document of a few KB, as an editor would send it. The revision
 * makes each write a real change: setting the same value again writes nothing.
 */
export const DESCRIPTION_TEMPLATE: string = JSON.stringify({
  type: 'doc',
  attrs: { revision: REVISION_MARKER },
  content: [
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Why this project exists' }] },
    paragraph('Customers reach the checkout through three different flows today, and each one asks for the same details in a different order. Support tickets about lost carts have doubled since spring, and most of them trace back to the second flow.'),
    paragraph('This project replaces the three flows with one, keeps the address book and saved cards people already rely on, and measures drop-off at every step so that we can see where people give up.'),
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Scope' }] },
    {
      type: 'bulletList',
      content: [
        'One checkout flow for web and mobile web, with the same steps and the same copy.',
        'Saved addresses and cards carried over without asking anyone to enter them again.',
        'Drop-off measured per step, with a dashboard the whole team can read.',
        'Accessibility review of every step before it ships to the first cohort.',
        'A rollback switch per cohort, owned by the on-call engineer.'
      ].map((text) => ({ type: 'listItem', content: [paragraph(text)] }))
    },
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Out of scope' }] },
    paragraph('New payment methods, the native apps and the invoice flow for business customers. Each of them has its own project, and this one must not block them: shared components land behind flags and are switched on per surface.'),
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'How we will know it worked' }] },
    paragraph('Checkout completion up by five points for returning customers and by three for new ones, measured over four weeks after the last cohort moves; support tickets about lost carts back under forty a week; no step slower than today at the 95th percentile.'),
    paragraph('We review the numbers with the support and finance leads every second Thursday, and we write down what we changed and why in the check-ins of this project, so that anyone joining later can follow the reasoning.'),
    {
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Design notes live in ' },
        { type: 'text', marks: [{ type: 'link', attrs: { href: 'https://docs.example.test/checkout/design' } }], text: 'the design document' },
        { type: 'text', text: ', the rollout plan in ' },
        { type: 'text', marks: [{ type: 'link', attrs: { href: 'https://docs.example.test/checkout/rollout' } }], text: 'the rollout plan' },
        { type: 'text', text: '.' }
      ]
    }
  ]
})

const templates = new WeakMap<readonly Mention[], string>()

/**
 * The template with a paragraph that mentions these people, as an editor's mention
 * nodes carry them: the public id and the name shown.
 */
export function descriptionTemplate (mentions: readonly Mention[]): string {
  if (mentions.length === 0) return DESCRIPTION_TEMPLATE
  // Built once per target: the load generator shares the CPUs with what it measures.
  const known = templates.get(mentions)
  if (known !== undefined) return known
  const doc = JSON.parse(DESCRIPTION_TEMPLATE) as { content: unknown[] }
  const content: unknown[] = [{ type: 'text', text: 'Please review before the next cohort: ' }]
  mentions.forEach((m, i) => {
    if (i > 0) content.push({ type: 'text', text: i === mentions.length - 1 ? ' and ' : ', ' })
    content.push({ type: 'mention', attrs: { id: shortId(m.id), label: m.name } })
  })
  content.push({ type: 'text', text: '.' })
  doc.content.push({ type: 'paragraph', content })
  const text = JSON.stringify(doc)
  templates.set(mentions, text)
  return text
}

export const NAME_PREFIX = 'Renamed project '

export function newName (revision: number): string {
  return NAME_PREFIX + String(revision)
}

export function newDescription (revision: number, mentions: readonly Mention[] = []): string {
  return descriptionTemplate(mentions).replace(REVISION_MARKER, String(revision))
}

export function randomRevision (): number {
  return 1 + Math.floor(Math.random() * 1_000_000_000)
}

export interface HttpRequest {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
}

const BASE = '/api/external/v1'

/**
 * The Accept-Encoding of every request: what Operately's CLI sends (`gzip, …`), as
 * Node.js's fetch does. A server may send pages compressed; the load generator
 * counts the bytes received and does not decompress them, as it does not decode
 * the JSON (load.ts).
 */
export const ACCEPT_ENCODING = 'gzip, deflate, br'

/** The request a client sends for this operation on this target; `etag` is the If-Match of a conditional one (the ETag header as it came). */
export function httpRequest (operation: OperationName, target: Target, revision: number, etag?: string): HttpRequest {
  const authorization = `Bearer ${target.token}`
  switch (operation) {
    case 'get':
      return { method: 'GET', path: `${BASE}/projects/get?id=${target.publicId}`, headers: { authorization, 'accept-encoding': ACCEPT_ENCODING } }
    case 'list_notifications':
      // The first page at the default size, as a client opening the inbox asks for it.
      return { method: 'GET', path: `${BASE}/notifications/list`, headers: { authorization, 'accept-encoding': ACCEPT_ENCODING } }
    case 'list_projects':
      // The first page at the default size (20 whole projects of the person's company).
      return { method: 'GET', path: `${BASE}/projects/list`, headers: { authorization, 'accept-encoding': ACCEPT_ENCODING } }
    case 'update_name_if_match':
      if (etag === undefined) throw new Error('a conditional rename needs the tag of the project\'s last answer')
      return {
        method: 'POST',
        path: `${BASE}/projects/update_name`,
        headers: { authorization, 'accept-encoding': ACCEPT_ENCODING, 'content-type': 'application/json', 'if-match': etag },
        body: JSON.stringify({ project_id: target.publicId, name: newName(revision) })
      }
    case 'update_name':
      return {
        method: 'POST',
        path: `${BASE}/projects/update_name`,
        headers: { authorization, 'accept-encoding': ACCEPT_ENCODING, 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: target.publicId, name: newName(revision) })
      }
    case 'update_description':
    case 'update_description_mentions':
      return {
        method: 'POST',
        path: `${BASE}/projects/update_description`,
        headers: { authorization, 'accept-encoding': ACCEPT_ENCODING, 'content-type': 'application/json' },
        body: JSON.stringify({ project_id: target.publicId, description: newDescription(revision, target.mentions) })
      }
  }
}
