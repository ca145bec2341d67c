// A webhook event's body from its stored payload, without a database: public ids
// (the project's slugged by its new name, as the API gives it), keys in a fixed
// order, the same bytes for the same payload whatever order its keys were stored
// in, and a description flagged without its text.
import t from '../tap.js'
import { decodeId, shortId, sluggedId } from '../../src/ids.js'
import { eventBodyText, eventMessageId, toEventBody, type StoredEvent } from '../../src/webhooks/event.js'

const PROJECT = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'
const COMPANY = '11111111-2222-4333-8444-555555555555'
const ACTOR = '66666666-7777-4888-9999-aaaaaaaaaaaa'

const rename: StoredEvent = {
  type: 'project.renamed',
  timestamp: '2026-11-24T18:47:57.123456+00:00',
  data: {
    project: { id: PROJECT, name: 'Website Redesign 2.0' },
    company: { id: COMPANY, name: 'Acme' },
    actor: { id: ACTOR, full_name: 'Alice Johnson' },
    change: { old_name: 'Website Redesign', new_name: 'Website Redesign 2.0' }
  }
}

t.test('a rename: public ids, the ISO time, the old and new name', async (t) => {
  const body = toEventBody(rename)
  t.same(body, {
    type: 'project.renamed',
    timestamp: '2026-11-24T18:47:57.123Z',
    data: {
      project: { id: sluggedId(PROJECT, 'Website Redesign 2.0'), name: 'Website Redesign 2.0' },
      company: { id: shortId(COMPANY), name: 'Acme' },
      actor: { id: shortId(ACTOR), full_name: 'Alice Johnson' },
      change: { old_name: 'Website Redesign', new_name: 'Website Redesign 2.0' }
    }
  })
  t.match(body.data.project.id, /^website-redesign-2-0-[0-9A-Za-z]{22}$/, 'the id the API gives the project after the rename')
  t.equal(decodeId(body.data.project.id), PROJECT)
  t.equal(decodeId(body.data.actor.id), ACTOR)
  t.same(Object.keys(JSON.parse(eventBodyText(rename))), ['type', 'timestamp', 'data'])
})

t.test('the same payload gives the same bytes, whatever order its keys were stored in', async (t) => {
  const shuffled = JSON.parse(JSON.stringify({
    data: {
      change: { new_name: 'Website Redesign 2.0', old_name: 'Website Redesign' },
      actor: { full_name: 'Alice Johnson', id: ACTOR },
      company: { name: 'Acme', id: COMPANY },
      project: { name: 'Website Redesign 2.0', id: PROJECT }
    },
    timestamp: '2026-11-24T18:47:57.123456+00:00',
    type: 'project.renamed'
  })) as StoredEvent
  t.equal(eventBodyText(shuffled), eventBodyText(rename))
  t.equal(eventBodyText(rename), eventBodyText(rename))
})

t.test('a description: whole up to 64 KiB, else flagged without text', async (t) => {
  const described = (change: Record<string, unknown>): StoredEvent => ({ ...rename, type: 'project.description_changed', data: { ...rename.data, change } })
  t.same(toEventBody(described({ description: '"x"', description_omitted: false, description_bytes: 3 })).data.change,
    { description: '"x"', description_omitted: false, description_bytes: 3 })
  t.same(toEventBody(described({ description: null, description_omitted: true, description_bytes: 70000 })).data.change,
    { description: null, description_omitted: true, description_bytes: 70000 })
  t.same(toEventBody(described({ description: null, description_omitted: false, description_bytes: null })).data.change,
    { description: null, description_omitted: false, description_bytes: 0 }, 'a description cleared to nothing')
})

t.test("the webhook-id is the event's public id", async (t) => {
  t.equal(eventMessageId(PROJECT), shortId(PROJECT))
  t.equal(decodeId(eventMessageId(PROJECT)), PROJECT)
})
