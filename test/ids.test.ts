import t from './tap.js'
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

t.test('a short id is the UUID\'s 128 bits in base62, most significant digit first, whatever the case of its hex', async (t) => {
  const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
  const reference = (uuid: string) => {
    let n = BigInt(`0x${uuid.replaceAll('-', '')}`)
    let out = ''
    for (let i = 0; i < 22; i++) { out = ALPHABET[Number(n % 62n)] + out; n /= 62n }
    return out
  }
  const uuids = ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '00000000-0000-0000-0000-00000000003d',
    '80000000-0000-0000-0000-000000000000', ...Array.from({ length: 500 }, () => randomUUID())]
  t.same(uuids.filter((uuid) => shortId(uuid) !== reference(uuid)), [], 'lowercase hex')
  t.same(uuids.filter((uuid) => shortId(uuid.toUpperCase()) !== reference(uuid)), [], 'uppercase hex')
  t.equal(shortId('00000000-0000-0000-0000-00000000003d'), '000000000000000000000z')
})

t.test('a slugged id follows the name it is given, however many names have been seen', async (t) => {
  const uuid = randomUUID()
  const wrong = Array.from({ length: 5000 }, (_, i) => i).filter((i) => sluggedId(uuid, `Project ${i}`) !== `project-${i}-${shortId(uuid)}`)
  t.same(wrong, [], 'every one of 5000 names')
  t.equal(sluggedId(uuid, 'Project 7'), `project-7-${shortId(uuid)}`)
  t.equal(sluggedId(uuid, '😀'), shortId(uuid))
})
