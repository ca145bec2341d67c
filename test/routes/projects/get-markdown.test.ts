// GET /api/external/v1/projects/get?include_markdown=true: the answer is { project,
// markdown }, the project exactly the flag-less answer's, the Markdown the whole
// project (title, status, space, goal, timeframe, people, description as real rich
// text, key resources, milestones, last check-in, retrospective) written out in full
// from the rows. Without the flag, or with false, the answer is { project } alone.
// Any stored description renders: text that is not a document, unknown nodes, odd marks.
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, client, createCompany, createPerson, createProject, createSpace, expectInvalidInput, tokenFor } from '../../helper.js'

const { app, db } = await build(t)

const company = await createCompany(db, 'Markdown Co')
const alice = await createPerson(db, company.id, { fullName: 'Alice Johnson', title: 'Product Manager' })
const erin = await createPerson(db, company.id, { fullName: 'Erin Walsh', title: 'Chief Operating Officer', isAdmin: true })
const carol = await createPerson(db, company.id, { fullName: 'Carol Diaz', title: 'Content Designer' })
const gone = await createPerson(db, company.id, { fullName: 'Gone Suspended', suspended: true })
const stranger = await createPerson(db, (await createCompany(db)).id, { fullName: 'Stranger' })
const space = await createSpace(db, company.id, [alice.id], 'Product')

const api = { alice: client(app, (await tokenFor(db, alice.email)).token) }

type Node = Record<string, unknown>
const text = (value: string, ...marks: Node[]): Node => marks.length > 0 ? { type: 'text', text: value, marks } : { type: 'text', text: value }
const p = (...content: Node[]): Node => ({ type: 'paragraph', content })
const h = (level: number, ...content: Node[]): Node => ({ type: 'heading', attrs: { level }, content })
const li = (...content: Node[]): Node => ({ type: 'listItem', content })
const doc = (...content: Node[]) => JSON.stringify({ type: 'doc', content })

// A document as Operately's editor stores it: headings, marks, a link, a mention, lists.
const DESCRIPTION = doc(
  h(1, text('Goals')),
  p(text('Rebuild the site with '), text('bold', { type: 'bold' }), text(' and '), text('italic', { type: 'italic' }),
    text(' text, see '), text('the brief', { type: 'link', attrs: { href: 'https://acme.test/brief', target: '_blank' } }),
    text(' and ask '), { type: 'mention', attrs: { id: shortId(carol.id), label: 'Carol Diaz' } }, text('.')),
  { type: 'bulletList', content: [li(p(text('Home page'))), li(p(text('Pricing page'), text(' first', { type: 'bold' }, { type: 'italic' })))] },
  h(2, text('Steps')),
  { type: 'orderedList', attrs: { start: 1 }, content: [li(p(text('Design'))), li(p(text('Build')))] },
  p(text('Out of scope: the portal.'))
)

/** The richest project: closed, with every section; every timestamp fixed. */
async function richProject () {
  const goal = await db.insertInto('goals').values({
    company_id: company.id, space_id: space.id, name: 'Double self-serve sign-ups', status: 'on_track', closed_at: null, archived_at: null,
    timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null,
    timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null
  }).returning('id').executeTakeFirstOrThrow()
  const project = await createProject(db, space, { name: 'Website Redesign', description: DESCRIPTION, access: { company: 40, space: 70 }, state: 'closed' })
  await addContributor(db, project.id, alice.id, 'champion')
  await addContributor(db, project.id, erin.id, 'reviewer')
  await addContributor(db, project.id, carol.id, 'contributor', 70)
  await addContributor(db, project.id, gone.id, 'contributor', 70)
  await db.updateTable('project_contributors').set({ responsibility: 'Owns the plan' }).where('project_id', '=', project.id).where('person_id', '=', alice.id).execute()
  await db.updateTable('project_contributors').set({ responsibility: 'Copy and migration' }).where('project_id', '=', project.id).where('person_id', '=', carol.id).execute()
  await db.insertInto('project_key_resources').values({ project_id: project.id, title: 'Designs', link: 'https://www.figma.com/file/acme', resource_type: 'figma' }).execute()
  const [kickOff, launch] = await db.insertInto('project_milestones').values([
    { project_id: project.id, title: 'Kick-off', status: 'done', due_date: '2026-10-01', completed_at: new Date('2026-09-30T10:00:00.000Z'), inserted_at: new Date('2026-09-23T02:00:00.000Z') },
    { project_id: project.id, title: 'Launch', status: 'pending', description: doc(p(text('Go live on '), text('all', { type: 'italic' }), text(' domains.'))), due_date: '2027-03-01', inserted_at: new Date('2026-09-23T02:00:00.000Z') }
  ]).returning('id').execute()
  await db.insertInto('project_check_ins').values([
    { project_id: project.id, author_id: alice.id, status: 'caution', description: doc(p(text('An older check-in.'))), inserted_at: new Date('2026-10-20T00:00:00.000Z') },
    {
      project_id: project.id, author_id: alice.id, status: 'on_track', description: doc(p(text('Designs are signed off.'))),
      inserted_at: new Date('2026-11-20T01:57:00.245Z'), acknowledged_at: new Date('2026-11-21T09:00:00.000Z'), acknowledged_by_id: erin.id
    }
  ]).execute()
  await db.insertInto('project_retrospectives').values({
    project_id: project.id, author_id: alice.id, content: doc(h(1, text('What went well')), p(text('We shipped '), text('on time', { type: 'bold' }), text('.'))),
    closed_at: new Date('2027-03-30T12:00:00.000Z'), success_status: 'achieved'
  }).execute()
  await db.updateTable('projects').set({
    goal_id: goal.id,
    milestones_ordering_state: [kickOff!.id, launch!.id],
    closed_at: new Date('2027-03-30T12:00:00.000Z'),
    timeframe_start_type: 'day', timeframe_start_value: 'Sep 23, 2026', timeframe_start_date: '2026-09-23',
    timeframe_end_type: 'quarter', timeframe_end_value: 'Q1 2027', timeframe_end_date: '2027-03-31',
    inserted_at: new Date('2026-09-23T01:57:00.245Z'),
    updated_at: new Date('2026-11-22T01:57:03.646Z')
  }).where('id', '=', project.id).execute()
  return project
}

