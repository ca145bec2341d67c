// webhooks/* on the demo, through the API, with the database checked after each
// step: only a company's admins manage its endpoints; a URL must be https on a
// public address (its host judged normalised) and a port other than 0; the
// secret is shown once, at creation or rotation; a change writes one delivery and
// one job per subscribed, enabled endpoint of its company, in its own statement,
// and nothing for a change that changed nothing or failed.
import dns from 'node:dns'
import { readFile } from 'node:fs/promises'
import type { LightMyRequestResponse } from 'fastify'
import ipaddr from 'ipaddr.js'
import { sql } from 'kysely'
import t from '../../tap.js'
import { WEBHOOK_EVENTS } from '../../../src/webhooks/schemas.js'
import { Webhook as Verifier } from 'standardwebhooks'
import { loadDemo } from '../../../src/demo/load.js'
import { DELIVERY_QUEUE } from '../../../src/db/jobs.js'
import { shortId } from '../../../src/ids.js'
import { isPublicAddress } from '../../../src/webhooks/targets.js'
import { build, createPerson, expectInvalidInput, tokenFor } from '../../helper.js'

const { app, db } = await build(t)
const demo = await loadDemo(db)
const W = '/api/external/v1/webhooks'
const P = '/api/external/v1/projects'

const person = async (email: string) => db.selectFrom('people').select(['id', 'company_id']).where('email', '=', email).executeTakeFirstOrThrow()
const erin = await person('erin@acme.test') // Acme's admin
const alice = await person('alice@acme.test') // not an admin
const dave = await person('dave@globex.test')
const globexAdmin = await createPerson(db, dave.company_id, { isAdmin: true })
const globexToken = (await tokenFor(db, globexAdmin.email)).token
const write = (email: string) => demo.tokens[email]!.write
const readOnly = (email: string) => demo.tokens[email]!.read_only
const website = shortId(demo.projects['Website Redesign']!.id)

function api (token: string) {
  const headers = { authorization: `Bearer ${token}` }
  const post = (op: string, body: unknown): Promise<LightMyRequestResponse> => app.inject({ method: 'POST', url: `${W}/${op}`, headers, payload: body as object })
  return {
    create: (body: unknown) => post('create', body),
    delete: (body: unknown) => post('delete', body),
    rotate: (body: unknown) => post('rotate_secret', body),
    list: (query: Record<string, string> = {}) => app.inject({ method: 'GET', url: `${W}/list`, query, headers }),
    deliveries: (query: Record<string, string>) => app.inject({ method: 'GET', url: `${W}/list_deliveries`, query, headers }),
    rename: (name: string) => app.inject({ method: 'POST', url: `${P}/update_name`, headers, payload: { project_id: website, name } }),
    describe: (description: string) => app.inject({ method: 'POST', url: `${P}/update_description`, headers, payload: { project_id: website, description } })
  }
}
const admin = api(write('erin@acme.test'))

const webhookRows = () => db.selectFrom('webhooks').selectAll().orderBy('inserted_at').execute()
const deliveryRows = () => db.selectFrom('webhook_deliveries').selectAll().orderBy('inserted_at').orderBy('id').execute()
const jobRows = () => sql<{ data: { delivery_id: string, attempt: number }, state: string }>`
  SELECT data, state::text FROM pgboss.job WHERE name = ${DELIVERY_QUEUE} ORDER BY created_on`.execute(db).then((r) => r.rows)

async function reset () {
  await db.deleteFrom('webhooks').execute()
  await sql`DELETE FROM pgboss.job WHERE name = ${DELIVERY_QUEUE}`.execute(db)
}

