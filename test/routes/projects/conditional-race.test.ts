// Many clients, one tag: the If-Match check and the write are one statement on the
// locked row, so of 50 saves sent at once with the tag of one read, exactly one
// succeeds and the 49 others are 412, however they interleave; exactly one
// activity is recorded, only the winner's mentions subscribe anyone, and each 412
// carries the tag its sender reads afterwards. Over real HTTP on loopback, so the
// pool's connections race for the row (on PGlite, with one connection, the
// requests queue and the rule holds the same).
import t from '../../tap.js'
import { shortId } from '../../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, projectActivities, tokenFor } from '../../helper.js'
import { listen } from '../../launch.js'

const CLIENTS = 50
const ROUNDS = 3

const { app, db } = await build(t)
const base = `${(await listen(app)).url}/api/external/v1/projects`

const company = await createCompany(db)
const alice = await createPerson(db, company.id, { fullName: 'Alice' })
const carol = await createPerson(db, company.id, { fullName: 'Carol' })
// People to mention: one per client, so the subscriptions show whose save won.
const mentionable: Array<{ id: string }> = []
for (let i = 0; i < CLIENTS; i++) mentionable.push(await createPerson(db, company.id, { fullName: `Mentioned ${String(i).padStart(2, '0')}` }))
const space = await createSpace(db, company.id, [alice.id])
// Several tokens of one person: one tag is the project as one person reads it.
const aliceTokens: string[] = []
for (let i = 0; i < 5; i++) aliceTokens.push((await tokenFor(db, alice.email)).token)
const carolToken = (await tokenFor(db, carol.email)).token

async function project (name: string) {
  const p = await createProject(db, space, { name, access: { space: 70 } })
  await addContributor(db, p.id, alice.id, 'champion')
  await addContributor(db, p.id, carol.id, 'contributor', 70)
  const list = await db.insertInto('subscription_lists').values({ project_id: p.id }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('subscriptions').values([alice, carol].map((person) => ({ subscription_list_id: list.id, person_id: person.id, type: 'joined' as const }))).execute()
  return p
}

async function get (token: string, id: string) {
  const res = await fetch(`${base}/get?id=${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${token}` } })
  return { status: res.status, etag: res.headers.get('etag'), body: await res.json() as { project: Record<string, unknown> } }
}

interface Answer { client: number, status: number, etag: string | null, body: { code?: string, project?: Record<string, unknown> } }

