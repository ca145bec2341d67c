// The HTTP layer under the routes. A client has a bounded time to send its request
// (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS), then gets 408. What Node.js's parser and
// Fastify's router refuse before any route runs (malformed HTTP, headers too large,
// a malformed path, an Expect other than 100-continue, no Host, a CONNECT) is
// answered in the one error envelope with the headers of every other answer. While shutting down,
// requests already on an open connection are still served, each answer asking its
// client to reconnect, and the connections whose request has not fully arrived are
// closed instead of waited for: Node.js stops enforcing its timeouts once the
// server closes.
import { randomUUID } from 'node:crypto'
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import fp from 'fastify-plugin'
import type { ConnectionError, FastifyError, FastifyHttpOptions, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { ApiError, unavailable } from '../errors.js'
import { headerCount } from './raw-headers.js'
import { allowedMethods } from './errors.js'
import { requestId } from './request-id.js'
import { SECURITY_HEADERS } from './security.js'

/**
 * How much of an answer a response takes before it asks its writer to wait (Node.js's
 * default is 16 KiB): a page of projects, often most of a megabyte, goes to the socket
 * a quarter of a megabyte at a time. Node.js sets the bound of what a request may
 * buffer with it: a body not yet read waits in memory up to this much, less than a
 * body read whole at the default BODY_LIMIT_BYTES (1 MiB).
 */
export const WRITE_HIGH_WATER_MARK = 256 * 1024

/** At shutdown, how long a body still arriving may take before its connection is closed. */
const UPLOAD_GRACE_MS = 1000

// The response each connection is at (its request, its progress) and the id each
// request was given: a failure on a connection is answered and logged as its
// request's. Weak, so they go with their connections.
const responses = new WeakMap<Socket, ServerResponse>()
const requestIds = new WeakMap<IncomingMessage, string>()
// Expect has one expectation defined, 100-continue (RFC 9110 §10.1.1); Node.js also
// takes a list or a longer token containing it for one.
const CONTINUE_ONLY = /^\s*100-continue\s*$/i

function answerHeaders (id: string): Record<string, string> {
  return { ...SECURITY_HEADERS, 'cache-control': 'no-store', 'x-request-id': id }
}

/** A whole HTTP/1.1 answer in the envelope, written straight to a socket. */
function rawAnswer (error: ApiError, id: string): string {
  const body = JSON.stringify(error.body())
  const headers: Record<string, string> = {
    date: new Date().toUTCString(),
    ...answerHeaders(id),
    ...error.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close'
  }
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  return `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode] ?? ''}\r\n${head}\r\n${body}`
}

/**
 * Whether a connection may carry an answer of ours: nothing is being answered on
 * it, or the request that failed is the one being answered and its answer has
 * not begun (an answer given before the body was read, a 401, ends the exchange).
 */
function mayAnswer (res: ServerResponse | undefined): boolean {
  if (res === undefined) return true
  if (res.req.complete) return res.writableFinished
  return !res.headersSent
}

// llhttp's verdicts, in words that name the rule and never the bytes sent.
const MALFORMED: Record<string, string> = {
  HPE_INVALID_HEADER_TOKEN: 'a header name or value has characters HTTP does not allow',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length must be one decimal number',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length must be sent once',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding must end in chunked and must not come with Content-Length',
  HPE_INVALID_CHUNK_SIZE: 'the chunked body is malformed',
  HPE_INVALID_METHOD: 'the method is not valid',
  HPE_INVALID_URL: 'the request target is not valid'
}

function seconds (ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

/**
 * What a client error on a connection is answered with; null for a connection that
 * is gone. `arriving`: the failed request's headers had arrived, its body had not.
 */
function clientErrorAnswer (error: ConnectionError, arriving: boolean, config: Config): ApiError | null {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return arriving
      ? new ApiError(408, 'request_timeout', `the request did not arrive whole within ${seconds(config.REQUEST_TIMEOUT_MS)}`)
      : new ApiError(408, 'request_timeout', `the request headers did not arrive within ${seconds(config.HEADERS_TIMEOUT_MS)}`)
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(431, 'headers_too_large', `the request line and headers are larger than ${maxHeaderSize / 1024} KiB`)
  }
  if (error.code?.startsWith('HPE_') && error.code !== 'HPE_INVALID_EOF_STATE') {
    return new ApiError(400, 'invalid_input', `malformed HTTP request: ${MALFORMED[error.code] ?? 'not valid HTTP/1.1'}`)
  }
  // ECONNRESET, EPIPE, or the client closed its side mid-request (HPE_INVALID_EOF_STATE):
  // nobody left to answer; a request cut off so is logged by http/errors.ts.
  return null
}

/** The options of the Fastify instance (and its Node.js server) that bound and answer what happens before routing. */
export function transportOptions (config: Config): Pick<FastifyHttpOptions<Server>, 'http' | 'requestTimeout' | 'clientErrorHandler' | 'frameworkErrors'> {
  return {
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      // Node.js looks for expired requests this often (30 s by default): a bound
      // is kept to within a quarter of the headers timeout, at most a second.
      connectionsCheckingInterval: Math.min(1000, Math.ceil(config.HEADERS_TIMEOUT_MS / 4)),
      // Node.js answers a missing Host itself, with an empty 400; the hook below answers it in the envelope.
      requireHostHeader: false,
      // The sockets', requests' and responses' bound alike: Node.js sets them together.
      highWaterMark: WRITE_HIGH_WATER_MARK
    },

    // Node.js's parser refused the request, or the client took too long: the
    // socket-level path, where no response object speaks for the connection.
    clientErrorHandler: function (this: FastifyInstance, error: ConnectionError, socket: Socket) {
      const res = responses.get(socket)
      // The failed request, when its headers had arrived; else a new request on the connection failed.
      const failed = res !== undefined && !res.req.complete ? res : undefined
      const answer = clientErrorAnswer(error, failed !== undefined, config)
      if (answer !== null && socket.writable && mayAnswer(res)) {
        const id = (failed === undefined ? undefined : requestIds.get(failed.req)) ?? randomUUID()
        // The parser's error carries the raw bytes (headers, a token): only its code is logged.
        this.log.info({ reqId: id, statusCode: answer.statusCode, code: answer.code, parserCode: error.code }, answer.message)
        socket.write(rawAnswer(answer, id))
      }
      // Closed at once, never ended gracefully: a body arriving later must not be parsed into a request.
      socket.destroy()
    },

    // Fastify's router refused the URL before any route (and so any hook) ran.
    frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
      const answer = error.code === 'FST_ERR_BAD_URL'
        ? new ApiError(400, 'invalid_input', 'the path is not a valid URL: it has a malformed percent escape')
        : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new ApiError(400, 'invalid_input', 'a path segment is too long')
          : new ApiError(500, 'internal', 'internal error')
      if (answer.statusCode >= 500) request.log.error({ err: error }, 'request failed before routing')
      else request.log.info({ code: answer.code, statusCode: answer.statusCode }, answer.message)
      void reply.code(answer.statusCode).headers(answerHeaders(request.id)).send(answer.body())
    }
  }
}