t.test('an admin creates an endpoint: the secret once, the row as shown, all events by default', async (t) => {
  await reset()
  const res = await admin.create({ url: 'https://hooks.example.com/projects', description: 'Team chat' })
  t.equal(res.statusCode, 200, res.body)
  const { webhook, secret } = res.json()
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, '32 random bytes in base64 after whsec_')
  t.doesNotThrow(() => new Verifier(secret), 'a secret standardwebhooks takes')
  const [row] = await webhookRows()
  t.same(webhook, {
    id: shortId(row!.id),
    url: 'https://hooks.example.com/projects',
    events: [...WEBHOOK_EVENTS],
    description: 'Team chat',
    enabled: true,
    disabled_reason: null,
    inserted_at: new Date(row!.inserted_at).toISOString()
  })
  t.equal(row!.secret, secret, 'stored to sign with')
  t.equal(row!.company_id, erin.company_id)
  t.equal(row!.created_by, erin.id)

  const one = await admin.create({ url: 'https://hooks.example.com/renames', events: ['project.renamed'] })
  t.equal(one.statusCode, 200)
  t.same(one.json().webhook.events, ['project.renamed'])
  t.equal(one.json().webhook.description, '')
  t.not(one.json().secret, secret, 'each endpoint its own secret')

  const listed = await admin.list()
  t.equal(listed.statusCode, 200)
  t.same(listed.json().webhooks.map((w: { url: string }) => w.url), ['https://hooks.example.com/projects', 'https://hooks.example.com/renames'], 'oldest first')
  t.notMatch(listed.body, /whsec_/, 'never a secret')
  t.notMatch(listed.body, secret.slice(6), 'never a secret')
})

t.test('only admins: anyone else 403 forbidden; read-only tokens 403 read_only_token on the POSTs; nothing written', async (t) => {
  await reset()
  const made = (await admin.create({ url: 'https://hooks.example.com/a' })).json().webhook
  const before = await webhookRows()
  for (const caller of [api(write('alice@acme.test')), api(write('dave@globex.test'))]) {
    for (const res of [
      await caller.create({ url: 'https://hooks.example.com/b' }),
      await caller.list(),
      await caller.delete({ id: made.id }),
      await caller.rotate({ id: made.id }),
      await caller.deliveries({ webhook_id: made.id }),
      await caller.deliveries({ webhook_id: 'nonsense' })
    ]) {
      t.equal(res.statusCode, 403, res.body)
      t.equal(res.json().code, 'forbidden')
    }
  }
  const ro = api(readOnly('erin@acme.test'))
  for (const res of [await ro.create({ url: 'https://hooks.example.com/b' }), await ro.delete({ id: made.id }), await ro.rotate({ id: made.id })]) {
    t.equal(res.statusCode, 403)
    t.equal(res.json().code, 'read_only_token')
  }
  t.equal((await ro.list()).statusCode, 200, 'an admin reads with a read-only token')
  t.equal((await ro.deliveries({ webhook_id: made.id })).statusCode, 200)
  t.same(await webhookRows(), before, 'nothing written')
  const anonymous = await app.inject({ method: 'GET', url: `${W}/list` })
  t.equal(anonymous.statusCode, 401)
})

t.test('a target must be https on a public address: 400 pointing at url, nothing written', async (t) => {
  await reset()
  const refused = [
    'http://hooks.example.com/', 'ftp://hooks.example.com/', 'hooks.example.com', '', 'https://', 'https://user:pw@hooks.example.com/',
    'https://127.0.0.1/', 'https://127.1.2.3:8443/x', 'https://localhost/', 'https://api.localhost/', 'https://0.0.0.0/',
    'https://10.0.0.1/', 'https://172.16.5.4/', 'https://192.168.1.1/', 'https://169.254.169.254/latest/meta-data/',
    'https://100.100.100.200/', 'https://224.0.0.1/', 'https://255.255.255.255/', 'https://192.0.2.1/',
    'https://[::1]/', 'https://[::]/', 'https://[fe80::1]/', 'https://[fd00:ec2::254]/', 'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:169.254.169.254]/', 'https://[::127.0.0.1]/', 'https://[64:ff9b::a00:1]/', 'https://[2002:7f00:1::]/',
    'https://2130706433/', 'https://0x7f.1/', 'https://017700000001/',
    'https://' + 'a'.repeat(2100) + '.com/'
  ]
  for (const url of refused) {
    const res = await admin.create({ url })
    t.equal(res.statusCode, 400, `${url.slice(0, 60)}: ${res.body}`)
    t.equal(res.json().details?.[0]?.path, '/url', url.slice(0, 60))
  }
  t.same(await webhookRows(), [], 'nothing written')
  for (const url of ['https://8.8.8.8/hook', 'https://[2606:4700:4700::1111]/hook', 'https://hooks.example.com:8443/a?b=c']) {
    t.equal((await admin.create({ url })).statusCode, 200, url)
  }
})

