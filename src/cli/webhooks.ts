// `webhooks create | list | delete | deliveries`: each acts as the company admin
// named by --email, under the API's rules.
import type { Config } from '../config.js'
import type { Db } from '../db/index.js'
import type { Managed } from '../webhooks/query.js'
import { CommandError, log, nonBlank, out, parse, table, UsageError, type Help } from './common.js'
import { WEBHOOK_EVENTS } from '../webhooks/schemas.js'

export type WebhooksCommand =
  | { kind: 'webhooks create', email: string, url: string, events: string[] | null, description: string, json: boolean }
  | { kind: 'webhooks list', email: string, json: boolean }
  | { kind: 'webhooks delete', email: string, id: string }
  | { kind: 'webhooks deliveries', email: string, id: string, limit: number, json: boolean }

const WEBHOOK_EVENT_NAMES: readonly string[] = WEBHOOK_EVENTS

export function parseWebhooks (rest: string[]): WebhooksCommand | Help {
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

export async function runWebhooks (command: WebhooksCommand, db: Db, config: Config): Promise<void> {
  const [hooks, { toDelivery, toWebhook }, { checkWebhookUrl, TargetRefused }, { newWebhookSecret }, { decodeId }] = await Promise.all([
    import('../webhooks/query.js'), import('../webhooks/presenter.js'), import('../webhooks/targets.js'), import('../webhooks/secrets.js'), import('../ids.js')
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
