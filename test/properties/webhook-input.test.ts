// webhooks/create and the id-taking webhook operations under random, hostile input:
// every answer is a 200 or a 400 in the envelope (never a 5xx); an endpoint is made
// exactly when the URL is https on a public host,
// the events a non-empty set of known ones and the description short enough; a
// refusal writes nothing; the id operations answer 404 for anything but an id of
// the company's own endpoint. FUZZ_SEED replays a run, FUZZ_RUNS multiplies it.
import fc from 'fast-check'
import ipaddr from 'ipaddr.js'
import t from '../tap.js'
import { WEBHOOK_EVENTS } from '../../src/webhooks/schemas.js'
import { loadDemo } from '../../src/demo/load.js'
import { shortId } from '../../src/ids.js'
import { isPublicAddress } from '../../src/webhooks/targets.js'
import { build, VALIDATOR_JARGON } from '../helper.js'

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31)
const FACTOR = Number(process.env.FUZZ_RUNS ?? 1)
t.comment(`FUZZ_SEED=${SEED}`)

const { app, db } = await build(t)
const demo = await loadDemo(db)
const headers = { authorization: `Bearer ${demo.tokens['erin@acme.test']!.write}` }
const W = '/api/external/v1/webhooks'
const EVENTS: string[] = [...WEBHOOK_EVENTS]

const hostArb = fc.oneof(
  fc.constantFrom('hooks.example.com', 'example.org', '8.8.8.8', '[2606:4700:4700::1111]', '1.1.1.1:8443'),
  fc.constantFrom('127.0.0.1', 'localhost', '10.1.2.3', '169.254.169.254', '[::1]', '[fd00::1]', '[::ffff:10.0.0.1]', '0.0.0.0', '100.64.0.1', '224.0.0.1', '192.168.0.1:80'),
  fc.ipV4().map(String), fc.ipV6().map((ip) => `[${ip}]`),
  fc.domain()
)
const urlArb = fc.oneof(
  fc.tuple(fc.constantFrom('https://', 'http://', 'ftp://', 'HTTPS://', '//', '', 'https:/', 'https://user:pw@'), hostArb, fc.constantFrom('', '/', '/hook', '/a?b=c', '/%00', '#x', '/ü'))
    .map(([scheme, host, path]) => `${scheme}${host}${path}`),
  fc.string({ maxLength: 40 }),
  fc.webUrl()
)
const bodyArb = fc.record({
  url: fc.oneof({ weight: 8, arbitrary: urlArb }, { weight: 1, arbitrary: fc.constantFrom(null, 42, true, [], {}) }),
  events: fc.oneof(
    fc.subarray(EVENTS, { minLength: 0 }), fc.array(fc.constantFrom(...EVENTS, 'project.exploded', '', 'PROJECT.RENAMED'), { maxLength: 3 }),
    fc.constantFrom('project.renamed', null, 1, {})
  ),
  description: fc.oneof(fc.string({ maxLength: 20 }), fc.string({ minLength: 495, maxLength: 505 }), fc.constantFrom(null, 1)),
  extra: fc.oneof(fc.constant(undefined), fc.constantFrom('secret', 'company_id', 'enabled', '__proto__'))
}, { requiredKeys: [] })

/** Whether the contract makes an endpoint of this body (WEBHOOKS_ALLOW_PRIVATE_TARGETS off). */
function accepted (body: Record<string, unknown>): boolean {
  if (body.extra !== undefined) return false
  if (typeof body.url !== 'string' || body.url.length > 2048) return false
  if ('events' in body && !(Array.isArray(body.events) && body.events.length > 0 && new Set(body.events).size === body.events.length &&
    body.events.every((e) => EVENTS.includes(e as string)))) return false
  if ('description' in body && !(typeof body.description === 'string' && body.description.length <= 500)) return false
  let url: URL
  try { url = new URL(body.url) } catch { return false }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.hostname === '') return false
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (ipaddr.isValid(host)) return isPublicAddress(host)
  // fc.domain() names do not resolve here: taken, checked again at each delivery.
  return host !== 'localhost' && !host.endsWith('.localhost')
}

t.test('webhooks/create: hostile bodies are a 200 exactly when the contract says, else a 400 that writes nothing', async (t) => {
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(bodyArb, async (generated) => {
    const { extra, ...rest } = generated
    const payload: Record<string, unknown> = { ...rest }
    // Defined, not assigned: `payload.__proto__ = 'x'` would not make a key of the JSON.
    if (extra !== undefined) Object.defineProperty(payload, extra, { value: 'x', enumerable: true, configurable: true, writable: true })
    await db.deleteFrom('webhooks').execute()
    const res = await app.inject({ method: 'POST', url: `${W}/create`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    const rows = await db.selectFrom('webhooks').select(['url', 'events', 'description', 'secret']).execute()
    const want = accepted({ ...rest, ...(extra !== undefined ? { extra } : {}) })
    if (res.statusCode !== (want ? 200 : 400)) throw new Error(`expected ${want ? 200 : 400}, got ${res.statusCode}: ${res.body.slice(0, 300)}`)
    if (!want) {
      const body = res.json()
      // A prototype key is refused by the body parser, before any field is looked at: no details then.
      const parserRefusal = /__proto__|constructor\.prototype/.test(body.message)
      if (body.code !== 'invalid_input' || (!parserRefusal && !Array.isArray(body.details))) throw new Error(`not the envelope: ${res.body}`)
      if (VALIDATOR_JARGON.test(body.message)) throw new Error(`a refusal in the validator's words: ${body.message}`)
      if (rows.length !== 0) throw new Error('a refusal wrote')
      return
    }
    const { webhook, secret } = res.json()
    if (rows.length !== 1 || rows[0]!.secret !== secret || rows[0]!.url !== webhook.url) throw new Error('the row is not the answer')
    if (!webhook.url.startsWith('https://')) throw new Error(`stored ${webhook.url}`)
  }), { numRuns: 300 * FACTOR, seed: SEED })
  t.pass('every generated body answered as the contract says')
  t.comment(`statuses: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')}`)
})

t.test('the id operations: anything but an id of the company\'s own endpoint is 404 (or 400 when blank), and changes nothing', async (t) => {
  await db.deleteFrom('webhooks').execute()
  const own = (await app.inject({ method: 'POST', url: `${W}/create`, headers, payload: { url: 'https://hooks.example.com/own' } })).json().webhook
  const before = await db.selectFrom('webhooks').selectAll().execute()
  await fc.assert(fc.asyncProperty(
    fc.constantFrom('delete', 'rotate_secret', 'list_deliveries'),
    fc.oneof(fc.string({ maxLength: 30 }), fc.uuid(), fc.uuid().map(shortId), fc.constantFrom(own.id.slice(1), `${own.id}x`, own.id.toLowerCase(), ' ')),
    async (op, id) => {
      if (id === own.id) return
      const res = op === 'list_deliveries'
        ? await app.inject({ method: 'GET', url: `${W}/${op}`, query: { webhook_id: id }, headers })
        : await app.inject({ method: 'POST', url: `${W}/${op}`, headers, payload: { id } })
      const want = id.trim() === '' ? 400 : 404
      if (res.statusCode !== want) throw new Error(`${op} ${JSON.stringify(id)}: expected ${want}, got ${res.statusCode}: ${res.body}`)
    }), { numRuns: 300 * FACTOR, seed: SEED })
  t.same(await db.selectFrom('webhooks').selectAll().execute(), before, 'nothing changed')
})