t.test('a target\'s host is judged normalised (case, one trailing dot, IDN), and port 0 is 400 naming url', async (t) => {
  await reset()
  const refusedAs = async (url: string, message: RegExp) => {
    const res = await admin.create({ url })
    t.equal(res.statusCode, 400, `${url}: ${res.body}`)
    t.match(res.json(), { code: 'invalid_input', message, details: [{ path: '/url' }] }, url)
  }
  for (const url of ['https://localhost./', 'https://LOCALHOST./x', 'https://api.localhost./', 'https://\u24dbocalhost\u3002/']) {
    await refusedAs(url, /^url must be a public host, not localhost$/)
  }
  for (const url of ['https://localhost../', 'https://.localhost/', 'https://hooks..example.com/']) {
    await refusedAs(url, /^url must name a valid host \(a label is empty\)$/)
  }
  await refusedAs('https://127.0.0.1./', /^url must be a public address/)
  for (const url of ['https://example.com:0/', 'https://hooks.example.com:0/hook', 'https://8.8.8.8:0/']) {
    await refusedAs(url, /^url must not use port 0$/)
  }

  // A name the hosts file maps to a private address resolves only without its dot
  // (the resolver looks the dotted form up in DNS, where it is not): as
  // getaddrinfo answers for /etc/hosts, for a name of this test's own.
  const lookup = dns.promises.lookup
  const hostsFile: Record<string, string> = { 'intranet.hosts.test': '10.20.30.40' }
  Reflect.set(dns.promises, 'lookup', async (name: string, options: object) => {
    const address = hostsFile[name]
    if (address !== undefined) return [{ address, family: 4 }]
    if (name.includes('hosts.test')) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' })
    return await lookup(name, options as never)
  })
  try {
    await refusedAs('https://intranet.hosts.test/', /^url resolves to 10\.20\.30\.40, which is not a public address$/)
    await refusedAs('https://intranet.hosts.test./', /^url resolves to 10\.20\.30\.40, which is not a public address$/)
    await refusedAs('https://INTRANET.Hosts.Test./', /^url resolves to 10\.20\.30\.40, which is not a public address$/)
  } finally {
    Reflect.set(dns.promises, 'lookup', lookup)
  }
  // And the machine's own hosts file, for every name in it that is not public.
  for (const name of await privateHostsFileNames()) {
    await refusedAs(`https://${name}./`, /^url (resolves to .*, which is not a public address|must be a public host, not localhost)$/)
  }
  t.same(await webhookRows(), [], 'nothing written')

  // A public name keeps its absolute form as given: it is only judged without the dot.
  const dotted = await admin.create({ url: 'https://hooks.example.com./a' })
  t.equal(dotted.statusCode, 200, dotted.body)
  t.equal(dotted.json().webhook.url, 'https://hooks.example.com./a')
})

/** Names /etc/hosts maps to addresses that are not public, that resolve so (none where there is no such file). */
async function privateHostsFileNames (): Promise<string[]> {
  let text = ''
  try { text = await readFile('/etc/hosts', 'utf8') } catch { return [] }
  const names = new Set<string>()
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/)
    if (address === undefined || aliases.length === 0 || !ipaddr.isValid(address) || isPublicAddress(address)) continue
    for (const name of aliases) if (/^[a-z0-9.-]+$/i.test(name) && !name.endsWith('.')) names.add(name.toLowerCase())
  }
  const resolving = []
  for (const name of names) {
    const addresses = await dns.promises.lookup(name, { all: true }).catch(() => [])
    if (addresses.length > 0 && addresses.every((a) => !isPublicAddress(a.address))) resolving.push(name)
  }
  return resolving
}