/**
 * Node.js hands a CONNECT (a tunnel request) to 'connect' listeners instead of
 * Fastify, and without one closes the connection unanswered. No path here
 * tunnels: 405 like any method a path does not take, with the path's methods in
 * Allow (none for an authority such as example.com:443, or an unknown path).
 */
function refuseConnect (fastify: FastifyInstance, req: IncomingMessage, socket: Socket): void {
  const target = req.url ?? ''
  const allow = target.startsWith('/') ? allowedMethods(fastify, target) : []
  const answer = new ApiError(405, 'method_not_allowed',
    allow.length > 0 ? `CONNECT is not allowed here; use ${allow.join(' or ')}` : 'CONNECT is not allowed: this server opens no tunnels',
    undefined, { allow: allow.join(', ') })
  const id = requestId(req)
  fastify.log.info({ reqId: id, method: 'CONNECT', statusCode: answer.statusCode, code: answer.code }, answer.message)
  // Node.js took its own listeners off the socket: a reset now must not go unhandled.
  socket.on('error', () => socket.destroy())
  // Whatever the client sends after its request is never read: the answer, then the end.
  if (socket.writable) socket.end(rawAnswer(answer, id), () => socket.destroy())
  else socket.destroy()
}

export default fp(async (fastify) => {
  const server = fastify.server
  const sockets = new Set<Socket>()
  let cutOff: NodeJS.Timeout | undefined
  let closing = false

  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  server.on('request', (req: IncomingMessage, res: ServerResponse) => { responses.set(req.socket, res) })
  // Instead of Node.js's empty 417, the request goes on to Fastify, whose hook below answers it.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => { server.emit('request', req, res) })
  // Expect: 100-continue is answered once the request is authenticated, right before
  // its body is read (preParsing below), not by Node.js on arrival: a client refused
  // (401, 403, 404…) is never asked for its body.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => { server.emit('request', req, res) })
  server.on('connect', (req: IncomingMessage, socket: Socket) => { refuseConnect(fastify, req, socket) })

  // Before the other hooks: these requests are refused whatever their route.
  fastify.addHook('onRequest', async (request, reply) => {
    requestIds.set(request.raw, request.id)
    const expect = request.headers.expect
    // HTTP/1.0 has no Expect: Node.js ignores it there, and so does this.
    if (expect !== undefined && request.raw.httpVersion === '1.1' && !CONTINUE_ONLY.test(expect)) {
      reply.header('connection', 'close')
      throw new ApiError(417, 'expectation_failed', 'Expect may only be 100-continue')
    }
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      reply.header('connection', 'close')
      throw new ApiError(400, 'invalid_input', 'an HTTP/1.1 request must have a Host header')
    }
    // RFC 9112 §3.2: more than one Host is a 400 (Node.js would take the first).
    if (headerCount(request.raw, 'host') > 1) {
      reply.header('connection', 'close')
      throw new ApiError(400, 'invalid_input', 'a request must have one Host header')
    }
  })

  fastify.addHook('preParsing', async (request, reply, payload) => {
    if (request.raw.httpVersion === '1.1' && CONTINUE_ONLY.test(request.headers.expect ?? '') && !reply.raw.headersSent) reply.raw.writeContinue()
    return payload
  })

  // Requests that reach a closing server are served (the database closes after the
  // server), and each answer asks the client to reconnect, so no kept-alive
  // connection holds the shutdown up to its deadline. An answer given before the
  // request's body was read closes its connection too: the body is not waited for,
  // nor is the connection kept for a client that never sends it.
  fastify.addHook('onSend', async (request, reply) => {
    if (closing || request.raw.complete === false) reply.header('connection', 'close')
  })

  // A request whose answer is under way finishes. Node.js closes the connections
  // idle between requests; every other one (a request still arriving, headers
  // not yet whole, nothing sent yet) has UPLOAD_GRACE_MS to become a request in
  // flight, then is closed, with a 503 if its request had begun.
  const inFlight = (res: ServerResponse | undefined) => res !== undefined && res.req.complete && !res.writableFinished
  fastify.addHook('preClose', async () => {
    closing = true
    cutOff = setTimeout(() => {
      for (const socket of sockets) {
        const res = responses.get(socket)
        if (inFlight(res)) continue
        if (res !== undefined && !res.req.complete && !res.headersSent && socket.writable) {
          const answer = unavailable('the server is shutting down; try again')
          const id = requestIds.get(res.req) ?? randomUUID()
          fastify.log.info({ reqId: id, statusCode: 503, code: answer.code }, 'request cut off by the shutdown before it arrived whole')
          socket.write(rawAnswer(answer, id))
        }
        socket.destroy()
      }
    }, UPLOAD_GRACE_MS)
    cutOff.unref()
  })
  fastify.addHook('onClose', async () => { clearTimeout(cutOff) })
}, { name: 'transport' })
