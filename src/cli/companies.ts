// `companies create | list`: the companies of an install. A new company gets its
// general space, as in Operately.
import type { Db } from '../db/index.js'
import { CommandError, log, name, out, parse, required, table, UsageError, type Help } from './common.js'

export type CompaniesCommand =
  | { kind: 'companies create', name: string, json: boolean }
  | { kind: 'companies list', json: boolean }

export function parseCompanies (rest: string[]): CompaniesCommand | Help {
  const [sub, ...args] = rest
  if (sub === 'create') {
    const { values } = parse(args, { name: { type: 'string' }, json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    return { kind: 'companies create', name: name('--name', required('companies create', '--name', 'name', values.name)), json: values.json ?? false }
  }
  if (sub === 'list') {
    const { values } = parse(args, { json: { type: 'boolean' } })
    if (values.help) return { kind: 'help' }
    return { kind: 'companies list', json: values.json ?? false }
  }
  if (sub === undefined) throw new UsageError('companies needs a subcommand: create or list')
  throw new UsageError(`unknown companies subcommand '${sub}'`)
}

export async function runCompanies (command: CompaniesCommand, db: Db): Promise<void> {
  const team = await import('../companies/team.js')
  try {
    if (command.kind === 'companies create') {
      const company = await team.createCompany(db, command.name)
      if (command.json) out(JSON.stringify(company, null, 2))
      else out(`created company ${company.name}, with its space ${company.general_space.name}`)
      return
    }
    const companies = await team.listCompanies(db)
    if (command.json) out(JSON.stringify(companies, null, 2))
    else if (companies.length === 0) log('no companies')
    else out(table(['ID', 'NAME', 'PEOPLE', 'SPACES'], companies.map((c) => [c.id, c.name, String(c.people), String(c.spaces)])))
  } catch (error) {
    if (error instanceof team.TeamRefused) throw new CommandError(error.message)
    throw error
  }
}
