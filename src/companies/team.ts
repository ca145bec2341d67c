// An install's team as operators fill it from the command line (src/cli/): companies,
// their people and spaces, and who is in each space. Every change runs in one
// transaction, so a refusal (TeamRefused) leaves nothing half-written.
import { sql, type Transaction } from 'kysely'
import { jsonArrayFrom } from 'kysely/helpers/postgres'
import type { Db } from '../db/index.js'
import type { Database } from '../db/types.js'
import { decodeId, shortId } from '../ids.js'

/** A change the data does not allow (unknown company, e-mail taken, ...); the message says why. */
export class TeamRefused extends Error {}

export type Role = 'member' | 'admin' | 'guest'
type Tx = Transaction<Database>

/** The name of the space Operately creates with every company. */
export const GENERAL_SPACE = 'General'

const UNIQUE_VIOLATION = '23505'

/** Runs `fn` in a transaction; a unique violation it did not foresee (a concurrent writer) is refused with `message`. */
async function inTransaction<T> (db: Db, message: string, fn: (trx: Tx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction().execute(fn)
  } catch (error) {
    if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) throw new TeamRefused(message)
    throw error
  }
}

/** The company a command names, by its name or its id (API form or UUID). */
async function findCompany (trx: Tx, ref: string) {
  const uuid = decodeId(ref)
  const company = await trx.selectFrom('companies')
    .select(['id', 'name', 'general_space_id'])
    .where((eb) => uuid === null ? eb('name', '=', ref) : eb.or([eb('name', '=', ref), eb('id', '=', uuid)]))
    .orderBy(sql`name = ${ref}`, 'desc')
    .executeTakeFirst()
  if (company === undefined) throw new TeamRefused(`no company named '${ref}' or with that id (companies list shows them)`)
  return company
}

/** The company's people with these e-mails (any case), or a refusal naming the first that is not one of them. */
async function findMembers (trx: Tx, company: { id: string, name: string }, emails: string[]) {
  if (emails.length === 0) return []
  const lower = [...new Set(emails.map((e) => e.toLowerCase()))]
  const people = await trx.selectFrom('people').select(['id', 'email'])
    .where('company_id', '=', company.id)
    .where(sql<string>`lower(email)`, 'in', lower)
    .execute()
  const missing = lower.find((e) => !people.some((p) => p.email.toLowerCase() === e))
  if (missing !== undefined) throw new TeamRefused(`no person with e-mail ${missing} in ${company.name}`)
  return people
}

/** A new company with its general space, as Operately creates one. */
export async function createCompany (db: Db, name: string) {
  const taken = `a company named '${name}' exists already`
  return await inTransaction(db, taken, async (trx) => {
    const existing = await trx.selectFrom('companies').select('id').where('name', '=', name).executeTakeFirst()
    if (existing !== undefined) throw new TeamRefused(taken)
    const company = await trx.insertInto('companies').values({ name }).returning(['id', 'name']).executeTakeFirstOrThrow()
    const space = await trx.insertInto('spaces').values({ company_id: company.id, name: GENERAL_SPACE })
      .returning(['id', 'name']).executeTakeFirstOrThrow()
    await trx.updateTable('companies').set({ general_space_id: space.id }).where('id', '=', company.id).execute()
    return { id: shortId(company.id), name: company.name, general_space: { id: shortId(space.id), name: space.name } }
  })
}

export async function listCompanies (db: Db) {
  const rows = await db.selectFrom('companies as c')
    .select((eb) => [
      'c.id', 'c.name', 'c.inserted_at',
      eb.selectFrom('people as p').whereRef('p.company_id', '=', 'c.id').where('p.suspended_at', 'is', null)
        .select(sql<number>`count(*)::int`.as('n')).$asScalar().$notNull().as('people'),
      eb.selectFrom('spaces as s').whereRef('s.company_id', '=', 'c.id')
        .select(sql<number>`count(*)::int`.as('n')).$asScalar().$notNull().as('spaces')
    ])
    .orderBy('c.name').execute()
  return rows.map((r) => ({ id: shortId(r.id), name: r.name, people: r.people, spaces: r.spaces, inserted_at: r.inserted_at.toISOString() }))
}

export interface NewPerson { email: string, fullName: string, title: string | null, role: Role }