async function save (client: number, token: string, field: 'name' | 'description', id: string, value: string, ifMatch: string): Promise<Answer> {
  const res = await fetch(`${base}/${field === 'name' ? 'update_name' : 'update_description'}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'if-match': ifMatch },
    body: JSON.stringify({ project_id: id, [field]: value })
  })
  return { client, status: res.status, etag: res.headers.get('etag'), body: await res.json() as Answer['body'] }
}

// Every save changes the project: a save of the value it already has changes
// nothing, so the tag it was sent with stays current (and another such save
// succeeds too: there is no edit to lose).
const mention = (i: number, round: number) => JSON.stringify({
  type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { id: shortId(mentionable[i]!.id) } }, { type: 'text', text: ` take this, client ${i}, round ${round}` }] }]
})

async function subscribed (projectId: string): Promise<string[]> {
  const rows = await db.selectFrom('subscriptions as s').innerJoin('subscription_lists as l', 'l.id', 's.subscription_list_id')
    .where('l.project_id', '=', projectId).where('s.type', '=', 'mentioned').select('s.person_id').execute()
  return rows.map((r) => r.person_id)
}

for (const field of ['name', 'description'] as const) {
  t.test(`${CLIENTS} concurrent ${field} saves by one person with one tag: exactly one 200, ${CLIENTS - 1} 412, one activity (${ROUNDS} rounds)`, async (t) => {
    const p = await project(`Race for the ${field}`)
    const mentionedByWinners = new Set<string>()
    for (let round = 0; round < ROUNDS; round++) {
      const read = await get(aliceTokens[0]!, p.publicId)
      const tag = read.etag!
      const value = (client: number) => field === 'name' ? `Round ${round}, client ${client}` : mention(client, round)
      const activitiesBefore = (await projectActivities(db, p.id)).length
      const answers = await Promise.all(Array.from({ length: CLIENTS }, (_, client) =>
        save(client, aliceTokens[client % aliceTokens.length]!, field, p.publicId, value(client), tag)))

      const winners = answers.filter((a) => a.status === 200)
      const losers = answers.filter((a) => a.status === 412)
      t.equal(winners.length, 1, `round ${round}: exactly one 200`)
      t.equal(losers.length, CLIENTS - 1, `round ${round}: the others 412 (${answers.filter((a) => a.status !== 200 && a.status !== 412).map((a) => a.status).join(',') || 'nothing else'})`)
      const winner = winners[0]!
      const now = await get(aliceTokens[0]!, p.publicId)
      t.equal(now.body.project[field], value(winner.client), `round ${round}: the winner's value is stored`)
      t.equal(winner.etag, now.etag, `round ${round}: the winner's tag is the one a read gives`)
      t.ok(losers.every((a) => a.body.code === 'precondition_failed' && a.etag === now.etag), `round ${round}: every 412 carries the current tag`)
      const activities = await projectActivities(db, p.id)
      t.equal(activities.length, activitiesBefore + 1, `round ${round}: one activity`)
      if (field === 'description') {
        mentionedByWinners.add(mentionable[winner.client]!.id)
        t.ok((await subscribed(p.id)).includes(mentionable[winner.client]!.id), `round ${round}: the winner's mention subscribed its person`)
      }
    }
    if (field === 'description') t.same((await subscribed(p.id)).sort(), [...mentionedByWinners].sort(), 'and no loser\'s mention subscribed anyone')
    const notified = await db.selectFrom('notifications').select(['person_id']).where('project_id', '=', p.id).execute()
    if (field === 'description') {
      t.ok(notified.every((n) => n.person_id !== alice.id), 'the author is never notified')
      t.equal(notified.filter((n) => n.person_id === carol.id).length, ROUNDS, 'carol once per winning change, not per request')
    } else {
      t.equal(notified.length, 0, 'a rename notifies nobody')
    }
  })
}

t.test(`two editors, ${CLIENTS} saves at once, each with their own fresh tag: one change in all`, async (t) => {
  const p = await project('Two editors racing')
  for (let round = 0; round < ROUNDS; round++) {
    const aliceTag = (await get(aliceTokens[0]!, p.publicId)).etag!
    const carolTag = (await get(carolToken, p.publicId)).etag!
    const activitiesBefore = (await projectActivities(db, p.id)).length
    const answers = await Promise.all(Array.from({ length: CLIENTS }, (_, client) => client % 2 === 0
      ? save(client, aliceTokens[client % aliceTokens.length]!, 'description', p.publicId, mention(client, round), aliceTag)
      : save(client, carolToken, 'description', p.publicId, mention(client, round), carolTag)))
    const winners = answers.filter((a) => a.status === 200)
    t.equal(winners.length, 1, `round ${round}: one change in all`)
    t.equal(answers.filter((a) => a.status === 412).length, CLIENTS - 1, `round ${round}: the others 412`)
    t.equal((await projectActivities(db, p.id)).length, activitiesBefore + 1, `round ${round}: one activity`)
    // The winner's change notifies the other editor: each loser's 412 carries the
    // tag its sender reads now, that notification included.
    const now = { alice: (await get(aliceTokens[0]!, p.publicId)).etag, carol: (await get(carolToken, p.publicId)).etag }
    for (const loser of answers.filter((a) => a.status === 412)) {
      const who = loser.client % 2 === 0 ? 'alice' : 'carol'
      if (loser.etag !== now[who]) t.fail(`round ${round}: client ${loser.client}'s 412 carries ${loser.etag}, ${who} reads ${now[who]}`)
    }
    t.pass(`round ${round}: every 412 carries its sender's current tag`)
  }
})
