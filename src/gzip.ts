// gzip (RFC 1952) answers made from pieces compressed one by one: a kept part of
// an answer (a project's shared bytes, a page of notifications) is compressed once,
// as it is kept, and sent compressed to every reader that accepts gzip, beside the
// few bytes written for this request (inflated for one that does not). Each piece is raw DEFLATE (RFC 1951) ending with a sync
// flush: non-final blocks that end on a byte, referring to nothing before them, so
// pieces in any order make one valid stream. The member's CRC-32 is its pieces'
// CRCs combined (zlib's crc32_combine), never a pass over the whole answer.
// Content negotiation (RFC 9110 §12.5.3) is here too: acceptsGzip.
import zlib from 'node:zlib'

/**
 * A piece of an answer, compressed: its DEFLATE blocks, and the CRC-32 and length
 * of the bytes they hold, with what moves a CRC past that many bytes (x^(8 × length)
 * modulo the polynomial), so that a member combines a kept piece's CRC in one
 * multiplication however often it sends it.
 */
export interface Deflated {
  readonly data: Buffer
  /** What the piece holds in memory: its blocks' bytes. */
  readonly byteLength: number
  readonly crc: number
  readonly length: number
  readonly shift: number
}

const POLYNOMIAL = 0xedb88320

// CRC-32 (ISO-HDLC, gzip's), four bytes at a time (slicing by four).
const TABLES = (() => {
  const tables = Array.from({ length: 4 }, () => new Int32Array(256))
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? POLYNOMIAL ^ (c >>> 1) : c >>> 1
    tables[0]![n] = c
  }
  for (let n = 0; n < 256; n++) {
    let c = tables[0]![n]!
    for (let t = 1; t < 4; t++) {
      c = tables[0]![c & 0xff]! ^ (c >>> 8)
      tables[t]![n] = c
    }
  }
  return tables as [Int32Array, Int32Array, Int32Array, Int32Array]
})()

/** The CRC-32 of `bytes`, continuing `crc` (the CRC of the bytes before them). */
export function crc32 (bytes: Uint8Array, crc = 0): number {
  const [t0, t1, t2, t3] = TABLES
  let c = ~crc
  let i = 0
  const four = bytes.length - (bytes.length % 4)
  for (; i < four; i += 4) {
    c ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)
    c = t3[c & 0xff]! ^ t2[(c >>> 8) & 0xff]! ^ t1[(c >>> 16) & 0xff]! ^ t0[c >>> 24]!
  }
  for (; i < bytes.length; i++) c = t0[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}

/** a(x) × b(x) modulo the CRC's polynomial, bits reflected (zlib's multmodp). */
function multiplyModP (a: number, b: number): number {
  let m = 0x80000000
  let p = 0
  for (;;) {
    if ((a & m) !== 0) {
      p ^= b
      if ((a & (m - 1)) === 0) break
    }
    m >>>= 1
    b = b & 1 ? (b >>> 1) ^ POLYNOMIAL : b >>> 1
  }
  return p >>> 0
}

/** x^(2^k) modulo the polynomial, k = 0 … 31 (zlib's x2n_table). */
const X2N = (() => {
  const table = new Uint32Array(32)
  let p = 0x40000000 // x^1
  table[0] = p
  for (let k = 1; k < 32; k++) table[k] = p = multiplyModP(p, p)
  return table
})()

/** x^(n × 2^k) modulo the polynomial (zlib's x2nmodp). */
function xPowerModP (n: number, k: number): number {
  let p = 0x80000000 // x^0
  while (n !== 0) {
    if (n & 1) p = multiplyModP(X2N[k & 31]!, p)
    n = Math.floor(n / 2)
    k++
  }
  return p
}

/** The CRC-32 of A then B, from A's CRC, B's and B's length (zlib's crc32_combine). */
export function crc32Combine (crcA: number, crcB: number, lengthB: number): number {
  return (multiplyModP(xPowerModP(lengthB, 3), crcA) ^ crcB) >>> 0
}

/** A piece of `bytes` whose blocks are `data`. */
function piece (data: Buffer, bytes: Buffer): Deflated {
  return { data, byteLength: data.length, crc: crc32(bytes), length: bytes.length, shift: xPowerModP(bytes.length, 3) }
}

/**
 * `bytes` compressed as a piece: DEFLATE at `level` ending with a sync flush. Its
 * blocks are copied out of zlib's output chunk (16 KiB), which a piece kept for as
 * long as its answer would otherwise hold whole.
 */
export function deflated (bytes: Buffer, level: number): Deflated {
  const out = zlib.deflateRawSync(bytes, { level, finishFlush: zlib.constants.Z_SYNC_FLUSH })
  const data = Buffer.allocUnsafeSlow(out.length)
  out.copy(data)
  return piece(data, bytes)
}

