// The only body parser: strict UTF-8 JSON. Invalid byte sequences are refused
// instead of being turned into U+FFFD; prototype-poisoning keys, and keys repeated
// within an object (which parsers disagree on), are refused; a body in any content
// coding but identity is refused, not decoded and not taken as it is.
import fp from 'fastify-plugin'
import sjson from 'secure-json-parse'
import { ApiError, invalidInput } from '../errors.js'
import { firstDuplicateKey } from './json-duplicates.js'
import { headerCount } from './raw-headers.js'
import { redactTokens } from '../redact.js'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/** The first charset parameter that is not UTF-8, if any. */
function foreignCharset (contentType: string): string | undefined {
  return [...contentType.matchAll(/;\s*charset\s*=\s*"?([^";\s]*)/gi)]
    .map((m) => m[1] ?? '').find((c) => !/^utf-?8$/i.test(c))
}

/** The first content coding other than identity, if any (`gzip` of `gzip, identity`). */
function foreignCoding (contentEncoding: string): string | undefined {
  return contentEncoding.split(',').map((c) => c.trim()).find((c) => c !== '' && c.toLowerCase() !== 'identity')
}

/** Whether the request says a body follows. */
function hasBody (headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')
}

export default fp(async (fastify) => {
  // The media type and the coding are judged before the body is read, as an
  // unknown type is: a large body in another charset is a 415, not a 413.
  fastify.addHook('preParsing', async (request, _reply, payload) => {
    const contentEncoding = request.headers['content-encoding']
    const coding = contentEncoding === undefined || !hasBody(request.headers) ? undefined : foreignCoding(contentEncoding)
    if (coding !== undefined) {
      throw new ApiError(415, 'unsupported_media_type', `Content-Encoding ${redactTokens(coding.slice(0, 40))} is not supported; send the body uncompressed`)
    }
    // Which of two types would be meant is a guess: a proxy may read the other one.
    if (headerCount(request.raw, 'content-type') > 1) throw new ApiError(415, 'unsupported_media_type', 'send one Content-Type header')
    const contentType = request.headers['content-type']
    if (contentType === undefined || !/^\s*application\/json\s*(;|$)/i.test(contentType)) return payload
    const charset = foreignCharset(contentType)
    if (charset !== undefined) throw new ApiError(415, 'unsupported_media_type', `charset ${redactTokens(charset)} is not supported; send UTF-8 JSON`)
    return payload
  })

  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    let text: string
    try {
      text = utf8.decode(body as Buffer)
    } catch {
      done(new ApiError(400, 'invalid_input', 'body is not valid UTF-8'))
      return
    }
    // The decoder takes one byte order mark off; a second is no JSON (secure-json-parse would take it off too).
    if (text.startsWith('\uFEFF')) {
      done(new ApiError(400, 'invalid_input', 'body must start with at most one byte order mark'))
      return
    }
    if (text.trim() === '') {
      done(new ApiError(400, 'invalid_input', 'body must be a JSON object'))
      return
    }
    let parsed: unknown
    try {
      parsed = sjson.parse(text, { protoAction: 'error', constructorAction: 'error' })
    } catch (error) {
      // Also a pathological document (nested past the stack): bad input, not a crash.
      const message = error instanceof Error ? error.message : ''
      done(new ApiError(400, 'invalid_input', /forbidden prototype property/.test(message)
        ? 'body must not contain the keys __proto__ or constructor.prototype'
        : `body is not valid JSON${error instanceof SyntaxError ? `: ${message}` : ''}`))
      return
    }
    const duplicate = firstDuplicateKey(text)
    if (duplicate !== null) {
      done(invalidInput(redactTokens(duplicate), 'must appear only once in its object'))
      return
    }
    done(null, parsed)
  })
}, { name: 'json-body' })