const rich = await richProject()

const EXPECTED = `# Website Redesign

- Status: Achieved
- State: Closed
- Privacy: Internal (everyone in the company)
- Space: Product
- Goal: Double self-serve sign-ups
- Champion: Alice Johnson (Product Manager)
- Reviewer: Erin Walsh (Chief Operating Officer)
- Created: 2026-09-23
- Last updated: 2026-11-22
- Closed: 2027-03-30

## Description

### Goals

Rebuild the site with **bold** and *italic* text, see [the brief](https://acme.test/brief) and ask @Carol Diaz.

- Home page
- Pricing page ***first***

#### Steps

1. Design
2. Build

Out of scope: the portal.

## Contributors

- Champion: Alice Johnson (Product Manager) — Owns the plan
- Reviewer: Erin Walsh (Chief Operating Officer)
- Contributor: Carol Diaz (Content Designer) — Copy and migration

## Timeframe

- Start: Sep 23, 2026 (2026-09-23)
- Due: Q1 2027 (2027-03-31)

## Key resources

- [Designs](https://www.figma.com/file/acme) (figma)

## Milestones

### Kick-off

- Status: Done
- Due: 2026-10-01
- Completed: 2026-09-30

### Launch

- Status: Pending
- Due: 2027-03-01

Go live on *all* domains.

## Last check-in

- Status: On track
- Author: Alice Johnson (Product Manager)
- Date: 2026-11-20
- Acknowledged: 2026-11-21 by Erin Walsh

Designs are signed off.

## Retrospective

- Result: Achieved
- Author: Alice Johnson (Product Manager)
- Closed: 2027-03-30

### What went well

We shipped **on time**.
`

const aliceToken = (await tokenFor(db, alice.email)).token
const strangerToken = (await tokenFor(db, stranger.email)).token
/** projects/get with these query parameters, as `token`'s person (Alice unless said). */
const get = (id: string, query: Record<string, string> = {}, token = aliceToken) =>
  app.inject({ method: 'GET', url: '/api/external/v1/projects/get', query: { id, ...query }, headers: { authorization: `Bearer ${token}` } })