t.test('events and description are checked; unknown fields are 400', async (t) => {
  await reset()
  expectInvalidInput(t, await admin.create({ url: 'https://hooks.example.com/', events: ['project.exploded'] }), '/events/0',
    `events.0 must be one of ${WEBHOOK_EVENTS.map((e) => JSON.stringify(e)).join(', ')}`)
  expectInvalidInput(t, await admin.create({ url: 'https://hooks.example.com/', events: [] }), '/events', 'events must not be empty')
  expectInvalidInput(t, await admin.create({ url: 'https://hooks.example.com/', events: ['project.renamed', 'project.renamed'] }), '/events',
    'events must not hold the same item twice (items 0 and 1 are the same)')
  expectInvalidInput(t, await admin.create({ url: 'https://hooks.example.com/', events: 'project.renamed' }), '/events', 'events must be an array')
  expectInvalidInput(t, await admin.create({ url: 'https://hooks.example.com/', description: 'x'.repeat(501) }), '/description', 'description must be at most 500 characters')
  // A lone surrogate would be stored as U+FFFD: refused, as in a project's name.
  for (const description of ['\ud800', 'team \udc00 chat']) {
    expectInvalidInput(t, await admin.create({ url: 'https://hooks.example.com/', description }), '/description')
  }
  expectInvalidInput(t, await admin.create({ url: 'https://hooks.example.com/', secret: 'whsec_mine' }), '/secret')
  expectInvalidInput(t, await admin.create({}), '/url')
  expectInvalidInput(t, await admin.delete({}), '/id')
  expectInvalidInput(t, await admin.delete({ id: ' ' }), '/id')
  expectInvalidInput(t, await admin.deliveries({}), '/webhook_id')
  t.same(await webhookRows(), [])
})

t.test('private targets are allowed only when WEBHOOKS_ALLOW_PRIVATE_TARGETS is on', async (t) => {
  const { app: open, db: openDb } = await build(t, { env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } })
  const demo2 = await loadDemo(openDb)
  const headers = { authorization: `Bearer ${demo2.tokens['erin@acme.test']!.write}` }
  for (const url of ['http://127.0.0.1:9999/hook', 'https://localhost/hook', 'http://10.0.0.1/']) {
    const res = await open.inject({ method: 'POST', url: `${W}/create`, headers, payload: { url } })
    t.equal(res.statusCode, 200, url)
  }
  const ftp = await open.inject({ method: 'POST', url: `${W}/create`, headers, payload: { url: 'ftp://127.0.0.1/' } })
  t.equal(ftp.statusCode, 400, 'still http or https')
})

t.test('delete and rotate_secret: the company\'s own only; others and unknown ids are one 404', async (t) => {
  await reset()
  const ours = (await admin.create({ url: 'https://hooks.example.com/ours' })).json()
  const theirs = (await api(globexToken).create({ url: 'https://hooks.example.com/theirs' })).json()
  for (const id of [theirs.webhook.id, shortId('00000000-0000-4000-8000-000000000000'), 'not-an-id']) {
    for (const res of [await admin.delete({ id }), await admin.rotate({ id }), await admin.deliveries({ webhook_id: id })]) {
      t.equal(res.statusCode, 404, res.body)
      t.same(res.json(), { statusCode: 404, error: 'Not Found', code: 'not_found', message: 'webhook not found' })
    }
  }
  t.equal((await webhookRows()).length, 2, 'nothing deleted')

  const before = await db.selectFrom('webhooks').selectAll().where('url', '=', 'https://hooks.example.com/ours').executeTakeFirstOrThrow()
  const rotated = await admin.rotate({ id: ours.webhook.id })
  t.equal(rotated.statusCode, 200)
  t.same(rotated.json().webhook, ours.webhook, 'the same endpoint')
  t.not(rotated.json().secret, ours.secret, 'a new secret')
  const after = await db.selectFrom('webhooks').selectAll().where('id', '=', before.id).executeTakeFirstOrThrow()
  t.equal(after.secret, rotated.json().secret)
  t.equal(after.previous_secret, ours.secret, 'the old one still signs')
  const hours = (new Date(after.previous_secret_expires_at!).getTime() - Date.now()) / 3_600_000
  t.ok(hours > 23.9 && hours <= 24, `for 24 hours (${hours.toFixed(3)})`)

  t.same((await admin.delete({ id: ours.webhook.id })).json(), {})
  t.same((await webhookRows()).map((w) => w.url), ['https://hooks.example.com/theirs'], 'ours gone, theirs kept')
  t.equal((await admin.delete({ id: ours.webhook.id })).statusCode, 404, 'deleting again: 404')
})

