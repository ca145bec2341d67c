// The demo dataset of the operating guide: two companies whose people exercise every
// access rule (who edits, who only sees, who sees nothing). Rows carry fixed ids, so
// loading twice duplicates nothing and a project is found again after a rename; tokens
// are issued afresh on every call because their secrets are never stored.
import { sql } from 'kysely'
import type { Db } from '../db/index.js'
import type { DateType } from '../db/types.js'
import { createToken } from '../auth/tokens.js'

export interface DemoResult {
  /** True when this call inserted the dataset, false when it was there already. */
  created: boolean
  /** Demo project name (as first loaded) → the project's row id and current name. */
  projects: Record<string, { id: string, name: string }>
  /** Demo person's e-mail → a fresh write token and a fresh read-only token. */
  tokens: Record<string, { write: string, read_only: string }>
}

const ID = {
  acme: '7d51514a-78c5-4847-9d6a-b2a4613f7bcf',
  globex: '2913059b-425e-42e5-be06-d8d4bb0d6add',
  alice: '2fc7a40b-fdca-41ec-a482-e5a9d44329b5',
  bob: '751fe6c2-0326-46c6-9a34-d77e7172fb50',
  carol: '50da1532-83a8-46e1-98b2-12451793f610',
  erin: 'd1a225c8-e982-4a72-a875-7f87ca203c00',
  dave: '497587a7-b4e3-4658-80d5-4c0d0fd369c5',
  product: '9d6f90ab-075c-460b-91ad-f81f097191ff',
  launch: '2afd0a78-1b84-4139-9a21-d91fb8a06092',
  marketing: 'a5e26a5d-c23e-4ff6-a1d6-4d5ef923a831',
  goal: 'b522242f-d93e-4408-bc3c-8cd194a7d399',
  websiteRedesign: '1219373d-c0be-4f8a-98db-002e3e8705f5',
  internalTools: '96052f6b-4078-4b7c-a143-ae623549e0b4',
  globexLaunch: 'f4fdcc48-82dc-4989-a690-164598015989',
  contributors: [
    'b670fa4f-6caa-45c5-8224-aaaed4d8d085', '74b13c92-0892-43c8-84e1-c4c56fec2b7e',
    '7a860140-ed54-4d6f-9873-23c956ae0436', 'd891cff5-298b-4153-8ff2-c3e69a69a678',
    'cfe7aaa4-e305-4b93-93c6-a6123b47455b'
  ],
  milestones: [
    'a6152581-e752-45fc-b24f-134dcd0a6ded', '8e39a2a3-1c0b-40b2-beb9-4b3ed769e034',
    '1a8f9a0a-bbca-416e-89cc-2ea8cbf0b350', 'b71f326f-86fe-4b77-9a2e-6138564494e8'
  ],
  keyResources: [
    '86294fbd-83b3-48e0-8676-2cfbb26d0dd2', 'a9648fb1-7c14-4080-b5da-ea2cf72041b5',
    '8a4e8803-59e1-44c6-bbf1-050f788d0d03'
  ],
  checkIn: 'e4a386ab-bcd9-455e-8adf-4372ea58cc74',
  activity: '760b6121-dddc-41dd-b3cc-e860c19f7355',
  notification: '20fa9569-8fff-4e53-b503-5371e86cab38',
  taskStatuses: [
    'de60a2c6-4329-4d96-a858-d24bbf3db7ff', '4f3afaac-efea-4048-96fe-69b067e6c2c4',
    '6500d422-7315-4aa7-8fb0-83c42d766860', '283b4872-f3c7-46cc-be24-f6671e65c7bd'
  ],
  subscriptionList: 'd3d1bb7f-656d-4a89-90d4-6f6c95971996',
  subscriptions: [
    'b0bda722-6b5a-4781-a128-240a3e8f9b9c', '3e0a1e96-956c-400d-9b06-59549c3e560f',
    'be0f911f-525e-4f44-86cc-92871cd42f73', '703e835e-2258-405d-9186-a69b5e9f32b7'
  ]
} as const

const COMPANIES = [
  { id: ID.acme, name: 'Acme Corp' },
  { id: ID.globex, name: 'Globex' }
]

// Keyed by the names the dataset is loaded with; the result keeps these keys after a rename.
const PROJECTS: Record<string, string> = {
  'Website Redesign': ID.websiteRedesign,
  'Internal Tools': ID.internalTools,
  'Globex Launch': ID.globexLaunch
}