t.test('include_markdown=true: { project, markdown }, the project the flag-less answer gives, the whole project as Markdown', async (t) => {
  const plain = await get(rich.publicId)
  t.equal(plain.statusCode, 200)
  const res = await get(rich.publicId, { include_markdown: 'true' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const body = res.json()
  t.strictSame(Object.keys(body).sort(), ['markdown', 'project'])
  t.equal(JSON.stringify(body.project), JSON.stringify(plain.json().project), 'the project byte for byte')
  t.equal(body.markdown, EXPECTED)
})

t.test('the Markdown holds each part the issue names', async (t) => {
  const markdown: string = (await get(rich.publicId, { include_markdown: 'true' })).json().markdown
  const parts: Array<[string, RegExp]> = [
    ['the title', /^# Website Redesign\n/],
    ['the status', /^- Status: Achieved$/m],
    ['the space', /^- Space: Product$/m],
    ['the goal', /^- Goal: Double self-serve sign-ups$/m],
    ['the timeframe', /^## Timeframe\n\n- Start: Sep 23, 2026 \(2026-09-23\)\n- Due: Q1 2027 \(2027-03-31\)$/m],
    ['the champion', /^- Champion: Alice Johnson \(Product Manager\)$/m],
    ['the reviewer', /^- Reviewer: Erin Walsh \(Chief Operating Officer\)$/m],
    ['the contributors', /^- Contributor: Carol Diaz \(Content Designer\) — Copy and migration$/m],
    ['a heading of the description, below the section', /^### Goals$/m],
    ['bold, italic and a link', /\*\*bold\*\* and \*italic\* text, see \[the brief\]\(https:\/\/acme\.test\/brief\)/],
    ['a mention as @Name', /ask @Carol Diaz\./],
    ['a bullet list', /^- Home page\n- Pricing page \*\*\*first\*\*\*$/m],
    ['an ordered list', /^1\. Design\n2\. Build$/m],
    ['the milestones', /^### Kick-off\n\n- Status: Done\n- Due: 2026-10-01\n- Completed: 2026-09-30$/m],
    ["a milestone's description", /^Go live on \*all\* domains\.$/m],
    ['the last check-in, not an older one', /^## Last check-in\n\n- Status: On track\n[^]*Designs are signed off\.$/m],
    ['the retrospective', /^## Retrospective\n\n- Result: Achieved\n[^]*We shipped \*\*on time\*\*\.$/m]
  ]
  for (const [what, pattern] of parts) t.match(markdown, pattern, what)
  t.notMatch(markdown, /An older check-in/, 'only the last check-in')
  t.notMatch(markdown, /Gone Suspended/, 'a suspended contributor is not listed, as in the project')
  t.notMatch(markdown, /[0-9a-f]{8}-[0-9a-f]{4}-/, 'no raw UUID')
})

t.test('without the flag, or with false, the answer is exactly { project }; other include_* flags change nothing', async (t) => {
  const plain = await get(rich.publicId)
  t.strictSame(Object.keys(plain.json()), ['project'])
  const off = await get(rich.publicId, { include_markdown: 'false' })
  t.equal(off.statusCode, 200)
  t.equal(off.body, plain.body, 'false: the same bytes')
  const flagged = await get(rich.publicId, { include_markdown: 'true', include_milestones: 'true', include_contributors: 'false' })
  t.equal(flagged.body, (await get(rich.publicId, { include_markdown: 'true' })).body)
  t.equal((await get(rich.publicId, { include_milestones: 'true' })).body, plain.body)
  // Every flag of Operately's projects/get, at once.
  const operately = ['include_contributors', 'include_goal', 'include_last_check_in', 'include_milestones', 'include_permissions',
    'include_champion', 'include_reviewer', 'include_space', 'include_resource_hub', 'include_contributors_access_levels',
    'include_access_levels', 'include_privacy', 'include_retrospective', 'include_potential_subscribers',
    'include_unread_notifications', 'include_subscription_list']
  t.equal((await get(rich.publicId, Object.fromEntries(operately.map((flag) => [flag, 'true'])))).body, plain.body)
})

t.test('an include_* flag Operately does not have is an unknown parameter: 400 naming it', async (t) => {
  for (const flag of ['include_evil', 'include_archived', 'include_everything']) {
    expectInvalidInput(t, await get(rich.publicId, { [flag]: 'true' }), `/${flag}`, `${flag} is not allowed`)
  }
})

t.test('include_markdown other than true/false is 400; an invisible project is the 404 of an unknown one', async (t) => {
  for (const value of ['1', 'yes', 'TRUE', '', 'null']) {
    expectInvalidInput(t, await get(rich.publicId, { include_markdown: value }), '/include_markdown')
  }
  const res = await get(rich.publicId, { include_markdown: 'true' }, strangerToken)
  t.equal(res.statusCode, 404)
  t.strictSame(res.json(), { statusCode: 404, error: 'Not Found', code: 'not_found', message: 'project not found' })
  const unknown = await get(`website-redesign-${shortId('00000000-0000-4000-8000-000000000000')}`, { include_markdown: 'true' })
  t.equal(unknown.body, res.body)
})

t.test('read-only tokens, and other people, get the same Markdown; an active project says when its check-in is due', async (t) => {
  const aliceReadOnly = (await tokenFor(db, alice.email, { readOnly: true })).token
  t.equal((await get(rich.publicId, { include_markdown: 'true' }, aliceReadOnly)).json().markdown, EXPECTED, 'a read-only token')
  const carolToken = (await tokenFor(db, carol.email, { readOnly: true })).token
  t.equal((await get(rich.publicId, { include_markdown: 'true' }, carolToken)).json().markdown, EXPECTED, 'not person-specific')

  const active = await createProject(db, space, { name: 'Active *one*', access: { company: 10 } })
  await addContributor(db, active.id, carol.id, 'champion')
  await db.updateTable('projects').set({ next_check_in_scheduled_at: new Date('2099-01-01T09:00:00.000Z') }).where('id', '=', active.id).execute()
  const markdown: string = (await get(active.publicId, { include_markdown: 'true' })).json().markdown
  t.match(markdown, /^# Active \\\*one\\\*\n/, 'the title escaped')
  t.match(markdown, /^- Status: Pending \(no check-in yet\)$/m)
  t.match(markdown, /^- State: Active$/m)
  t.match(markdown, /^- Goal: None \(not part of a goal\)$/m)
  t.match(markdown, /^- Reviewer: Not assigned$/m)
  t.match(markdown, /^- Next check-in due: 2099-01-01$/m)
  t.match(markdown, /^## Description\n\n_No description\._$/m)
  for (const section of ['Timeframe', 'Key resources', 'Milestones', 'Last check-in', 'Retrospective']) {
    t.notMatch(markdown, new RegExp(`^## ${section}$`, 'm'), `no empty ${section} section`)
  }
})

t.test('any stored description renders: not a document, not JSON, unknown nodes, odd marks', async (t) => {
  const project = await createProject(db, space, { name: 'Odd descriptions', access: { company: 10 } })
  await db.insertInto('project_check_ins').values({ project_id: project.id, author_id: alice.id, status: 'caution', description: '{"type":"doc","content":"check-in as a string"}' }).execute()
  await db.insertInto('project_retrospectives').values({ project_id: project.id, author_id: alice.id, content: '[{"type":"paragraph","content":[{"type":"text","text":"retro in an array"}]}]' }).execute()
  const cases: Array<[string, string, string]> = [
    ['a JSON string', '"just a *string*"', 'just a \\*string\\*'],
    ['a number', '42', '42'],
    ['a boolean', 'true', 'true'],
    ['JSON null', 'null', '_No description._'],
    ['an empty object', '{}', '_No description._'],
    ['an array of nodes and values', '[{"type":"paragraph","content":[{"type":"text","text":"first"}]},{"type":"text","text":"second"},7]', 'first\n\nsecond'],
    ['text that is not JSON (written straight to the table)', 'plain # text\n# not a heading', 'plain # text\\\n\\# not a heading'],
    ['an unknown block node', doc({ type: 'callout', attrs: { emoji: '💡' }, content: [p(text('inside a callout'))] }), 'inside a callout'],
    ['unknown inline nodes', doc(p(text('a '), { type: 'emoji', text: '🎉' }, { type: 'hashtag', content: [text(' tagged')] })), 'a 🎉 tagged'],
    ['odd marks', doc(p(text('marked', { type: 'sparkle' }, { type: 'link', attrs: { href: 'javascript:alert(1)' } }, { type: 'bold', attrs: 5 }, { type: 'underline' }))), '**marked**'],
    ['marks that are not a list', JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'plain', marks: 'bold' }] }] }), 'plain'],
    ['a mention without a label', doc(p(text('ask '), { type: 'mention', attrs: { id: 'x' } })), 'ask @someone'],
    ['a heading level out of range', doc(h(9, text('deep'))), '###### deep'],
    ['nodes without a type', JSON.stringify({ type: 'doc', content: [{ content: [text('untyped')] }, { type: 5, text: 'numbered' }] }), 'untyped\n\nnumbered']
  ]
  for (const [what, description, rendered] of cases) {
    await db.updateTable('projects').set({ description }).where('id', '=', project.id).execute()
    const res = await get(project.publicId, { include_markdown: 'true' })
    t.equal(res.statusCode, 200, what)
    const body = res.json()
    t.equal(body.project.description, description, `${what}: the project's description is the stored text`)
    t.ok(body.markdown.includes(`## Description\n\n${rendered}\n\n## `), `${what}: rendered as ${JSON.stringify(rendered)}`)
    t.match(body.markdown, /^## Last check-in\n\n- Status: Caution\n[^]*\n\ncheck-in as a string\n/m, `${what}: the check-in too`)
    t.match(body.markdown, /\n\nretro in an array\n$/, `${what}: and the retrospective`)
  }
})

t.test('a description set through update_description is read back as Markdown', async (t) => {
  const project = await createProject(db, space, { name: 'Described', access: { space: 70 } })
  const description = doc(h(3, text('Plan')), p(text('Ship '), text('v2', { type: 'bold' }), text(' by March. Ask '), { type: 'mention', attrs: { id: 'c', label: 'Carol Diaz' } }, text('.')))
  const updated = await api.alice.updateDescription({ project_id: project.publicId, description })
  t.equal(updated.statusCode, 200)
  const body = (await get(project.publicId, { include_markdown: 'true' })).json()
  t.equal(body.project.description, description)
  t.ok(body.markdown.includes('## Description\n\n##### Plan\n\nShip **v2** by March. Ask @Carol Diaz.\n'), body.markdown)
})
