// `people add | list`: a company's people. A role is member, admin (full access to
// everything of the company) or guest (sees only what they are given).
import type { Db } from '../db/index.js'
import type { Role } from '../companies/team.js'
import { CommandError, log, name, nonBlank, out, parse, required, table, UsageError, type Help } from './common.js'

export type PeopleCommand =
  | { kind: 'people add', company: string, email: string, fullName: string, title: string | null, role: Role, json: boolean }
  | { kind: 'people list', company: string, json: boolean }

const ROLES: Role[] = ['member', 'admin', 'guest']
// What the database takes (people.email: LIKE '%_@_%'), without spaces.
const EMAIL = /^[^\s@]+@[^\s@]+$/

export function parsePeople (rest: string[]): PeopleCommand | Help {
  const [sub, ...args] = rest
  if (sub === 'add') {
    const { values } = parse(args, {
      company: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' },
      title: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' }
    })
    if (values.help) return { kind: 'help' }
    const company = required('people add', '--company', 'company name or id', values.company)
    const email = required('people add', '--email', 'email', values.email)
    if (!EMAIL.test(email)) throw new UsageError(`--email must be an e-mail address, not '${email}'`)
    const fullName = name('--name', required('people add', '--name', 'full name', values.name))
    const title = nonBlank('--title', values.title)
    const role = (values.role ?? 'member') as Role
    if (!ROLES.includes(role)) throw new UsageError(`--role takes ${ROLES.join(', ')}, not '${values.role}'`)
    return { kind: 'people add', company, email, fullName, title: title === undefined ? null : name('--title', title), role, json: values.json ?? false }
  }
  if (sub === 'list') {
    const { values } = parse(args, { company: { type: 'string' }, json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    return { kind: 'people list', company: required('people list', '--company', 'company name or id', values.company), json: values.json ?? false }
  }
  if (sub === undefined) throw new UsageError('people needs a subcommand: add or list')
  throw new UsageError(`unknown people subcommand '${sub}'`)
}

export async function runPeople (command: PeopleCommand, db: Db): Promise<void> {
  const team = await import('../companies/team.js')
  try {
    if (command.kind === 'people add') {
      const person = await team.addPerson(db, command.company, command)
      if (command.json) out(JSON.stringify(person, null, 2))
      else out(`added ${person.full_name} <${person.email}> to ${person.company} as ${person.role === 'admin' ? 'an admin' : `a ${person.role}`}`)
      return
    }
    const people = await team.listPeople(db, command.company)
    if (command.json) out(JSON.stringify(people, null, 2))
    else if (people.length === 0) log('no people')
    else {
      out(table(['ID', 'EMAIL', 'NAME', 'TITLE', 'ROLE'], people.map((p) => [
        p.id, p.email, p.full_name, p.title ?? '-', p.suspended ? `${p.role} (suspended)` : p.role
      ])))
    }
  } catch (error) {
    if (error instanceof team.TeamRefused) throw new CommandError(error.message)
    throw error
  }
}
