// The operator CLI against a database of this file's own (test/operator-cli.ts): its
// command lines run in this process, and a few as child processes, exactly as an
// operator runs them, for the entry point, the exit codes and the streams.
import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import t from './tap.js'
import { decodeId } from '../src/ids.js'
import { cliDatabase, runInProcess } from './operator-cli.js'

// A few command lines run as child processes, each loading the database stack (and on
// PGlite starting the embedded PostgreSQL): more than the default budget of a file on a busy machine.
t.setTimeout(300_000)

const { cli, spawn, withDb, server, env } = await cliDatabase(t, 'cli-test')
/** The variables of a command line that must not open the database: one that cannot be reached. */
const unreachable = { ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/never-opened', DATA_DIR: '' }

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex')

const DEMO_EMAILS = ['alice@acme.test', 'bob@acme.test', 'carol@acme.test', 'erin@acme.test', 'dave@globex.test']
const DEMO_PROJECTS = ['Website Redesign', 'Internal Tools', 'Globex Launch']
const LISTING_KEYS = ['email', 'expires_at', 'id', 'inserted_at', 'last_used_at', 'name', 'read_only', 'revoked_at']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

interface SeedOutput {
  projects: Record<string, string>
  tokens: Record<string, { write: string, read_only: string }>
}

function allTokens (seed: SeedOutput): string[] {
  return Object.values(seed.tokens).flatMap((pair) => [pair.write, pair.read_only])
}

// The command lines share one database, so the subtests run in order and build on each other.
let first: SeedOutput
let second: SeedOutput
const issued: string[] = []
let ciTokenId: string

t.test('bad usage exits 2 with one message on stderr, before touching the database', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['tokens', 'create'], /needs --email/],
    [['tokens', 'create', '--email', 'alice@acme.test', '--expires-in', '-3'], /--expires-in/],
    [['tokens', 'create', '--email', 'alice@acme.test', '--expires-in=-3'], /--expires-in must be a positive number/],
    [['tokens', 'list', '--bogus'], /--bogus/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['tokens', 'revoke', 'not-a-uuid'], /not-a-uuid/],
    [['seed'], /--demo/],
    [[], /no command/]
  ]
  // Given a database that cannot be reached, they still exit 2: none of them opens it.
  const runs = await Promise.all(cases.map(([args]) => runInProcess(args, unreachable)))
  cases.forEach(([args, message], i) => {
    const run = runs[i]!
    t.equal(run.code, 2, `${args.join(' ') || '(none)'} exits 2`)
    t.match(run.stderr, message, `${args.join(' ') || '(none)'} says why`)
    t.equal(run.stdout, '', `${args.join(' ') || '(none)'} prints nothing to stdout`)
  })
  t.match(runs.at(-1)!.stderr, /Usage:/, 'no command shows the usage on stderr')

  const help = await runInProcess(['help'], unreachable)
  t.equal(help.code, 0)
  t.match(help.stdout, /Usage:[\s\S]*tokens revoke[\s\S]*one process at a time/)
  t.equal(help.stderr, '')
})

t.test('migrate applies the migrations', async (t) => {
  const run = await cli('migrate')
  t.equal(run.code, 0, run.stderr)
  // The server database comes migrated from createTestDatabase; the PGlite files do not.
  t.match(run.stdout, server ? /up to date/ : /applied 20261122000000_initial/)
})

t.test('seed --demo --json loads the dataset and prints one JSON object', async (t) => {
  const run = await cli('seed', '--demo', '--json')
  t.equal(run.code, 0, run.stderr)
  first = JSON.parse(run.stdout)
  t.same(Object.keys(first).sort(), ['projects', 'tokens'])
  t.same(Object.keys(first.projects).sort(), [...DEMO_PROJECTS].sort())
  t.match(first.projects['Website Redesign'], /^website-redesign-[0-9A-Za-z]{22}$/)
  t.same(Object.keys(first.tokens).sort(), [...DEMO_EMAILS].sort())
  for (const [email, pair] of Object.entries(first.tokens)) {
    t.same(Object.keys(pair).sort(), ['read_only', 'write'], email)
    t.match(pair.write, /^pat_/, `${email} write`)
    t.match(pair.read_only, /^pat_/, `${email} read-only`)
  }
  t.equal(new Set(allTokens(first)).size, 10, 'every token is distinct')
})

