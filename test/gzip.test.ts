// gzip answers made of pieces: the CRC-32 and its combination agree with zlib's,
// pieces compressed or stored in any order make one member that zlib (and gunzip)
// reads back as their bytes in order, and Accept-Encoding is read as RFC 9110 says.
import { randomBytes } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import zlib from 'node:zlib'
import t from 'tap'
import { acceptsGzip, crc32, crc32Combine, deflated, gzipMember, inflated, stored } from '../src/gzip.js'

/** The CRC-32 zlib writes in a gzip member's trailer. */
const zlibCrc = (bytes: Buffer) => { const member = zlib.gzipSync(bytes); return member.readUInt32LE(member.length - 8) }

const json = Buffer.from(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `Project ${i}`, note: 'é 日本語 🚀' }))))
const samples: Array<[string, Buffer]> = [
  ['empty', Buffer.alloc(0)], ['one byte', Buffer.from('x')], ['three bytes', Buffer.from('abc')],
  ['random, odd length', randomBytes(70_001)], ['JSON with multi-byte characters', json]
]

t.test('crc32 is zlib\'s CRC-32, whole or continued', async (t) => {
  for (const [what, bytes] of samples) {
    t.equal(crc32(bytes), zlibCrc(bytes), what)
    const cut = bytes.length >> 1
    t.equal(crc32(bytes.subarray(cut), crc32(bytes.subarray(0, cut))), zlibCrc(bytes), `${what}, in two calls`)
  }
})

t.test('crc32Combine gives the CRC of A then B from theirs and B\'s length, at any cut', async (t) => {
  const bytes = Buffer.concat([json, randomBytes(200_000)])
  for (const cut of [0, 1, 2, 3, 4, 5, 255, 256, 65_535, 65_536, 65_537, 300_000, bytes.length - 1, bytes.length]) {
    const a = bytes.subarray(0, cut)
    const b = bytes.subarray(cut)
    t.equal(crc32Combine(crc32(a), crc32(b), b.length), zlibCrc(bytes), `cut at ${cut}`)
  }
})

t.test('pieces compressed at any level or stored, in any order, make one member of their bytes in order', async (t) => {
  const big = randomBytes(200_000) // over 64 KiB: stored in several blocks
  const parts = [json.subarray(0, 5000), Buffer.from('{"glue":'), big, Buffer.alloc(0), json.subarray(5000), Buffer.from('}')]
  const makers = [(b: Buffer) => deflated(b, 6), (b: Buffer) => deflated(b, 1), stored]
  for (let m = 0; m < makers.length; m++) {
    const pieces = parts.map((part, i) => makers[(i + m) % makers.length]!(part))
    const member = Buffer.concat(gzipMember(pieces))
    t.ok(zlib.gunzipSync(member).equals(Buffer.concat(parts)), `makers from ${m}: zlib reads the bytes back`)
    // gunzip checks the CRC and the length in the trailer too.
    const gunzip = spawnSync('gunzip', ['-c'], { input: member })
    t.equal(gunzip.status, 0, `makers from ${m}: gunzip accepts it`)
    t.ok(gunzip.stdout.equals(Buffer.concat(parts)), `makers from ${m}: gunzip reads the bytes back`)
  }
  t.ok(zlib.gunzipSync(Buffer.concat(gzipMember([]))).equals(Buffer.alloc(0)), 'no piece: an empty member')
  const piece = deflated(json, 6)
  t.ok(piece.data.length < json.length / 3, 'JSON compresses')
  t.equal(piece.data.buffer.byteLength, piece.data.length, 'a piece holds its own bytes, not a view of a larger chunk')
  t.equal(piece.crc, zlibCrc(json))
  t.equal(piece.length, json.length)
  t.equal(piece.byteLength, piece.data.length, 'what it holds: its blocks')
})

t.test('inflated gives the bytes of pieces compressed at any level or stored, and of bytes as they are, in order, in one buffer', async (t) => {
  const big = randomBytes(200_000) // over 64 KiB: in several stored blocks, as a piece or as bytes
  const parts = [json.subarray(0, 5000), Buffer.from('{"glue":'), big, Buffer.alloc(0), json.subarray(5000), Buffer.from('}')]
  const makers = [(b: Buffer) => deflated(b, 6), (b: Buffer) => deflated(b, 1), stored, (b: Buffer) => b]
  for (let m = 0; m < makers.length; m++) {
    const bytes = inflated(parts.map((part, i) => makers[(i + m) % makers.length]!(part)))
    t.ok(bytes.equals(Buffer.concat(parts)), `makers from ${m}: the bytes in order`)
  }
  t.equal(inflated([]).length, 0, 'no piece: no bytes')
  t.equal(inflated([deflated(json, 6)]).toString(), json.toString(), 'one piece')
  t.ok(inflated([big]).equals(big), 'bytes alone')
  // A piece whose blocks do not hold what it says is a bug, not an answer.
  t.throws(() => inflated([{ ...deflated(json, 6), length: json.length + 1 }]), /inflated to/)
})

t.test('acceptsGzip reads Accept-Encoding as RFC 9110 §12.5.3 does', async (t) => {
  const cases: Array<[string | string[] | undefined, boolean]> = [
    [undefined, false], ['', false], ['identity', false], ['br', false], ['compress, deflate', false],
    ['gzip', true], ['x-gzip', true], ['GZip', true], ['gzip, deflate, br', true], ['compress, gzip', true], ['*', true],
    ['gzip;q=0', false], ['gzip; q=0.000', false], ['*;q=0', false], ['*;q=0, identity', false], ['br, *;q=0', false],
    ['gzip;q=1.0, identity; q=0.5, *;q=0', true], ['gzip;q=0.5', false], ['gzip;q=0.5, identity;q=0.4', true],
    ['identity;q=0, *;q=0.1', true], ['gzip;q=0.8, *;q=1', false],
    // Elements that cannot be read are left out, not the header.
    ['gzip;q=2', false], ['gzip;q=abc, br', false], ['gzip;q=abc, *;q=0.5, identity;q=0.5', true], ['g zip', false],
    [['br', 'gzip'], true], [['gzip;q=0', 'br'], false]
  ]
  for (const [header, expected] of cases) t.equal(acceptsGzip(header), expected, JSON.stringify(header))
})
