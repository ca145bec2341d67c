// Operator commands: `npm run cli -- <command>`. Results go to stdout, progress and
// errors to stderr, so `--json` output can be piped. Exit codes: 0 done, 1 failed,
// 2 bad usage or configuration.
//
// The database stack (Kysely, pg, TypeBox) takes about a second to load, so it is
// imported only once the command line is known to be good: help and usage errors
// answer at once. Each command group (a file of this folder) parses its own
// arguments and runs its own commands.
import type { Config } from '../config.js'
import type { Db } from '../db/index.js'
import { redactPasswords } from '../redact.js'
import { describeError } from '../errors.js'
import { CommandError, commandStreams, log, out, parse, UsageError, type Help, type Streams } from './common.js'
import { parseMigrate, parseSeed, runDatabase, type DatabaseCommand } from './database.js'
import { parseTokens, runTokens, type TokensCommand } from './tokens.js'
import { parseWebhooks, runWebhooks, type WebhooksCommand } from './webhooks.js'
import { parseCompanies, runCompanies, type CompaniesCommand } from './companies.js'
import { parsePeople, runPeople, type PeopleCommand } from './people.js'
import { parseSpaces, runSpaces, type SpacesCommand } from './spaces.js'
import { parseOpenapi, runOpenapi, type OpenapiCommand } from './openapi.js'

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  migrate                        apply pending database migrations
  seed --demo [--json]           load the demo dataset (once) and issue a fresh write and
                                 read-only token for every demo person
  companies create --name <name> [--json]
                                 create a company, with its general space
  companies list [--json]        the companies, with how many people and spaces each has
  people add --company <company> --email <email> --name <full name> [--title <title>]
             [--role member|admin|guest] [--json]
                                 add a person to a company (a member unless told)
  people list --company <company> [--json]
                                 a company's people
  spaces create --company <company> --name <name> [--member <email>]... [--json]
                                 create a space, with these people of the company in it
  spaces add-members --company <company> --space <space> --member <email>... [--json]
                                 add people of the company to a space
  spaces list --company <company> [--json]
                                 a company's spaces and their members
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

A <company> is its name or its id, a <space> its name or id within the company.
The database comes from the environment: DATABASE_URL (PostgreSQL), or else the
embedded database under DATA_DIR (default ./.data). The embedded database can be
opened by one process at a time: stop the server before running a command on it.
`

const HINT = 'Run "npm run cli -- help" for usage.'

/** What a command line asks for; checked in full before any database is opened. */
type Command = Help | OpenapiCommand | DatabaseCommand | TokensCommand | WebhooksCommand | CompaniesCommand | PeopleCommand | SpacesCommand

const GROUPS: Record<string, (rest: string[]) => Command> = {
  migrate: parseMigrate,
  seed: parseSeed,
  tokens: parseTokens,
  webhooks: parseWebhooks,
  companies: parseCompanies,
  people: parsePeople,
  spaces: parseSpaces,
  openapi: parseOpenapi
}

function parseCommand (argv: string[]): Command {
  const [name, ...rest] = argv
  if (name === undefined) throw new UsageError('no command given')
  if (name === 'help' || name === '--help' || name === '-h') {
    parse(rest, {})
    return { kind: 'help' }
  }
  const group = Object.hasOwn(GROUPS, name) ? GROUPS[name] : undefined
  if (group !== undefined) return group(rest)
  if (name.startsWith('-')) throw new UsageError(`unknown option '${name}'`)
  throw new UsageError(`unknown command '${name}'`)
}

async function run (command: Exclude<Command, Help | OpenapiCommand>, db: Db, config: Config): Promise<void> {
  switch (command.kind) {
    case 'migrate': case 'seed':
      return await runDatabase(command, db, config)
    case 'tokens create': case 'tokens list': case 'tokens revoke':
      return await runTokens(command, db)
    case 'webhooks create': case 'webhooks list': case 'webhooks delete': case 'webhooks deliveries':
      return await runWebhooks(command, db, config)
    case 'companies create': case 'companies list':
      return await runCompanies(command, db)
    case 'people add': case 'people list':
      return await runPeople(command, db)
    case 'spaces create': case 'spaces add-members': case 'spaces list':
      return await runSpaces(command, db)
  }
}

/**
 * Runs one command line; returns the exit code. The configuration comes from `env`
 * (the process's environment unless given) and the output goes to `streams` (the
 * process's stdout and stderr unless given). A command that needs the database
 * opens the one the configuration names, and closes it when done, unless given `db`:
 * one its caller holds open, and closes.
 */
export async function main (argv: string[], options: { env?: NodeJS.ProcessEnv, streams?: Streams, db?: Db } = {}): Promise<number> {
  const env = options.env ?? process.env
  const commandLine = async () => await runCommandLine(argv, env, options.db)
  return options.streams === undefined ? await commandLine() : await commandStreams.run(options.streams, commandLine)
}

async function runCommandLine (argv: string[], env: NodeJS.ProcessEnv, given: Db | undefined): Promise<number> {
  let command: Command
  try {
    command = parseCommand(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) return failed(error, env)
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
      await runOpenapi(command.file)
      return 0
    } catch (error) {
      return failed(error, env)
    }
  }

  let db: Db | undefined
  try {
    const [{ ConfigError, loadConfig }, { createDb, dbOptions }] = await Promise.all([import('../config.js'), import('../db/index.js')])
    let config: Config
    try {
      config = loadConfig(env)
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      log(`error: ${error.message}`)
      return 2
    }
    db = given ?? await createDb(dbOptions(config))
    await run(command, db, config)
    return 0
  } catch (error) {
    return failed(error, env)
  } finally {
    if (given === undefined) await db?.destroy()
  }
}

function failed (error: unknown, env: NodeJS.ProcessEnv): number {
  log(`error: ${redactPasswords(describeError(error))}`)
  if (env.DEBUG && !(error instanceof CommandError) && error instanceof Error) log(error.stack ?? '')
  return 1
}