t.test('seeding again duplicates nothing and issues new tokens', async (t) => {
  const run = await cli('seed', '--demo', '--json')
  t.equal(run.code, 0, run.stderr)
  second = JSON.parse(run.stdout)
  t.same(second.projects, first.projects, 'same project ids')
  t.equal(new Set([...allTokens(first), ...allTokens(second)]).size, 20, 'new tokens')

  await withDb(async (db) => {
    const count = async (table: 'companies' | 'people' | 'projects' | 'project_milestones' | 'api_tokens') =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n)
    t.equal(await count('companies'), 2)
    t.equal(await count('people'), 5)
    t.equal(await count('projects'), 3)
    t.equal(await count('project_milestones'), 4)
    t.equal(await count('api_tokens'), 20)

    // Only digests are stored: no column of any token row holds a clear token.
    const rows = await db.selectFrom('api_tokens')
      .select(['read_only', 'name', sql<string>`encode(digest, 'hex')`.as('digest'), sql<string>`api_tokens::text`.as('row')])
      .execute()
    const digests = new Set(rows.map((r) => r.digest))
    for (const token of [...allTokens(first), ...allTokens(second)]) {
      t.ok(digests.has(sha256(token)), 'the digest of the token is stored')
      t.notOk(rows.some((r) => r.row.includes(token) || r.row.includes(token.slice(4))), 'the token is not')
    }
    t.equal(rows.filter((r) => r.read_only).length, 10)
    t.ok(rows.every((r) => r.name === (r.read_only ? 'demo read-only' : 'demo write')))
  })
})

t.test('tokens create, list and revoke', async (t) => {
  const before = Date.now()
  const created = await cli('tokens', 'create', '--email', 'alice@acme.test', '--read-only', '--name', 'ci', '--expires-in', '1', '--json')
  t.equal(created.code, 0, created.stderr)
  const token = JSON.parse(created.stdout)
  t.same(Object.keys(token).sort(), ['email', 'expires_at', 'id', 'name', 'read_only', 'token'])
  t.match(token, { email: 'alice@acme.test', name: 'ci', read_only: true, id: UUID, token: /^pat_/ })
  const expires = Date.parse(token.expires_at)
  t.ok(expires >= before + 86_400_000 && expires <= Date.now() + 86_400_000, 'expires in one day')
  ciTokenId = token.id
  issued.push(...allTokens(first), ...allTokens(second), token.token)

  const list = await cli('tokens', 'list', '--json')
  t.equal(list.code, 0, list.stderr)
  t.notOk(list.stdout.includes('pat_'), 'no secret in the listing')
  t.notOk(issued.some((s) => list.stdout.includes(s.slice(4))))
  const listing = JSON.parse(list.stdout) as Array<Record<string, unknown>>
  t.equal(listing.length, 21)
  for (const row of listing) t.same(Object.keys(row).sort(), LISTING_KEYS)
  t.match(listing.find((r) => r.id === ciTokenId), {
    email: 'alice@acme.test', name: 'ci', read_only: true, expires_at: token.expires_at, revoked_at: null, last_used_at: null
  })

  const bob = await cli('tokens', 'list', '--email', 'bob@acme.test', '--json')
  t.equal(bob.code, 0, bob.stderr)
  const bobs = JSON.parse(bob.stdout) as Array<Record<string, unknown>>
  t.equal(bobs.length, 4, 'two seeds, a write and a read-only token each')
  t.ok(bobs.every((r) => r.email === 'bob@acme.test'))

  const table = await cli('tokens', 'list', '--email', 'alice@acme.test')
  t.equal(table.code, 0, table.stderr)
  t.match(table.stdout, /^ID\s+EMAIL\s+NAME/)
  t.match(table.stdout, new RegExp(`${ciTokenId}\\s+alice@acme.test\\s+ci\\s+read-only\\s+active`))
  t.notOk(table.stdout.includes('pat_'))

  const revoked = await cli('tokens', 'revoke', ciTokenId)
  t.equal(revoked.code, 0, revoked.stderr)
  t.match(revoked.stdout, ciTokenId)
  await withDb(async (db) => {
    const row = await db.selectFrom('api_tokens').select(['revoked_at']).where('id', '=', ciTokenId).executeTakeFirstOrThrow()
    t.type(row.revoked_at, Date, 'revoked_at is set')
    const others = await db.selectFrom('api_tokens').select('id').where('revoked_at', 'is not', null).execute()
    t.equal(others.length, 1, 'no other token is revoked')
  })

  const again = await cli('tokens', 'revoke', ciTokenId)
  t.equal(again.code, 1)
  t.match(again.stderr, /already revoked/)
  t.equal(again.stdout, '')
})

t.test('an unknown e-mail fails with exit 1', async (t) => {
  const run = await cli('tokens', 'create', '--email', 'nobody@acme.test')
  t.equal(run.code, 1)
  t.match(run.stderr, /no person with e-mail nobody@acme.test/)
  t.notMatch(run.stderr, /\n\s+at /, 'no stack')
  t.equal(run.stdout, '')
})

