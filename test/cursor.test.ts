// Page cursors: what one encodes it decodes, for its own scope only; altered,
// foreign, truncated or made-up cursors decode to nothing.
import { randomBytes } from 'node:crypto'
import t from './tap.js'
import { CursorCodec } from '../src/http/cursor.js'

const codec = new CursorCodec(randomBytes(32))
const scope = 'projects/list\nperson-1\n{}'
const position = { n: 'Website Redesign', i: '0f4c3a1e-8b9d-4c2e-9f1a-2b3c4d5e6f70' }

t.test('a cursor decodes to its position in its own scope', async (t) => {
  const cursor = codec.encode(scope, position)
  t.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/, 'URL-safe, no padding')
  t.same(codec.decode(scope, cursor), position)
  t.same(codec.decode(scope, codec.encode(scope, { n: 'é 😀 "quoted"', i: 'x' })), { n: 'é 😀 "quoted"', i: 'x' })
})

t.test('the longest position the list issues decodes: a 255-character name written 6 bytes a character in JSON', async (t) => {
  for (const name of ['\u0001'.repeat(255), '\u001f'.repeat(255), '😀'.repeat(255), '"'.repeat(255)]) {
    const longest = { name, id: position.i }
    t.same(codec.decode(scope, codec.encode(scope, longest)), longest, `${JSON.stringify(name).length} characters of JSON`)
  }
})

t.test('another scope, another key, an altered or made-up cursor decode to nothing', async (t) => {
  const cursor = codec.encode(scope, position)
  const [payload, tag] = cursor.split('.') as [string, string]
  const forged = Buffer.from(JSON.stringify({ ...position, n: 'Internal Tools' })).toString('base64url')
  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1)
  const refused = [
    ['another person', codec.decode('projects/list\nperson-2\n{}', cursor)],
    ['other filters', codec.decode('projects/list\nperson-1\n{"space_id":"x"}', cursor)],
    ['another key', new CursorCodec(randomBytes(32)).decode(scope, cursor)],
    ['a forged position', codec.decode(scope, `${forged}.${tag}`)],
    ['a flipped payload character', codec.decode(scope, `${flip(payload, 3)}.${tag}`)],
    ['a flipped tag character', codec.decode(scope, `${payload}.${flip(tag, 5)}`)],
    ['no tag', codec.decode(scope, payload)],
    ['a truncated tag', codec.decode(scope, `${payload}.${tag.slice(0, 21)}`)],
    ['empty', codec.decode(scope, '')],
    ['an id', codec.decode(scope, 'website-redesign-0Y9Ntz72ysNZCCSQ5dFUZh')],
    ['a UUID', codec.decode(scope, position.i)],
    ['huge', codec.decode(scope, `${'A'.repeat(100_000)}.${tag}`)]
  ] as const
  for (const [what, decoded] of refused) t.equal(decoded, undefined, what)
})

t.test('a key shorter than 32 bytes is refused', async (t) => {
  t.throws(() => new CursorCodec(randomBytes(16)), RangeError)
})
