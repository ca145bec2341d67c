// A page of projects is written from parts (plugins/answers.ts, sendAnswer): the
// response takes up to WRITE_HIGH_WATER_MARK of them at once (plugins/transport.ts)
// and hands them to the socket a write per 256 KiB, not a few parts at a time with a
// wait for the socket to drain between them (one write and one wake-up of the client each).
// Over a real socket, counting the writes the response's socket is asked for.
import { request } from 'node:http'
import type { Socket } from 'node:net'
import t from 'tap'
import { build, createCompany, createPerson, createProject, createSpace, tokenFor } from '../helper.js'
import { listen } from '../launch.js'

const PROJECTS = 30
/** A description of about 20 KB: a page of them is most of a megabyte. */
const DESCRIPTION = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'w'.repeat(20_000) }] }] })

const { app, db } = await build(t)
// Writes asked of each connection's socket, by its client's port.
const writes = new Map<number, number>()
app.server.on('connection', (socket: Socket) => {
  const counted = socket as Socket & { _write: (...args: unknown[]) => void, _writev: (...args: unknown[]) => void }
  const port = socket.remotePort!
  writes.set(port, 0)
  for (const method of ['_write', '_writev'] as const) {
    const write = counted[method].bind(socket)
    counted[method] = (...args: unknown[]) => {
      writes.set(port, writes.get(port)! + 1)
      write(...args)
    }
  }
})
const { port } = await listen(app)

const company = await createCompany(db)
const reader = await createPerson(db, company.id)
const space = await createSpace(db, company.id, [reader.id])
for (let i = 0; i < PROJECTS; i++) await createProject(db, space, { description: DESCRIPTION, access: { company: 10 } })
const { token } = await tokenFor(db, reader.email)

/** A page of every project, on a connection of its own: its status, body and the writes its socket was asked for. */
function page (): Promise<{ status: number, body: Buffer, length: number, writes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/external/v1/projects/list?limit=100', agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({
        status: res.statusCode!, body: Buffer.concat(chunks), length: Number(res.headers['content-length']),
        writes: writes.get(req.socket!.localPort!)!
      }))
    })
    req.on('error', reject)
    req.end()
  })
}

// Written the first time, from kept bytes and each reader's fields the second: the
// statement is then told every project's version, and each is a hit.
for (const [time, hits] of [['first', 0], ['second', PROJECTS]] as const) {
  t.test(`the ${time} time`, async (t) => {
    const before = app.answers.hits
    const answer = await page()
    t.equal(app.answers.hits - before, hits, `${hits} projects written from kept bytes`)
    t.equal(answer.status, 200)
    t.equal(answer.body.length, answer.length, 'the whole body, as long as it said')
    t.ok(answer.length > 600_000, `a page of ${answer.length} bytes`)
    const projects = (JSON.parse(answer.body.toString()) as { projects: Array<{ description: string }> }).projects
    t.equal(projects.length, PROJECTS)
    t.ok(projects.every((p) => p.description === DESCRIPTION), 'every project whole')
    // A write per 256 KiB of the page, the headers with the first: three (31 at 16 KiB).
    t.ok(answer.writes <= 3, `${answer.writes} writes for the page`)
  })
}
