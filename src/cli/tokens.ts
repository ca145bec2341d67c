// `tokens create | list | revoke`: API tokens, issued to a person by e-mail.
import type { Db } from '../db/index.js'
import type { TokenListing } from '../auth/tokens.js'
import { isUuid } from '../ids.js'
import { MAX_EXPIRY_DAYS } from '../token-format.js'
import { CommandError, log, nonBlank, out, parse, table, UsageError, type Help } from './common.js'

export type TokensCommand =
  | { kind: 'tokens create', email: string, readOnly: boolean, name: string | null, expiresInDays: number | null, json: boolean }
  | { kind: 'tokens list', email: string | undefined, json: boolean }
  | { kind: 'tokens revoke', id: string }

function expiryDays (value: string | undefined): number | null {
  if (value === undefined) return null
  const days = Number(value)
  if (!/^\s*(\d+\.?\d*|\.\d+)\s*$/.test(value) || !(days > 0) || days > MAX_EXPIRY_DAYS) {
    throw new UsageError(`--expires-in must be a positive number of days (at most ${MAX_EXPIRY_DAYS}), not '${value}'`)
  }
  return days
}

export function parseTokens (rest: string[]): TokensCommand | Help {
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

export async function runTokens (command: TokensCommand, db: Db): Promise<void> {
  const { createToken, listTokens, revokeToken, UnknownPersonError } = await import('../auth/tokens.js')
  switch (command.kind) {
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
  }
}
