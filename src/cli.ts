// Operator commands: `npm run cli -- <command>`. Results go to stdout, progress and
// errors to stderr, so `--json` output can be piped. Exit codes: 0 done, 1 failed,
// 2 bad usage or configuration.
//
// The database stack (Kysely, pg, TypeBox) takes about a second to load, so it is
// imported only once the command line is known to be good: help and usage errors
// answer at once.
import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { Config } from './config.js'
import type { Db } from './db/index.js'
import type { TokenListing } from './auth/tokens.js'
import type { Managed } from './webhooks/query.js'
import { redactPasswords } from './http/redact.js'
import { describeError } from './errors.js'
import { isUuid } from './ids.js'
import { MAX_EXPIRY_DAYS } from './auth/token-format.js'

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  migrate                        apply pending database migrations
  seed --demo [--json]           load the demo dataset (once) and issue a fresh write and
                                 read-only token for every demo person
  tokens create --email <email> [--read-only] [--name <name>] [--expires-in <days>] [--json]
                                 issue an API token; it is shown once, here
  tokens list [--email <email>] [--json]
                                 list tokens (never their secrets)
  tokens revoke <token id>       revoke a token by its id (a UUID)
  webhooks create --email <admin email> --url <url> [--events <event,...>] [--description <text>] [--json]
                                 register a webhook endpoint for the admin's company; its
                                 signing secret is shown once, here
  webhooks list --email <admin email> [--json]
                                 the company's endpoints (never their secrets)
  webhooks delete --email <admin email> <webhook id>
                                 delete an endpoint and its deliveries
  webhooks deliveries --email <admin email> <webhook id> [--limit <n>] [--json]
                                 an endpoint's latest deliveries, newest first
  openapi [file]                 write the OpenAPI document to file (stdout without one);
                                 needs no database
  help                           show this text

The database comes from the environment: DATABASE_URL (PostgreSQL), or else the
embedded database under DATA_DIR (default ./.data). The embedded database can be
opened by one process at a time: stop the server before running a command on it.
`

const HINT = 'Run "npm run cli -- help" for usage.'

class UsageError extends Error {}

/** A command that fails for a reason the operator should read, without a stack. */
class CommandError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>
type Output = (text: string) => void

const out: Output = (text) => { process.stdout.write(text + '\n') }
const log: Output = (text) => { process.stderr.write(text + '\n') }

function parse<O extends Options> (args: string[], options: O, positionals = 0) {
  let parsed
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: positionals > 0 })
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
      throw new UsageError((error as Error).message.replace(/\s*\n\s*/g, ' '))
    }
    throw error
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument '${parsed.positionals[positionals]}'`)
  }
  return parsed
}

function expiryDays (value: string | undefined): number | null {
  if (value === undefined) return null
  const days = Number(value)
  if (!/^\s*(\d+\.?\d*|\.\d+)\s*$/.test(value) || !(days > 0) || days > MAX_EXPIRY_DAYS) {
    throw new UsageError(`--expires-in must be a positive number of days (at most ${MAX_EXPIRY_DAYS}), not '${value}'`)
  }
  return days
}

function nonBlank (flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === '') throw new UsageError(`${flag} must not be blank`)
  return value?.trim()
}

/** What a command line asks for; checked in full before any database is opened. */
type Command =
  | { kind: 'help' }
  | { kind: 'migrate' }
  | { kind: 'seed', json: boolean }
  | { kind: 'tokens create', email: string, readOnly: boolean, name: string | null, expiresInDays: number | null, json: boolean }
  | { kind: 'tokens list', email: string | undefined, json: boolean }
  | { kind: 'tokens revoke', id: string }
  | { kind: 'openapi', file: string | undefined }
  | { kind: 'webhooks create', email: string, url: string, events: string[] | null, description: string, json: boolean }
  | { kind: 'webhooks list', email: string, json: boolean }
  | { kind: 'webhooks delete', email: string, id: string }
  | { kind: 'webhooks deliveries', email: string, id: string, limit: number, json: boolean }

