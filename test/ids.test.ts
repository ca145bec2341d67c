import t from 'tap'
import { randomUUID } from 'node:crypto'
import { decodeId, shortId, slug, sluggedId } from '../src/ids.js'

t.test('a UUID round-trips through its short id, with or without a slug', async (t) => {
  for (let i = 0; i < 200; i++) {
    const uuid = randomUUID()
    const short = shortId(uuid)
    t.match(short, /^[0-9A-Za-z]{22}$/)
    t.equal(decodeId(short), uuid)
    t.equal(decodeId(sluggedId(uuid, 'Website Redesign')), uuid)
    t.equal(decodeId(`any-old-slug-${short}`), uuid, 'only the last segment counts')
  }
})

t.test('the extremes of the UUID range', async (t) => {
  t.equal(shortId('00000000-0000-0000-0000-000000000000'), '0000000000000000000000')
  t.equal(decodeId('0000000000000000000000'), '00000000-0000-0000-0000-000000000000')
  const max = 'ffffffff-ffff-ffff-ffff-ffffffffffff'
  t.equal(decodeId(shortId(max)), max)
})

t.test('canonical UUID strings are accepted, in either case', async (t) => {
  const uuid = randomUUID()
  t.equal(decodeId(uuid), uuid)
  t.equal(decodeId(uuid.toUpperCase()), uuid)
})

t.test('anything else decodes to nothing', async (t) => {
  for (const id of ['', ' ', 'abc', '!!!', 'zzzzzzzzzzzzzzzzzzzzzz', '0000000000000000000000-', 'x'.repeat(23),
    '00000000000000000000\u00e90', '\ud800', 'a\u0000b', '{}', '12345678-1234-1234-1234-12345678901g']) {
    t.equal(decodeId(id), null, JSON.stringify(id))
  }
})

t.test('slugs are lowercase ASCII words joined by dashes', async (t) => {
  t.equal(slug('Website Redesign'), 'website-redesign')
  t.equal(slug('  Café — Q4 / 2026!  '), 'cafe-q4-2026')
  t.equal(slug('😀'), '')
  t.equal(sluggedId('00000000-0000-0000-0000-000000000001', '😀'), '0000000000000000000001')
  t.ok(slug('a'.repeat(300)).length <= 60)
})