const PEOPLE = [
  { id: ID.alice, company_id: ID.acme, full_name: 'Alice Johnson', email: 'alice@acme.test', title: 'Product Manager', is_admin: false },
  { id: ID.bob, company_id: ID.acme, full_name: 'Bob Smith', email: 'bob@acme.test', title: 'Account Executive', is_admin: false },
  { id: ID.carol, company_id: ID.acme, full_name: 'Carol Martinez', email: 'carol@acme.test', title: 'Front-end Engineer', is_admin: false },
  { id: ID.erin, company_id: ID.acme, full_name: 'Erin Walsh', email: 'erin@acme.test', title: 'Chief Operating Officer', is_admin: true },
  { id: ID.dave, company_id: ID.globex, full_name: 'Dave Patel', email: 'dave@globex.test', title: 'Launch Manager', is_admin: false }
]

const DAY_MS = 86_400_000
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** A rich-text document of paragraphs, as the editor stores it: JSON text. */
function doc (...paragraphs: string[]): string {
  return JSON.stringify({
    type: 'doc',
    content: paragraphs.map((text) => ({ type: 'paragraph', content: [{ type: 'text', text }] }))
  })
}

function isoDate (d: Date): string {
  return d.toISOString().slice(0, 10)
}

// Operately's contextual dates: a type, the label a person would say ("Q4 2026",
// "Oct 1, 2026") and the calendar date it stands for.
interface ContextualDate { type: DateType, value: string, date: string }

function dayOf (d: Date): ContextualDate {
  return { type: 'day', value: `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`, date: isoDate(d) }
}

/** The quarter holding `d`, dated by its first or its last day. */
function quarterOf (d: Date, edge: 'start' | 'end'): ContextualDate {
  const q = Math.floor(d.getUTCMonth() / 3)
  const year = d.getUTCFullYear()
  const date = edge === 'start' ? new Date(Date.UTC(year, q * 3, 1)) : new Date(Date.UTC(year, q * 3 + 3, 0))
  return { type: 'quarter', value: `Q${q + 1} ${year}`, date: isoDate(date) }
}

function timeframe (start: ContextualDate, end: ContextualDate) {
  return {
    timeframe_start_type: start.type,
    timeframe_start_value: start.value,
    timeframe_start_date: start.date,
    timeframe_end_type: end.type,
    timeframe_end_value: end.value,
    timeframe_end_date: end.date
  }
}

/** True when the database holds no company at all: a first start. */
export async function isEmpty (db: Db): Promise<boolean> {
  const row = await db.selectFrom('companies').select('id').limit(1).executeTakeFirst()
  return row === undefined
}

/**
 * Loads the demo dataset unless one of its companies exists already, then issues a
 * write and a read-only token for every demo person. One transaction: a failure
 * leaves neither half-loaded data nor orphan tokens.
 */
export async function loadDemo (db: Db): Promise<DemoResult> {
  return await db.transaction().execute(async (trx) => {
    // Two concurrent seeds on one server would otherwise both see an empty database.
    await sql`select pg_advisory_xact_lock(hashtext('projects-api demo dataset'))`.execute(trx)

    const existing = await trx.selectFrom('companies').select('id')
      .where((eb) => eb.or([
        eb('id', 'in', COMPANIES.map((c) => c.id)),
        eb('name', 'in', COMPANIES.map((c) => c.name))
      ]))
      .executeTakeFirst()
    const created = existing === undefined
    if (created) await insertDataset(trx, new Date())

    const rows = await trx.selectFrom('projects').select(['id', 'name'])
      .where('id', 'in', Object.values(PROJECTS))
      .execute()
    const currentName = new Map(rows.map((r) => [r.id, r.name]))
    // Found by id, named as now; a demo project that is gone is left out, not invented.
    const projects: DemoResult['projects'] = {}
    for (const [demoName, id] of Object.entries(PROJECTS)) {
      const name = currentName.get(id)
      if (name !== undefined) projects[demoName] = { id, name }
    }

    const tokens: DemoResult['tokens'] = {}
    for (const { email } of PEOPLE) {
      const write = await createToken(trx, { email, name: 'demo write' })
      const readOnly = await createToken(trx, { email, name: 'demo read-only', readOnly: true })
      tokens[email] = { write: write.token, read_only: readOnly.token }
    }
    return { created, projects, tokens }
  })
}

/** Days before and after the moment the dataset is loaded. */
interface Clock { now: Date, ago: (days: number) => Date, ahead: (days: number) => Date }

async function insertDataset (db: Db, now: Date): Promise<void> {
  const clock: Clock = {
    now,
    ago: (days: number) => new Date(now.getTime() - days * DAY_MS),
    ahead: (days: number) => new Date(now.getTime() + days * DAY_MS)
  }
  await insertOrganisation(db, clock)
  await insertProjects(db, clock)
  await insertProjectChildren(db, clock)
}