const WEBHOOK_EVENT_NAMES = ['project.renamed', 'project.description_changed',
  'project.created', 'project.start_date_changed', 'project.due_date_changed', 'project.goal_changed',
  'project.moved', 'project.deleted',
  'project.champion_changed', 'project.reviewer_changed',
  'project.contributor_added', 'project.contributor_updated', 'project.contributor_removed',
  'project.paused', 'project.resumed', 'project.closed']

/** `webhooks <sub>`: each acts as the company admin named by --email, under the API's rules. */
function parseWebhooks (rest: string[]): Command {
  const [sub, ...args] = rest
  const email = (values: { email?: string }): string => {
    const value = nonBlank('--email', values.email)
    if (value === undefined) throw new UsageError(`webhooks ${sub} needs --email <admin email>`)
    return value
  }
  const id = (positionals: string[]): string => {
    const value = positionals[0]
    if (value === undefined || value.trim() === '') throw new UsageError(`webhooks ${sub} needs a webhook id`)
    return value.trim()
  }
  if (sub === 'create') {
    const { values } = parse(args, { email: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' }, json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    const url = nonBlank('--url', values.url)
    if (url === undefined) throw new UsageError('webhooks create needs --url <url>')
    let events: string[] | null = null
    if (values.events !== undefined) {
      events = [...new Set(values.events.split(',').map((e) => e.trim()).filter(Boolean))]
      const unknown = events.find((e) => !WEBHOOK_EVENT_NAMES.includes(e))
      if (events.length === 0 || unknown !== undefined) throw new UsageError(`--events takes ${WEBHOOK_EVENT_NAMES.join(' and/or ')}, comma-separated${unknown ? `, not '${unknown}'` : ''}`)
    }
    return { kind: 'webhooks create', email: email(values), url, events, description: values.description ?? '', json: values.json ?? false }
  }
  if (sub === 'list') {
    const { values } = parse(args, { email: { type: 'string' }, json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    return { kind: 'webhooks list', email: email(values), json: values.json ?? false }
  }
  if (sub === 'delete') {
    const { values, positionals } = parse(args, { email: { type: 'string' } }, 1)
    if (values.help) return { kind: 'help' }
    return { kind: 'webhooks delete', email: email(values), id: id(positionals) }
  }
  if (sub === 'deliveries') {
    const { values, positionals } = parse(args, { email: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } }, 1)
    if (values.help) return { kind: 'help' }
    const limit = values.limit === undefined ? 50 : Number(values.limit)
    if (!/^\d+$/.test(values.limit ?? '50') || limit < 1 || limit > 100) throw new UsageError(`--limit must be from 1 to 100, not '${values.limit}'`)
    return { kind: 'webhooks deliveries', email: email(values), id: id(positionals), limit, json: values.json ?? false }
  }
  if (sub === undefined) throw new UsageError('webhooks needs a subcommand: create, list, delete or deliveries')
  throw new UsageError(`unknown webhooks subcommand '${sub}'`)
}

function parseCommand (argv: string[]): Command {
  const [name, ...rest] = argv
  if (name === undefined) throw new UsageError('no command given')
  if (name === 'help' || name === '--help' || name === '-h') {
    parse(rest, {})
    return { kind: 'help' }
  }

  if (name === 'migrate') {
    const { values } = parse(rest, {})
    return values.help ? { kind: 'help' } : { kind: 'migrate' }
  }

  if (name === 'seed') {
    const { values } = parse(rest, { demo: { type: 'boolean' }, json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    // The only dataset there is; the flag keeps `seed` from being run by accident.
    if (!values.demo) throw new UsageError('seed needs --demo')
    return { kind: 'seed', json: values.json ?? false }
  }

  if (name === 'tokens') {
    const [sub, ...args] = rest
    if (sub === 'create') {
      const { values } = parse(args, {
        email: { type: 'string' },
        'read-only': { type: 'boolean' },
        name: { type: 'string' },
        'expires-in': { type: 'string' },
        json: { type: 'boolean' }
      })
      if (values.help) return { kind: 'help' }
      const email = nonBlank('--email', values.email)
      if (email === undefined) throw new UsageError('tokens create needs --email <email>')
      return {
        kind: 'tokens create',
        email,
        readOnly: values['read-only'] ?? false,
        name: nonBlank('--name', values.name) ?? null,
        expiresInDays: expiryDays(values['expires-in']),
        json: values.json ?? false
      }
    }
    if (sub === 'list') {
      const { values } = parse(args, { email: { type: 'string' }, json: { type: 'boolean' } })
      if (values.help) return { kind: 'help' }
      return { kind: 'tokens list', email: nonBlank('--email', values.email), json: values.json ?? false }
    }
    if (sub === 'revoke') {
      const { values, positionals } = parse(args, {}, 1)
      if (values.help) return { kind: 'help' }
      const id = positionals[0]
      if (id === undefined) throw new UsageError('tokens revoke needs a token id')
      if (!isUuid(id)) throw new UsageError(`'${id}' is not a token id (a UUID, as tokens list shows)`)
      return { kind: 'tokens revoke', id: id.toLowerCase() }
    }
    if (sub === undefined) throw new UsageError('tokens needs a subcommand: create, list or revoke')
    throw new UsageError(`unknown tokens subcommand '${sub}'`)
  }

  if (name === 'webhooks') return parseWebhooks(rest)

  if (name === 'openapi') {
    const { values, positionals } = parse(rest, {}, 1)
    if (values.help) return { kind: 'help' }
    return { kind: 'openapi', file: positionals[0] }
  }

  if (name.startsWith('-')) throw new UsageError(`unknown option '${name}'`)
  throw new UsageError(`unknown command '${name}'`)
}

async function migrate (db: Db): Promise<void> {
  const { migrateToLatest } = await import('./db/migrate.js')
  const applied = await migrateToLatest(db)
  if (applied.length === 0) out('database is up to date')
  for (const migration of applied) out(`applied ${migration}`)
}

async function seed (db: Db, config: Config, json: boolean): Promise<void> {
  const [{ migrateToLatest }, { loadDemo }, { demoSummary }, { localBaseUrl }] = await Promise.all([
    import('./db/migrate.js'), import('./db/demo.js'), import('./presenters/demo.js'), import('./config.js')
  ])
  // Logs only: stdout carries the one JSON object.
  for (const migration of await migrateToLatest(db)) log(`applied ${migration}`)
  const demo = await loadDemo(db)
  const { projects, tokens } = demoSummary(demo)
  const created = demo.created
  log(created ? 'demo dataset loaded' : 'demo dataset already present: nothing inserted, new tokens issued')
  if (json) {
    out(JSON.stringify({ projects, tokens }, null, 2))
    return
  }
  out('Projects:')
  for (const [name, id] of Object.entries(projects)) out(`  ${name.padEnd(18)} ${id}`)
  out('\nTokens (shown once):')
  for (const [email, pair] of Object.entries(tokens)) {
    out(`  ${email.padEnd(18)} write      ${pair.write}`)
    out(`  ${''.padEnd(18)} read-only  ${pair.read_only}`)
  }
  const token = tokens['alice@acme.test']?.write
  const project = projects['Website Redesign']
  if (token && project) {
    const base = localBaseUrl(config)
    out('\nTry (with the server running):')
    out(`  curl -s -H 'Authorization: Bearer ${token}' '${base}/api/external/v1/projects/get?id=${project}'`)
  }
}

function tokenTable (tokens: TokenListing[]): string {
  const now = Date.now()
  const status = (t: TokenListing) => t.revoked_at !== null
    ? 'revoked'
    : t.expires_at !== null && Date.parse(t.expires_at) <= now ? 'expired' : 'active'
  const rows = [
    ['ID', 'EMAIL', 'NAME', 'ACCESS', 'STATUS', 'EXPIRES', 'LAST USED', 'CREATED'],
    ...tokens.map((t) => [
      t.id, t.email, t.name ?? '-', t.read_only ? 'read-only' : 'write', status(t),
      t.expires_at ?? 'never', t.last_used_at ?? 'never', t.inserted_at
    ])
  ]
  return table(rows[0]!, rows.slice(1))
}

/**
 * The document the server serves, from the app built as the server builds it. The
 * configuration is the defaults, not the environment, so that the document is the
 * same wherever it is generated; the database is never connected to.
 */
async function openapi (file: string | undefined): Promise<void> {
  const [{ default: Fastify }, { default: app, appOptions }, { loadConfig }, { createDb, dbOptions }, { writeFile }] = await Promise.all([
    import('fastify'), import('./app.js'), import('./config.js'), import('./db/index.js'), import('node:fs/promises')
  ])
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0' })
  const db = await createDb(dbOptions({ ...config, DATABASE_URL: 'postgres://never-connected.invalid/openapi' }))
  const server = Fastify(appOptions(config))
  try {
    await server.register(app, { db, config })
    await server.ready()
    const text = JSON.stringify(server.swagger(), null, 2) + '\n'
    if (file === undefined) process.stdout.write(text)
    else await writeFile(file, text)
  } finally {
    await server.close()
    await db.destroy()
  }
  if (file !== undefined) log(`wrote ${file}`)
}

async function run (command: Exclude<Command, { kind: 'help' } | { kind: 'openapi' }>, db: Db, config: Config): Promise<void> {
  const { createToken, listTokens, revokeToken, UnknownPersonError } = await import('./auth/tokens.js')
  switch (command.kind) {
    case 'migrate':
      return await migrate(db)
    case 'seed':
      return await seed(db, config, command.json)
    case 'tokens create': {
      let issued
      try {
        issued = await createToken(db, {
          email: command.email,
          readOnly: command.readOnly,
          name: command.name,
          expiresInDays: command.expiresInDays
        })
      } catch (error) {
        if (error instanceof UnknownPersonError) throw new CommandError(error.message)
        throw error
      }
      if (command.json) {
        out(JSON.stringify(issued, null, 2))
        return
      }
      out(issued.token)
      log(`issued ${issued.read_only ? 'read-only' : 'write'} token ${issued.id} for ${issued.email}` +
        `${issued.expires_at ? `, expires ${issued.expires_at}` : ''}; it is not shown again`)
      return
    }
    case 'tokens list': {
      const tokens = await listTokens(db, command.email)
      if (command.json) out(JSON.stringify(tokens, null, 2))
      else if (tokens.length === 0) log('no tokens')
      else out(tokenTable(tokens))
      return
    }
    case 'tokens revoke':
      if (!await revokeToken(db, command.id)) {
        throw new CommandError(`no active token with id ${command.id} (unknown or already revoked)`)
      }
      out(`revoked token ${command.id}`)
      return
    case 'webhooks create':
    case 'webhooks list':
    case 'webhooks delete':
    case 'webhooks deliveries':
      return await webhooksCommand(command, db, config)
  }
}

type WebhooksCommand = Extract<Command, { kind: `webhooks ${string}` }>

async function webhooksCommand (command: WebhooksCommand, db: Db, config: Config): Promise<void> {
  const [hooks, { toDelivery, toWebhook }, { checkWebhookUrl, TargetRefused }, { newWebhookSecret }, { decodeId }] = await Promise.all([
    import('./webhooks/query.js'), import('./webhooks/presenter.js'), import('./webhooks/targets.js'), import('./webhooks/secrets.js'), import('./ids.js')
  ])
  const person = await db.selectFrom('people').select('id').where('email', '=', command.email).executeTakeFirst()
  if (person === undefined) throw new CommandError(`no person with e-mail ${command.email}`)
  const done = <T>(result: Managed<T>): T => {
    if (result.outcome === 'forbidden') throw new CommandError(`${command.email} is not an admin of their company (or is suspended): only admins manage webhooks`)
    if (result.outcome === 'not_found') throw new CommandError(`no webhook ${'id' in command ? command.id : ''} in ${command.email}'s company`)
    if (result.outcome === 'full') throw new CommandError(`the company has ${hooks.WEBHOOKS_PER_COMPANY} webhooks already; delete one first`)
    return result.value
  }
  const webhookId = (id: string) => decodeId(id) ?? '00000000-0000-0000-0000-000000000000'
  switch (command.kind) {
    case 'webhooks create': {
      let url: URL
      try {
        url = await checkWebhookUrl(command.url, { allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS })
      } catch (error) {
        if (error instanceof TargetRefused) throw new CommandError(`--url ${error.message}`)
        throw error
      }
      const secret = newWebhookSecret()
      const webhook = toWebhook(done(await hooks.createWebhook(db, person.id, {
        url: url.href, events: (command.events ?? WEBHOOK_EVENT_NAMES) as never, description: command.description, secret
      })))
      if (command.json) {
        out(JSON.stringify({ webhook, secret }, null, 2))
        return
      }
      out(secret)
      log(`created webhook ${webhook.id} for ${webhook.url} (${webhook.events.join(', ')}); its signing secret is not shown again`)
      return
    }
    case 'webhooks list': {
      const webhooks = done(await hooks.listWebhooks(db, person.id)).map(toWebhook)
      if (command.json) out(JSON.stringify(webhooks, null, 2))
      else if (webhooks.length === 0) log('no webhooks')
      else out(table(['ID', 'URL', 'EVENTS', 'ENABLED', 'CREATED'], webhooks.map((w) => [w.id, w.url, w.events.join(','), w.enabled ? 'yes' : `no: ${w.disabled_reason ?? ''}`, w.inserted_at])))
      return
    }
    case 'webhooks delete':
      done(await hooks.deleteWebhook(db, person.id, webhookId(command.id)))
      out(`deleted webhook ${command.id}`)
      return
    case 'webhooks deliveries': {
      const listed = done(await hooks.listDeliveries(db, person.id, webhookId(command.id), command.limit))
      const deliveries = listed.deliveries.map(toDelivery)
      if (listed.stranded > 0) log(`${listed.stranded} pending deliveries are stranded (no job will attempt them again): a delivering process takes them up at its start and every minute`)
      if (command.json) out(JSON.stringify(deliveries, null, 2))
      else if (deliveries.length === 0) log('no deliveries')
      else {
        out(table(['EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT', 'DELIVERED'], deliveries.map((d) => [
          d.event_id, d.event_type, d.status, String(d.attempts),
          d.last_status_code !== null ? String(d.last_status_code) : d.last_error ?? '-', d.next_attempt_at ?? '-', d.delivered_at ?? '-'
        ])))
      }
    }
  }
}

/** Columns padded to their widest cell. */
function table (header: string[], rows: string[][]): string {
  const all = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)))
  return all.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')
}

/** Runs one command line; returns the exit code. */
async function main (argv: string[]): Promise<number> {
  let command: Command
  try {
    command = parseCommand(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) return failed(error)
    log(`error: ${error.message}`)
    // A bare invocation gets the whole text, not just a pointer to it.
    log(argv.length === 0 ? USAGE : HINT)
    return 2
  }
  if (command.kind === 'help') {
    out(USAGE)
    return 0
  }
  if (command.kind === 'openapi') {
    try {
      await openapi(command.file)
      return 0
    } catch (error) {
      return failed(error)
    }
  }

  let db: Db | undefined
  try {
    const [{ ConfigError, loadConfig }, { createDb, dbOptions }] = await Promise.all([import('./config.js'), import('./db/index.js')])
    let config: Config
    try {
      config = loadConfig()
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      log(`error: ${error.message}`)
      return 2
    }
    db = await createDb(dbOptions(config))
    await run(command, db, config)
    return 0
  } catch (error) {
    return failed(error)
  } finally {
    await db?.destroy()
  }
}

function failed (error: unknown): number {
  log(`error: ${redactPasswords(describeError(error))}`)
  if (process.env.DEBUG && !(error instanceof CommandError) && error instanceof Error) log(error.stack ?? '')
  return 1
}

process.exitCode = await main(process.argv.slice(2))