/** The most a stored block holds (RFC 1951 §3.2.4: LEN is 16 bits). */
const STORED_MAX = 0xffff

/** `bytes` as non-final stored blocks, not compressed: a five-byte header before each 64 KiB. */
export function stored (bytes: Buffer): Deflated {
  return piece(storedBlocks(bytes), bytes)
}

/** The blocks of stored(`bytes`), without the CRC a gzip member needs. */
function storedBlocks (bytes: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(bytes.length / STORED_MAX))
  const data = Buffer.allocUnsafe(bytes.length + 5 * blocks)
  let at = 0
  for (let from = 0, b = 0; b < blocks; b++, from += STORED_MAX) {
    const length = Math.min(STORED_MAX, bytes.length - from)
    data[at] = 0 // BFINAL 0, BTYPE 00, then padding to the byte
    data.writeUInt16LE(length, at + 1)
    data.writeUInt16LE(~length & 0xffff, at + 3)
    bytes.copy(data, at + 5, from, from + length)
    at += 5 + length
  }
  return data
}

// The member's header: no name, no time, no extra fields; OS unknown (RFC 1952 §2.3).
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])
// An empty final block of fixed codes: BFINAL 1, BTYPE 01, end-of-block (zlib's Z_FINISH after a sync flush).
const LAST_BLOCK = Buffer.from([0x03, 0x00])

/** One gzip member holding `pieces` in order, as the buffers to send one after the other. */
export function gzipMember (pieces: readonly Deflated[]): Buffer[] {
  const parts: Buffer[] = [HEADER]
  let crc = 0
  let length = 0
  for (const piece of pieces) {
    parts.push(piece.data)
    // crc32Combine, with the piece's shift computed once.
    crc = (multiplyModP(piece.shift, crc) ^ piece.crc) >>> 0
    length += piece.length
  }
  const trailer = Buffer.allocUnsafe(8)
  trailer.writeUInt32LE(crc >>> 0, 0)
  trailer.writeUInt32LE(length % 0x100000000, 4)
  parts.push(LAST_BLOCK, trailer)
  return parts
}

/**
 * The bytes `parts` hold, in order, in one buffer: pieces decompressed, bytes as
 * they are (in stored blocks), in one pass: what a client that does not accept gzip
 * is sent of an answer with kept pieces. Blocks refer to nothing before them, so
 * they inflate as one stream once a last block ends it.
 */
export function inflated (parts: ReadonlyArray<Buffer | Deflated>): Buffer {
  let length = 0
  const blocks: Buffer[] = []
  for (const part of parts) {
    // A piece's length is the bytes it holds, as a Buffer's is.
    length += part.length
    blocks.push(Buffer.isBuffer(part) ? storedBlocks(part) : part.data)
  }
  blocks.push(LAST_BLOCK)
  // One output chunk a little longer than the known length, never a concatenation of
  // zlib's 16 KiB ones (a chunk filled to its end would make zlib allocate another).
  const bytes = zlib.inflateRawSync(Buffer.concat(blocks), { chunkSize: length + 64 })
  if (bytes.length !== length) throw new Error(`kept pieces inflated to ${bytes.length} bytes, not the ${length} they hold`)
  return bytes
}

// An element of Accept-Encoding: a coding (or `*`), then parameters, q among them.
const CODING = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*((?:;[^,]*)?)$/
const WEIGHT = /;\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*(?:;|$)/i

/**
 * Whether an answer to a request with this Accept-Encoding is sent gzip-compressed
 * (RFC 9110 §12.5.3): when gzip (or x-gzip, or `*` that does not name it otherwise)
 * has a weight above 0 and no less than identity's. No header, or one that names
 * neither gzip nor `*`, is an answer as it is. Elements that cannot be read are
 * left out: a header is a preference, never a reason to fail a request.
 */
export function acceptsGzip (header: string | string[] | undefined): boolean {
  if (header === undefined) return false
  const text = Array.isArray(header) ? header.join(',') : header
  let gzip: number | undefined
  let identity: number | undefined
  let any: number | undefined
  for (const element of text.split(',')) {
    const m = CODING.exec(element)
    if (m === null) continue
    const weightText = m[2] === '' ? null : WEIGHT.exec(m[2]!)
    if (weightText === null && m[2] !== '' && /;\s*q\s*=/i.test(m[2]!)) continue
    const weight = weightText === null ? 1 : Number(weightText[1])
    const coding = m[1]!.toLowerCase()
    if (coding === 'gzip' || coding === 'x-gzip') gzip = Math.max(gzip ?? 0, weight)
    else if (coding === 'identity') identity = weight
    else if (coding === '*') any = weight
  }
  const gzipWeight = gzip ?? any ?? 0
  const identityWeight = identity ?? any ?? 1
  return gzipWeight > 0 && gzipWeight >= identityWeight
}