t.test('a change writes one delivery and one job per subscribed, enabled endpoint of its company, in its statement', async (t) => {
  await reset()
  const all = (await admin.create({ url: 'https://hooks.example.com/all' })).json().webhook
  const renames = (await admin.create({ url: 'https://hooks.example.com/renames', events: ['project.renamed'] })).json().webhook
  const descriptions = (await admin.create({ url: 'https://hooks.example.com/descriptions', events: ['project.description_changed'] })).json().webhook
  const disabled = (await admin.create({ url: 'https://hooks.example.com/disabled' })).json().webhook
  await db.updateTable('webhooks').set({ enabled: false, disabled_reason: 'the endpoint answered 410 Gone', disabled_at: new Date() })
    .where('url', '=', 'https://hooks.example.com/disabled').execute()
  await api(globexToken).create({ url: 'https://hooks.example.com/globex' })
  const alices = api(write('alice@acme.test'))

  const renamed = await alices.rename('Website Redesign, webhooks')
  t.equal(renamed.statusCode, 200, renamed.body)
  const activity = await db.selectFrom('activities').select(['id', 'inserted_at']).where('action', '=', 'project_renamed').orderBy('inserted_at', 'desc').executeTakeFirstOrThrow()
  let deliveries = await deliveryRows()
  const urlOf = new Map((await webhookRows()).map((w) => [w.id, w.url]))
  t.same(deliveries.map((d) => urlOf.get(d.webhook_id)).sort(), ['https://hooks.example.com/all', 'https://hooks.example.com/renames'])
  for (const d of deliveries) {
    t.equal(d.event_id, activity.id, 'the event is the activity')
    t.equal(d.event_type, 'project.renamed')
    t.equal(d.status, 'pending')
    t.equal(d.attempts, 0)
    t.match(d.payload, {
      type: 'project.renamed',
      data: {
        project: { id: (await db.selectFrom('projects').select('id').where('name', '=', 'Website Redesign, webhooks').executeTakeFirstOrThrow()).id, name: 'Website Redesign, webhooks' },
        company: { id: alice.company_id, name: 'Acme' },
        actor: { id: alice.id, full_name: 'Alice Johnson' },
        change: { old_name: 'Website Redesign', new_name: 'Website Redesign, webhooks' }
      }
    })
  }
  let jobs = await jobRows()
  t.same(jobs.map((j) => j.data).sort((a, b) => a.delivery_id.localeCompare(b.delivery_id)),
    deliveries.map((d) => ({ delivery_id: d.id, attempt: 1 })).sort((a, b) => a.delivery_id.localeCompare(b.delivery_id)), 'a job for each, attempt 1')

  // Nothing for a change that changes nothing, one that is refused, or one on a missing project.
  t.equal((await alices.rename('Website Redesign, webhooks')).statusCode, 200)
  t.equal((await api(write('dave@globex.test')).rename('Not theirs')).statusCode, 404)
  t.equal((await api(readOnly('alice@acme.test')).rename('Read only')).statusCode, 403)
  t.equal((await deliveryRows()).length, 2, 'no delivery for them')
  t.equal((await jobRows()).length, 2, 'nor a job')

  const described = await alices.describe(JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Now with hooks' }] }] }))
  t.equal(described.statusCode, 200)
  deliveries = await deliveryRows()
  const latest = deliveries.slice(2)
  t.same(latest.map((d) => urlOf.get(d.webhook_id)).sort(), ['https://hooks.example.com/all', 'https://hooks.example.com/descriptions'])
  for (const d of latest) {
    t.equal(d.event_type, 'project.description_changed')
    t.match(d.payload, { data: { change: { description: described.json().project.description, description_omitted: false } } })
  }
  jobs = await jobRows()
  t.equal(jobs.length, 4)

  // The deliveries operation shows them, newest first, the event id as the receiver gets it.
  const shown = await admin.deliveries({ webhook_id: all.id })
  t.equal(shown.statusCode, 200)
  t.match(shown.json().deliveries, [
    { event_type: 'project.description_changed', status: 'pending', attempts: 0, last_status_code: null, last_error: null, delivered_at: null },
    { event_id: shortId(activity.id), event_type: 'project.renamed', status: 'pending', attempts: 0 }
  ])
  t.equal(shown.json().deliveries.length, 2)
  t.equal((await admin.deliveries({ webhook_id: all.id, limit: '1' })).json().deliveries.length, 1, 'limit')
  expectInvalidInput(t, await admin.deliveries({ webhook_id: all.id, limit: '0' }), '/limit')
  expectInvalidInput(t, await admin.deliveries({ webhook_id: all.id, limit: '101' }), '/limit')
  t.same((await admin.deliveries({ webhook_id: disabled.id })).json(), { deliveries: [], stranded: 0 }, 'a disabled endpoint gets none')
  t.equal(shown.json().stranded, 0, 'each pending delivery has its job: none stranded')
  t.equal((await admin.deliveries({ webhook_id: renames.id })).json().deliveries.length, 1)
  t.equal((await admin.deliveries({ webhook_id: descriptions.id })).json().deliveries.length, 1)

  // A deleted endpoint takes its deliveries with it.
  await admin.delete({ id: all.id })
  t.equal((await deliveryRows()).length, 2)
})

t.test('a description over 64 KiB goes without its text, flagged', async (t) => {
  await reset()
  await admin.create({ url: 'https://hooks.example.com/all' })
  const long = JSON.stringify('x'.repeat(70_000))
  t.equal((await api(write('alice@acme.test')).describe(long)).statusCode, 200)
  const [d] = await deliveryRows()
  t.same(d!.payload.data, { ...(d!.payload.data as object), change: { description: null, description_omitted: true, description_bytes: Buffer.byteLength(long) } })
})

t.test(`a company has at most 20 endpoints`, async (t) => {
  await reset()
  for (let i = 0; i < 20; i++) t.equal((await admin.create({ url: `https://hooks.example.com/${i}` })).statusCode, 200)
  const full = await admin.create({ url: 'https://hooks.example.com/21' })
  t.equal(full.statusCode, 400)
  t.match(full.json().message, /20 webhooks already/)
  t.equal((await webhookRows()).length, 20)
  t.equal((await api(globexToken).create({ url: 'https://hooks.example.com/globex' })).statusCode, 200, 'another company has its own')
})

t.test('a save refused by If-Match (412) writes no delivery nor job; the same save with the current tag does', async (t) => {
  await reset()
  await admin.create({ url: 'https://hooks.example.com/all' })
  const headers = { authorization: `Bearer ${write('alice@acme.test')}` }
  const read = await app.inject({ method: 'GET', url: `${P}/get`, query: { id: website }, headers })
  const tag = read.headers.etag as string
  t.match(tag, /^"[^"]+"$/, 'a strong tag')
  t.equal((await api(write('carol@acme.test')).rename('Website Redesign, meanwhile')).statusCode, 200, "someone else's edit")
  t.equal((await deliveryRows()).length, 1)
  const stale = await app.inject({ method: 'POST', url: `${P}/update_name`, headers: { ...headers, 'if-match': tag }, payload: { project_id: website, name: 'Lost edit' } })
  t.equal(stale.statusCode, 412, stale.body)
  t.equal((await deliveryRows()).length, 1, 'no delivery for the refused save')
  t.equal((await jobRows()).length, 1, 'nor a job')
  const current = await app.inject({ method: 'POST', url: `${P}/update_name`, headers: { ...headers, 'if-match': stale.headers.etag as string }, payload: { project_id: website, name: 'Kept edit' } })
  t.equal(current.statusCode, 200, current.body)
  t.equal((await deliveryRows()).length, 2)
  t.equal((await jobRows()).length, 2)
})