/** Companies, people, spaces and the goal. */
async function insertOrganisation (db: Db, { now, ago }: Clock): Promise<void> {
  await db.insertInto('companies').values(COMPANIES.map((c) => ({ ...c, inserted_at: ago(90) }))).execute()
  await db.insertInto('people').values(PEOPLE.map((p) => ({ ...p, inserted_at: ago(90) }))).execute()
  await db.insertInto('spaces').values([
    { id: ID.product, company_id: ID.acme, name: 'Product', inserted_at: ago(90) },
    { id: ID.launch, company_id: ID.globex, name: 'Launch', inserted_at: ago(90) },
    // A second space of Acme, with no project and no members, that its company may view: somewhere to move a project to.
    { id: ID.marketing, company_id: ID.acme, name: 'Marketing', company_access: 10, inserted_at: ago(90) }
  ]).execute()
  await db.insertInto('space_members').values([
    { space_id: ID.product, person_id: ID.alice },
    { space_id: ID.launch, person_id: ID.dave }
  ]).execute()

  await db.insertInto('goals').values({
    id: ID.goal,
    company_id: ID.acme,
    space_id: ID.product,
    name: 'Double self-serve sign-ups',
    status: 'on_track',
    ...timeframe(quarterOf(now, 'start'), quarterOf(now, 'end')),
    inserted_at: ago(60),
    updated_at: ago(60)
  }).execute()

}

async function insertProjects (db: Db, { ago, ahead }: Clock): Promise<void> {
  const [discovery, design, content, launch] = ID.milestones
  await db.insertInto('projects').values([
    {
      id: ID.websiteRedesign,
      company_id: ID.acme,
      space_id: ID.product,
      goal_id: ID.goal,
      name: 'Website Redesign',
      description: doc(
        'Rebuild acme.test on the new design system so visitors find pricing and sign up without talking to sales.',
        'Out of scope: the customer portal, which keeps its current look until next year.'
      ),
      public_access: 0,
      company_access: 40,
      space_access: 70,
      next_check_in_scheduled_at: ahead(7),
      milestones_ordering_state: [discovery, design, content, launch],
      tasks_kanban_state: JSON.stringify({ pending: [], in_progress: [], done: [], canceled: [] }),
      ...timeframe(dayOf(ago(60)), quarterOf(ahead(60), 'end')),
      inserted_at: ago(60),
      updated_at: ago(2)
    },
    {
      id: ID.internalTools,
      company_id: ID.acme,
      space_id: ID.product,
      goal_id: null,
      name: 'Internal Tools',
      description: doc('Admin dashboards for support and billing. Kept secret until the budget is approved.'),
      public_access: 0,
      company_access: 0,
      space_access: 0,
      inserted_at: ago(30),
      updated_at: ago(30)
    },
    {
      id: ID.globexLaunch,
      company_id: ID.globex,
      space_id: ID.launch,
      goal_id: null,
      name: 'Globex Launch',
      description: doc('Ship Globex to the first ten customers.'),
      public_access: 0,
      company_access: 70,
      space_access: 70,
      inserted_at: ago(20),
      updated_at: ago(20)
    }
  ]).execute()

}