t.test('seed keys projects by their demo names after a rename', async (t) => {
  const uuid = decodeId(first.projects['Website Redesign']!)!
  await withDb((db) => db.updateTable('projects').set({ name: 'Renamed' }).where('id', '=', uuid).execute())

  const run = await cli('seed', '--demo', '--json')
  t.equal(run.code, 0, run.stderr)
  const third = JSON.parse(run.stdout) as SeedOutput
  const id = third.projects['Website Redesign']!
  t.match(id, /^renamed-[0-9A-Za-z]{22}$/)
  t.equal(decodeId(id), uuid, 'same project')
  t.equal(third.projects['Internal Tools'], first.projects['Internal Tools'])
  t.equal(third.projects['Globex Launch'], first.projects['Globex Launch'])
  await withDb(async (db) => {
    const names = await db.selectFrom('projects').select('name').orderBy('name').execute()
    t.same(names.map((r) => r.name), ['Globex Launch', 'Internal Tools', 'Renamed'], 'nothing inserted')
  })
})

t.test('webhooks create, list, deliveries and delete act as a company admin, under the API\'s rules', async (t) => {
  // The demo's people, unless the tests before (which this one follows) seeded them.
  if (first === undefined) t.equal((await cli('seed', '--demo')).code, 0, 'seeded')
  const refusedUsage = await cli('webhooks', 'create', '--email', 'erin@acme.test', '--url', 'https://hooks.example.com/a', '--events', 'project.exploded')
  t.equal(refusedUsage.code, 2, 'an unknown event is bad usage')
  t.match(refusedUsage.stderr, /--events takes project.renamed and\/or project.description_changed and\/or project.created.*not 'project.exploded'/)
  const notAdmin = await cli('webhooks', 'list', '--email', 'alice@acme.test')
  t.equal(notAdmin.code, 1)
  t.match(notAdmin.stderr, /alice@acme.test is not an admin/)
  const privateTarget = await cli('webhooks', 'create', '--email', 'erin@acme.test', '--url', 'https://169.254.169.254/latest')
  t.equal(privateTarget.code, 1)
  t.match(privateTarget.stderr, /--url must be a public address/)

  const created = await cli('webhooks', 'create', '--email', 'erin@acme.test', '--url', 'https://hooks.example.com/a', '--events', 'project.renamed', '--description', 'Chat', '--json')
  t.equal(created.code, 0, created.stderr)
  const { webhook, secret } = JSON.parse(created.stdout)
  t.match(secret, /^whsec_/)
  t.match(webhook, { url: 'https://hooks.example.com/a', events: ['project.renamed'], description: 'Chat', enabled: true })
  const stored = await withDb((db) => db.selectFrom('webhooks').select(['secret', 'url']).execute())
  t.same(stored, [{ secret, url: 'https://hooks.example.com/a' }], 'the row, with the secret shown')

  const listed = await cli('webhooks', 'list', '--email', 'erin@acme.test')
  t.equal(listed.code, 0)
  t.match(listed.stdout, new RegExp(`${webhook.id}\\s+https://hooks.example.com/a\\s+project.renamed\\s+yes`))
  t.notMatch(listed.stdout, /whsec_/, 'never a secret')

  const none = await cli('webhooks', 'deliveries', '--email', 'erin@acme.test', webhook.id, '--json')
  t.equal(none.code, 0)
  t.same(JSON.parse(none.stdout), [])
  t.equal((await cli('webhooks', 'deliveries', '--email', 'dave@globex.test', webhook.id)).code, 1, "another company's admin, or not an admin: refused")

  const deleted = await cli('webhooks', 'delete', '--email', 'erin@acme.test', webhook.id)
  t.equal(deleted.code, 0)
  t.equal(deleted.stdout.trim(), `deleted webhook ${webhook.id}`)
  const again = await cli('webhooks', 'delete', '--email', 'erin@acme.test', webhook.id)
  t.equal(again.code, 1)
  t.match(again.stderr, /no webhook/)
  t.same(await withDb((db) => db.selectFrom('webhooks').select('id').execute()), [])
})

t.test('as an operator runs it: exit codes, stdout and stderr of a child process', async (t) => {
  const [usage, help] = await Promise.all([spawn('tokens', 'create'), spawn('help')])
  t.equal(usage.code, 2)
  t.match(usage.stderr, /needs --email[\s\S]*npm run cli -- help/)
  t.equal(usage.stdout, '')
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: npm run cli -- <command>/)
  t.equal(help.stderr, '')
  const listed = await spawn('tokens', 'list', '--email', 'erin@acme.test', '--json')
  t.equal(listed.code, 0, listed.stderr)
  t.ok(JSON.parse(listed.stdout).length > 0, 'the tokens the demo issued, as JSON on stdout')
  const failed = await spawn('tokens', 'create', '--email', 'nobody@acme.test')
  t.equal(failed.code, 1)
  t.match(failed.stderr, /^error: no person with e-mail nobody@acme.test\n$/)
  t.equal(failed.stdout, '')
})
