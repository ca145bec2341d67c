// `spaces create | add-members | list`: a company's spaces and their members, named
// by e-mail (people of that company). Space members get a project's space level.
import type { Db } from '../db/index.js'
import { CommandError, log, name, out, parse, required, table, UsageError, type Help } from './common.js'

export type SpacesCommand =
  | { kind: 'spaces create', company: string, name: string, members: string[], json: boolean }
  | { kind: 'spaces add-members', company: string, space: string, members: string[], json: boolean }
  | { kind: 'spaces list', company: string, json: boolean }

/** The --member e-mails given, trimmed; none blank. */
function members (values: string[] | undefined): string[] {
  return (values ?? []).map((email) => {
    if (email.trim() === '') throw new UsageError('--member must not be blank')
    return email.trim()
  })
}

export function parseSpaces (rest: string[]): SpacesCommand | Help {
  const [sub, ...args] = rest
  const company = (values: { company?: string }) => required(`spaces ${sub}`, '--company', 'company name or id', values.company)
  if (sub === 'create') {
    const { values } = parse(args, { company: { type: 'string' }, name: { type: 'string' }, member: { type: 'string', multiple: true }, json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    const spaceName = name('--name', required('spaces create', '--name', 'name', values.name))
    return { kind: 'spaces create', company: company(values), name: spaceName, members: members(values.member), json: values.json ?? false }
  }
  if (sub === 'add-members') {
    const { values } = parse(args, { company: { type: 'string' }, space: { type: 'string' }, member: { type: 'string', multiple: true }, json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    const space = required('spaces add-members', '--space', 'space name or id', values.space)
    const emails = members(values.member)
    if (emails.length === 0) throw new UsageError('spaces add-members needs --member <email> (one or more)')
    return { kind: 'spaces add-members', company: company(values), space, members: emails, json: values.json ?? false }
  }
  if (sub === 'list') {
    const { values } = parse(args, { company: { type: 'string' }, json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    return { kind: 'spaces list', company: company(values), json: values.json ?? false }
  }
  if (sub === undefined) throw new UsageError('spaces needs a subcommand: create, add-members or list')
  throw new UsageError(`unknown spaces subcommand '${sub}'`)
}

export async function runSpaces (command: SpacesCommand, db: Db): Promise<void> {
  const team = await import('../companies/team.js')
  try {
    if (command.kind === 'spaces list') {
      const spaces = await team.listSpaces(db, command.company)
      if (command.json) out(JSON.stringify(spaces, null, 2))
      else if (spaces.length === 0) log('no spaces')
      else out(table(['ID', 'NAME', 'MEMBERS'], spaces.map((s) => [s.id, s.general ? `${s.name} (general)` : s.name, s.members.join(',') || '-'])))
      return
    }
    const space = command.kind === 'spaces create'
      ? await team.createSpace(db, command.company, command.name, command.members)
      : await team.addSpaceMembers(db, command.company, command.space, command.members)
    if (command.json) out(JSON.stringify(space, null, 2))
    else {
      const verb = command.kind === 'spaces create' ? 'created space' : 'space'
      out(`${verb} ${space.name} of ${space.company}; members: ${space.members.join(', ') || 'none'}`)
    }
  } catch (error) {
    if (error instanceof team.TeamRefused) throw new CommandError(error.message)
    throw error
  }
}