/** A person of the company, in its general space when it has one (as Operately adds members). */
export async function addPerson (db: Db, companyRef: string, person: NewPerson) {
  const taken = `a person with e-mail ${person.email} exists already`
  return await inTransaction(db, taken, async (trx) => {
    const company = await findCompany(trx, companyRef)
    const existing = await trx.selectFrom('people').select('id')
      .where(sql<string>`lower(email)`, '=', person.email.toLowerCase()).executeTakeFirst()
    if (existing !== undefined) throw new TeamRefused(taken)
    const row = await trx.insertInto('people').values({
      company_id: company.id,
      email: person.email,
      full_name: person.fullName,
      title: person.title,
      avatar_url: null,
      type: person.role === 'guest' ? 'guest' : 'human',
      is_admin: person.role === 'admin'
    }).returning(['id']).executeTakeFirstOrThrow()
    // Operately's guests see only what they are given; everyone else joins the company-wide space.
    if (company.general_space_id !== null && person.role !== 'guest') {
      await trx.insertInto('space_members').values({ space_id: company.general_space_id, person_id: row.id }).execute()
    }
    return { id: shortId(row.id), company: company.name, email: person.email, full_name: person.fullName, title: person.title, role: person.role }
  })
}

export async function listPeople (db: Db, companyRef: string) {
  return await db.transaction().execute(async (trx) => {
    const company = await findCompany(trx, companyRef)
    const rows = await trx.selectFrom('people')
      .select(['id', 'email', 'full_name', 'title', 'type', 'is_admin', 'suspended_at'])
      .where('company_id', '=', company.id).orderBy('full_name').orderBy('id').execute()
    return rows.map((r) => ({
      id: shortId(r.id), email: r.email, full_name: r.full_name, title: r.title,
      role: (r.type === 'guest' ? 'guest' : r.is_admin ? 'admin' : 'member') as Role,
      suspended: r.suspended_at !== null
    }))
  })
}

/** The space's members' e-mails, by e-mail. */
async function memberEmails (trx: Tx, spaceId: string): Promise<string[]> {
  const rows = await trx.selectFrom('space_members as m').innerJoin('people as p', 'p.id', 'm.person_id')
    .select('p.email').where('m.space_id', '=', spaceId).orderBy('p.email').execute()
  return rows.map((r) => r.email)
}

/** Makes these people (already the company's) members of the space; members already are left as they are. */
async function join (trx: Tx, spaceId: string, people: Array<{ id: string }>): Promise<void> {
  if (people.length === 0) return
  await trx.insertInto('space_members')
    .values(people.map((p) => ({ space_id: spaceId, person_id: p.id })))
    .onConflict((oc) => oc.columns(['space_id', 'person_id']).doNothing())
    .execute()
}

export async function createSpace (db: Db, companyRef: string, name: string, emails: string[]) {
  return await inTransaction(db, `the company has a space named '${name}' already`, async (trx) => {
    const company = await findCompany(trx, companyRef)
    const existing = await trx.selectFrom('spaces').select('id')
      .where('company_id', '=', company.id).where('name', '=', name).executeTakeFirst()
    if (existing !== undefined) throw new TeamRefused(`${company.name} has a space named '${name}' already`)
    const people = await findMembers(trx, company, emails)
    const space = await trx.insertInto('spaces').values({ company_id: company.id, name })
      .returning(['id', 'name']).executeTakeFirstOrThrow()
    await join(trx, space.id, people)
    return { id: shortId(space.id), name: space.name, company: company.name, members: await memberEmails(trx, space.id) }
  })
}

export async function addSpaceMembers (db: Db, companyRef: string, spaceRef: string, emails: string[]) {
  return await db.transaction().execute(async (trx) => {
    const company = await findCompany(trx, companyRef)
    const uuid = decodeId(spaceRef)
    const space = await trx.selectFrom('spaces').select(['id', 'name'])
      .where('company_id', '=', company.id)
      .where((eb) => uuid === null ? eb('name', '=', spaceRef) : eb.or([eb('name', '=', spaceRef), eb('id', '=', uuid)]))
      .orderBy(sql`name = ${spaceRef}`, 'desc')
      .executeTakeFirst()
    if (space === undefined) throw new TeamRefused(`no space named '${spaceRef}' or with that id in ${company.name}`)
    await join(trx, space.id, await findMembers(trx, company, emails))
    return { id: shortId(space.id), name: space.name, company: company.name, members: await memberEmails(trx, space.id) }
  })
}

export async function listSpaces (db: Db, companyRef: string) {
  return await db.transaction().execute(async (trx) => {
    const company = await findCompany(trx, companyRef)
    const spaces = await trx.selectFrom('spaces as s')
      .select((eb) => ['s.id', 's.name', jsonArrayFrom(eb.selectFrom('space_members as m')
        .innerJoin('people as p', 'p.id', 'm.person_id')
        .select('p.email').whereRef('m.space_id', '=', 's.id').orderBy('p.email')).as('members')])
      .where('s.company_id', '=', company.id).orderBy('s.name').execute()
    return spaces.map((s) => ({
      id: shortId(s.id), name: s.name, general: s.id === company.general_space_id, members: s.members.map((m) => m.email)
    }))
  })
}
