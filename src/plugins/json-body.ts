// The only body parser: strict UTF-8 JSON. Invalid byte sequences are refused
// instead of being turned into U+FFFD, and prototype-poisoning keys are refused.
import fp from 'fastify-plugin'
import sjson from 'secure-json-parse'
import { ApiError } from '../errors.js'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/** The first charset parameter that is not UTF-8, if any. */
function foreignCharset (contentType: string): string | undefined {
  return [...contentType.matchAll(/;\s*charset\s*=\s*"?([^";\s]*)/gi)]
    .map((m) => m[1] ?? '').find((c) => !/^utf-?8$/i.test(c))
}

export default fp(async (fastify) => {
  // The media type is judged before the body is read, as an unknown type is: a
  // large body in another charset is a 415, not a 413.
  fastify.addHook('preParsing', async (request, _reply, payload) => {
    const contentType = request.headers['content-type']
    if (contentType === undefined || !/^\s*application\/json\s*(;|$)/i.test(contentType)) return payload
    const charset = foreignCharset(contentType)
    if (charset !== undefined) throw new ApiError(415, 'unsupported_media_type', `charset ${charset} is not supported; send UTF-8 JSON`)
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
    if (text.trim() === '') {
      done(new ApiError(400, 'invalid_input', 'body must be a JSON object'))
      return
    }
    try {
      done(null, sjson.parse(text, { protoAction: 'error', constructorAction: 'error' }))
    } catch (error) {
      // Also a pathological document (nested past the stack): bad input, not a crash.
      const message = error instanceof Error ? error.message : ''
      done(new ApiError(400, 'invalid_input', /forbidden prototype property/.test(message)
        ? 'body must not contain the keys __proto__ or constructor.prototype'
        : `body is not valid JSON${error instanceof SyntaxError ? `: ${message}` : ''}`))
    }
  })
}, { name: 'json-body' })
