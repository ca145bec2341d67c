// The fixture of the contributor operations' tests: a company, its people and a
// project with a champion, a webhook taking every event.
import type { Db } from '../../../src/db/index.js'
import { addContributor, createCompany, createPerson, createProject, createSpace, tokenFor } from '../../helper.js'
import { everyEventWebhook } from './lifecycle-support.js'

export async function contributorsFixture (db: Db) {
  const company = await createCompany(db)
  const champion = await createPerson(db, company.id, { fullName: 'Chris Champion' })
  const person = await createPerson(db, company.id, { fullName: 'Pat Person' })
  const other = await createPerson(db, company.id, { fullName: 'Otto Other' })
  const suspended = await createPerson(db, company.id, { suspended: true })
  const foreigner = await createPerson(db, (await createCompany(db)).id)
  const space = await createSpace(db, company.id, [champion.id])
  const token = (await tokenFor(db, champion.email)).token
  const hook = await everyEventWebhook(db, company.id)
  async function project () {
    const p = await createProject(db, space, { access: { space: 70 } })
    await addContributor(db, p.id, champion.id, 'champion')
    return p
  }
  const bindings = async (projectId: string) => await db.selectFrom('project_contributors')
    .select(['id', 'person_id', 'role', 'responsibility', 'access_level']).where('project_id', '=', projectId).orderBy('inserted_at').orderBy('id').execute()
  return { company, champion, person, other, suspended, foreigner, space, token, hook, project, bindings }
}
