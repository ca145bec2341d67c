// Many clients at once over real HTTP on loopback, so the database pool and its
// row locks are exercised: 50 clients, each sending one request after another,
// rename and describe a few shared projects and one project of their own each.
// Every write carries a unique value, so the audit trail of each field must read
// as one unbroken chain that contains every acknowledged write exactly once.
import { sql } from 'kysely'
import t from '../tap.js'
import { decodeId } from '../../src/ids.js'
import { build, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'
import { listen } from '../launch.js'

const CLIENTS = 50
const REQUESTS_PER_CLIENT = 20 // 1,000 requests in all
const SHARED_PROJECTS = 3
/** Share of a client's requests that go to the shared projects. */
const SHARED_SHARE = 0.5
/** Share of writes to a client's own project that resend its current value (a no-op). */
const REPEAT_SHARE = 0.1

// Replayable: the seed is printed, and CONCURRENCY_SEED sets it.
const SEED = Number(process.env.CONCURRENCY_SEED ?? Math.floor(Math.random() * 2 ** 31))
t.comment(`seed ${SEED} (set CONCURRENCY_SEED=${SEED} to choose the same requests again)`)

/** mulberry32: a small seeded generator, one per client. */
function random (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), a | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

type Field = 'name' | 'description'

interface Write {
  client: number
  seq: number
  projectId: string
  field: Field
  value: string
  /** False for a resend of the value the client knows is current. */
  changing: boolean
  status: number
  body: string
}

const { app, db } = await build(t)
const base = `${(await listen(app)).url}/api/external/v1/projects`

const company = await createCompany(db)
const people: Array<Awaited<ReturnType<typeof createPerson>>> = []
for (let c = 0; c < CLIENTS; c++) people.push(await createPerson(db, company.id))
const space = await createSpace(db, company.id, people.map((p) => p.id))
const tokens: Array<Awaited<ReturnType<typeof tokenFor>>> = []
for (const person of people) tokens.push(await tokenFor(db, person.email))

const INITIAL = {
  name: (label: string) => `Initial ${label}`,
  description: (label: string) => JSON.stringify({ initial: label })
}

async function project (label: string) {
  return createProject(db, space, {
    name: INITIAL.name(label), description: INITIAL.description(label), access: { space: 70 }
  })
}

type Project = Awaited<ReturnType<typeof project>>
const shared: Project[] = []
for (let s = 0; s < SHARED_PROJECTS; s++) shared.push(await project(`shared ${s}`))
const own: Project[] = []
for (let c = 0; c < CLIENTS; c++) own.push(await project(`own ${c}`))
const labelOf = new Map<string, string>([
  ...shared.map((p, s) => [p.id, `shared ${s}`] as const),
  ...own.map((p, c) => [p.id, `own ${c}`] as const)
])

async function send (token: string, field: Field, projectId: string, value: string): Promise<{ status: number, body: string }> {
  const res = await fetch(`${base}/${field === 'name' ? 'update_name' : 'update_description'}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: projectId, [field]: value })
  })
  return { status: res.status, body: await res.text() }
}

/** One client: each request waits for the answer to the one before. */
async function runClient (client: number): Promise<Write[]> {
  const next = random(SEED + client)
  const writes: Write[] = []
  const current: Record<Field, string> = { name: INITIAL.name(`own ${client}`), description: INITIAL.description(`own ${client}`) }
  for (let seq = 0; seq < REQUESTS_PER_CLIENT; seq++) {
    const onShared = next() < SHARED_SHARE
    const target = onShared ? shared[Math.floor(next() * SHARED_PROJECTS)]! : own[client]!
    const field: Field = next() < 0.5 ? 'name' : 'description'
    const repeat = !onShared && seq > 0 && next() < REPEAT_SHARE
    const value = repeat
      ? current[field]
      : field === 'name' ? `Client ${client} write ${seq}` : JSON.stringify({ client, seq, text: `write ${seq} of client ${client}` })
    const { status, body } = await send(tokens[client]!.token, field, target.publicId, value)
    if (!onShared && status === 200) current[field] = value
    writes.push({ client, seq, projectId: target.id, field, value, changing: !repeat, status, body })
  }
  return writes
}

const writes = (await Promise.all(Array.from({ length: CLIENTS }, (_, c) => runClient(c)))).flat()

const ACTIONS = { name: 'project_renamed', description: 'project_description_changed' } as const
const CONTENT = { name: ['old_name', 'new_name'], description: ['old_description', 'new_description'] } as const

interface Step { old: string | null, new: string, authorId: string, tokenId: string | null }

async function steps (projectId: string, field: Field): Promise<Step[]> {
  const rows = await db.selectFrom('activities').select(['content', 'author_id', 'token_id'])
    .where('project_id', '=', projectId).where('action', '=', ACTIONS[field]).execute()
  const [oldKey, newKey] = CONTENT[field]
  return rows.map((r) => ({
    old: r.content[oldKey] as string | null, new: r.content[newKey] as string, authorId: r.author_id, tokenId: r.token_id
  }))
}

/**
 * Orders the activities by following old value to new value from the initial
 * value. Returns the problem instead when two activities replace the same value
 * (a lost update) or some activity is not reached (a broken chain).
 */
function chain (initial: string, all: Step[]): Step[] | string {
  const byOld = new Map<string | null, Step>()
  for (const step of all) {
    if (byOld.has(step.old)) return `two activities replace ${JSON.stringify(step.old)}`
    byOld.set(step.old, step)
  }
  const ordered: Step[] = []
  let value: string | null = initial
  for (let step = byOld.get(value); step !== undefined; step = byOld.get(value)) {
    ordered.push(step)
    byOld.delete(value)
    value = step.new
  }
  if (ordered.length !== all.length) return `${all.length - ordered.length} of ${all.length} activities are off the chain`
  return ordered
}

t.test(`${CLIENTS} clients, ${CLIENTS * REQUESTS_PER_CLIENT} requests: every one is a 200`, async (t) => {
  t.equal(writes.length, CLIENTS * REQUESTS_PER_CLIENT)
  const failed = writes.filter((w) => w.status !== 200).map((w) => `${w.status} ${w.body.slice(0, 200)}`)
  t.same(failed, [], 'no 5xx and no other non-200')
  t.ok(writes.some((w) => !w.changing), 'some writes resend the current value')
  t.ok(shared.every((p) => writes.filter((w) => w.projectId === p.id).length > 50), 'the shared projects are contended')
})

t.test('each 200 answers with the value its own request set', async (t) => {
  const wrong = []
  for (const w of writes.filter((w) => w.status === 200)) {
    const body = JSON.parse(w.body)
    if (body.project?.[w.field] !== w.value || decodeId(body.project?.id ?? '') !== w.projectId) {
      wrong.push(`client ${w.client} write ${w.seq} on ${labelOf.get(w.projectId)}: sent ${w.field} ${JSON.stringify(w.value)}, got ${JSON.stringify(body.project?.[w.field])}`)
    }
  }
  t.same(wrong, [], 'every response carries its own new value')
})

t.test("a project written by one client ends with that client's last acknowledged writes", async (t) => {
  for (const [client, p] of own.entries()) {
    const mine = writes.filter((w) => w.projectId === p.id && w.status === 200)
    const row = await db.selectFrom('projects').select(['name', 'description']).where('id', '=', p.id).executeTakeFirstOrThrow()
    for (const field of ['name', 'description'] as const) {
      const initial = INITIAL[field](`own ${client}`)
      const acknowledged = mine.filter((w) => w.field === field)
      t.equal(row[field], acknowledged.at(-1)?.value ?? initial, `client ${client}: final ${field}`)
      const ordered = chain(initial, await steps(p.id, field))
      if (typeof ordered === 'string') {
        t.fail(`client ${client}, ${field}: ${ordered}`)
        continue
      }
      t.same(ordered.map((s) => s.new), acknowledged.filter((w) => w.changing).map((w) => w.value),
        `client ${client}: one ${field} activity per changing write, in the order sent`)
    }
  }
})

t.test('shared projects: one unbroken chain per field holding every acknowledged write once', async (t) => {
  for (const [s, p] of shared.entries()) {
    const row = await db.selectFrom('projects').select(['name', 'description']).where('id', '=', p.id).executeTakeFirstOrThrow()
    for (const field of ['name', 'description'] as const) {
      const what = `shared ${s}, ${field}`
      const ordered = chain(INITIAL[field](`shared ${s}`), await steps(p.id, field))
      if (typeof ordered === 'string') {
        t.fail(`${what}: ${ordered}`)
        continue
      }
      const acknowledged = writes.filter((w) => w.projectId === p.id && w.field === field && w.status === 200)
      t.ok(acknowledged.length > 0, `${what}: written`)
      t.equal(row[field], ordered.at(-1)?.new ?? INITIAL[field](`shared ${s}`), `${what}: the chain ends at the row's value`)
      t.same(ordered.map((s) => s.new).sort(), acknowledged.map((w) => w.value).sort(), `${what}: every acknowledged write exactly once`)

      // The chain is one serial order of the writes: each activity names the
      // client that sent its value, and a client's later write comes later.
      const position = new Map(ordered.map((step, i) => [step.new, i]))
      const byValue = new Map(acknowledged.map((w) => [w.value, w]))
      t.ok(ordered.every((step) => {
        const w = byValue.get(step.new)
        return w !== undefined && step.authorId === people[w.client]!.id && step.tokenId === tokens[w.client]!.id
      }), `${what}: author and token of each activity are the sender's`)
      for (let client = 0; client < CLIENTS; client++) {
        const order = acknowledged.filter((w) => w.client === client).map((w) => position.get(w.value)!)
        if (order.some((at, i) => i > 0 && at < order[i - 1]!)) t.fail(`${what}: client ${client}'s writes out of order: ${order.join(', ')}`)
      }
    }
  }
})

t.test('one audit activity per acknowledged changing write, no more', async (t) => {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM activities`.execute(db)
  const changing = writes.filter((w) => w.status === 200 && w.changing).length
  t.equal(Number(rows[0]!.n), changing)
})
