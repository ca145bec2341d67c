// Pages (projects/list, notifications/list) are sent gzip-compressed to a client
// that accepts gzip, and only gzip: a client that also accepts br or deflate (as
// Operately's CLI and browsers say they do) gets gzip, one that accepts only
// others gets the page as it is; the compressed page is the same JSON, with
// Vary: Accept-Encoding. Other answers are never compressed.
import { gunzipSync } from 'node:zlib'
import t from '../tap.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, notifyOf, tokenFor } from '../helper.js'

const { app, db } = await build(t)
const company = await createCompany(db)
const person = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [person.id])
const projects: Array<{ id: string, name: string }> = []
for (let i = 0; i < 12; i++) {
  const project = await createProject(db, space, { name: `Compressed page project ${i} ${'x'.repeat(100)}`, access: { space: 70 } })
  await addContributor(db, project.id, person.id, 'champion')
  projects.push(project)
}
await notifyOf(db, projects.map((project) => ({ person_id: person.id, project_id: project.id, action: 'project_renamed' })))
const { token } = await tokenFor(db, person.email)

const PAGES = ['/api/external/v1/projects/list', '/api/external/v1/notifications/list']

async function get (url: string, acceptEncoding?: string) {
  return await app.inject({
    method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }) }
  })
}

for (const url of PAGES) {
  t.test(`${url}: gzip for a client that accepts it, whatever else it accepts`, async (t) => {
    const plain = await get(url)
    t.equal(plain.statusCode, 200)
    t.equal(plain.headers['content-encoding'], undefined)
    t.ok(plain.rawPayload.length > 2048, 'a page long enough to compress')
    for (const accepted of ['gzip', 'gzip, deflate, br', 'br, gzip', 'gzip, compress, deflate, br', 'zstd, br;q=1, gzip;q=0.5']) {
      const answer = await get(url, accepted)
      t.equal(answer.statusCode, 200, accepted)
      t.equal(answer.headers['content-encoding'], 'gzip', accepted)
      t.match(String(answer.headers.vary), /accept-encoding/i, accepted)
      t.same(JSON.parse(gunzipSync(answer.rawPayload).toString()), plain.json(), `${accepted}: the same page`)
      if (answer.headers['content-length'] !== undefined) t.equal(Number(answer.headers['content-length']), answer.rawPayload.length)
    }
  })

  t.test(`${url}: as it is for a client that accepts no gzip`, async (t) => {
    const plain = await get(url)
    for (const accepted of ['br', 'deflate', 'br, deflate, zstd', 'gzip;q=0', 'identity']) {
      const answer = await get(url, accepted)
      t.equal(answer.statusCode, 200, accepted)
      t.equal(answer.headers['content-encoding'], undefined, accepted)
      t.same(answer.json(), plain.json(), accepted)
    }
  })
}

t.test('a single project is never compressed', async (t) => {
  const answer = await get(`/api/external/v1/projects/get?id=${projects[0]!.id}`, 'gzip, deflate, br')
  t.equal(answer.statusCode, 200)
  t.equal(answer.headers['content-encoding'], undefined)
  t.equal(answer.json().project.name, projects[0]!.name)
})