/** Website Redesign's people, milestones, resources, check-in, notifications and subscribers. */
async function insertProjectChildren (db: Db, { ago, ahead }: Clock): Promise<void> {
  const [discovery, design, content, launch] = ID.milestones
  const [c1, c2, c3, c4, c5] = ID.contributors
  await db.insertInto('project_contributors').values([
    { id: c1, project_id: ID.websiteRedesign, person_id: ID.alice, role: 'champion', responsibility: 'Owns the plan and the launch date', access_level: 100 },
    { id: c2, project_id: ID.websiteRedesign, person_id: ID.erin, role: 'reviewer', responsibility: 'Reviews check-ins and unblocks budget', access_level: 100 },
    { id: c3, project_id: ID.websiteRedesign, person_id: ID.carol, role: 'contributor', responsibility: 'Front-end implementation', access_level: 70 },
    { id: c4, project_id: ID.internalTools, person_id: ID.alice, role: 'champion', responsibility: null, access_level: 100 },
    { id: c5, project_id: ID.globexLaunch, person_id: ID.dave, role: 'champion', responsibility: 'Runs the launch', access_level: 100 }
  ]).execute()

  await db.insertInto('project_milestones').values([
    { id: discovery, project_id: ID.websiteRedesign, title: 'Discovery and user interviews', status: 'done', due_date: isoDate(ago(40)), completed_at: ago(42), inserted_at: ago(60) },
    {
      id: design,
      project_id: ID.websiteRedesign,
      title: 'Wireframes and design system',
      status: 'done',
      description: doc('Home, pricing and blog pages, reviewed with marketing.'),
      due_date: isoDate(ago(10)),
      completed_at: ago(12),
      inserted_at: ago(60)
    },
    { id: content, project_id: ID.websiteRedesign, title: 'Content migration', status: 'pending', due_date: isoDate(ahead(14)), inserted_at: ago(60) },
    { id: launch, project_id: ID.websiteRedesign, title: 'Public launch', status: 'pending', due_date: isoDate(ahead(45)), inserted_at: ago(60) }
  ]).execute()

  const [r1, r2, r3] = ID.keyResources
  await db.insertInto('project_key_resources').values([
    { id: r1, project_id: ID.websiteRedesign, title: 'Designs', link: 'https://www.figma.com/file/acme-website-redesign', resource_type: 'figma', inserted_at: ago(55) },
    { id: r2, project_id: ID.websiteRedesign, title: 'Repository', link: 'https://github.com/acme/website', resource_type: 'github', inserted_at: ago(55) },
    { id: r3, project_id: ID.websiteRedesign, title: 'Launch checklist', link: 'https://docs.acme.test/website/launch-checklist', resource_type: 'generic', inserted_at: ago(20) }
  ]).execute()

  await insertActivity(db, { ago, ahead })
}

/** Website Redesign's check-in, its last activity and notification, task statuses and subscribers. */
async function insertActivity (db: Db, { ago }: Pick<Clock, 'ago' | 'ahead'>): Promise<void> {
  await db.insertInto('project_check_ins').values({
    id: ID.checkIn,
    project_id: ID.websiteRedesign,
    author_id: ID.alice,
    status: 'on_track',
    description: doc('Designs are signed off and the first pages are built.', 'Next: content migration with marketing.'),
    acknowledged_at: ago(1),
    acknowledged_by_id: ID.erin,
    inserted_at: ago(2)
  }).execute()
  await db.insertInto('activities').values({
    id: ID.activity,
    company_id: ID.acme,
    project_id: ID.websiteRedesign,
    author_id: ID.alice,
    token_id: null,
    action: 'project_check_in_submitted',
    content: JSON.stringify({ project_id: ID.websiteRedesign, check_in_id: ID.checkIn }),
    inserted_at: ago(2)
  }).execute()
  await db.insertInto('notifications').values({
    id: ID.notification,
    person_id: ID.carol,
    project_id: ID.websiteRedesign,
    activity_id: ID.activity,
    author_id: ID.alice,
    action: 'project_check_in_submitted',
    inserted_at: ago(2)
  }).execute()

  // Operately's defaults for a new project.
  const [pending, inProgress, done, canceled] = ID.taskStatuses
  await db.insertInto('project_task_statuses').values([
    { id: pending, project_id: ID.websiteRedesign, label: 'Not started', color: 'gray', index: 0, value: 'pending', closed: false },
    { id: inProgress, project_id: ID.websiteRedesign, label: 'In progress', color: 'blue', index: 1, value: 'in_progress', closed: false },
    { id: done, project_id: ID.websiteRedesign, label: 'Done', color: 'green', index: 2, value: 'done', closed: true },
    { id: canceled, project_id: ID.websiteRedesign, label: 'Canceled', color: 'red', index: 3, value: 'canceled', closed: true }
  ]).execute()

  await db.insertInto('subscription_lists').values({
    id: ID.subscriptionList, project_id: ID.websiteRedesign, send_to_everyone: false, inserted_at: ago(60)
  }).execute()
  // Erin turned the project's notifications off; Bob was mentioned in an earlier
  // description, so he is told of a change only while the description mentions him.
  const [s1, s2, s3, s4] = ID.subscriptions
  await db.insertInto('subscriptions').values([
    { id: s1, subscription_list_id: ID.subscriptionList, person_id: ID.alice, type: 'joined' },
    { id: s2, subscription_list_id: ID.subscriptionList, person_id: ID.carol, type: 'joined' },
    { id: s3, subscription_list_id: ID.subscriptionList, person_id: ID.erin, type: 'invited', canceled: true },
    { id: s4, subscription_list_id: ID.subscriptionList, person_id: ID.bob, type: 'mentioned' }
  ]).execute()

  await db.insertInto('project_pins').values({ person_id: ID.alice, project_id: ID.websiteRedesign }).execute()
}
