// One webhook request over HTTP, with undici: connections only to addresses the
// target policy allows (checked after DNS, on the address connected to), a few
// seconds to connect and a bound on the whole attempt, no redirect followed, and
// at most a few KB of the answer read. What comes back is what the record needs:
// the status and Retry-After, or why there was no answer.
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { contextOf } from '../tracing/context.js'
import { Agent, request } from 'undici'
import { literalRefused, portRefused, publicOnlyLookup, type TargetPolicy } from './targets.js'

/** Longest to wait for a connection (TCP and TLS), within the attempt's bound. */
export const CONNECT_TIMEOUT_MS = 5000

/** Bytes of an answer read, so that its connection may be reused; the rest is dropped. */
export const RESPONSE_READ_BYTES = 4096

const USER_AGENT = 'projects-api-webhooks/1'

/** The connection pool of a worker: every connection it opens is to an allowed address. */
export function deliveryAgent (policy: TargetPolicy, attemptTimeoutMs: number): Agent {
  return new Agent({
    connect: { timeout: Math.min(CONNECT_TIMEOUT_MS, attemptTimeoutMs), lookup: publicOnlyLookup(policy) },
    headersTimeout: attemptTimeoutMs,
    bodyTimeout: attemptTimeoutMs,
    keepAliveTimeout: 4000
  })
}

/**
 * Why a target may not be sent to before any connection is tried: the scheme, port
 * 0, or an IP-literal host (connections to a literal skip the lookup that checks names).
 */
export function targetRefusal (url: URL, policy: TargetPolicy): string | null {
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    return policy.allowPrivate ? 'only http and https targets are allowed' : 'only https targets are allowed (WEBHOOKS_ALLOW_PRIVATE_TARGETS is off)'
  }
  if (portRefused(url) !== null) return 'port 0 is not a port to connect to'
  return literalRefused(url, policy)
}

export interface SendResult {
  /** The answer's status; null when there was none. */
  statusCode: number | null
  retryAfter: string | null
  /** Why the attempt failed when it did not get a 2xx (null for an answer that says it all). */
  error: string | null
  durationMs: number
}

/** Thrown when the caller's signal (a shutdown) ended the request: nothing is known of its outcome. */
export class SendInterrupted extends Error {
  constructor () {
    super('the request was interrupted by a shutdown')
    this.name = 'SendInterrupted'
  }
}

interface ErrorWithCode { code?: string, message?: string, cause?: unknown, name?: string }

/** The first error in a chain of causes that carries a code. */
function coded (error: unknown): ErrorWithCode {
  let e = error as ErrorWithCode | undefined
  for (let depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string') return e
    e = e.cause as ErrorWithCode | undefined
  }
  return (error ?? {}) as ErrorWithCode
}

function describeFailure (error: unknown, host: string, timeoutMs: number): string {
  const e = coded(error)
  switch (e.code) {
    case 'EADDRNOTPUBLIC': return `refused: ${e.message ?? 'not a public address'}`
    case 'ECONNREFUSED': return 'connection refused'
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
    case 'EPIPE': return 'connection closed by the endpoint before it answered'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NODATA': return `${host} could not be resolved`
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT': return `no connection within ${Math.min(CONNECT_TIMEOUT_MS, timeoutMs) / 1000} s`
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT': return `no answer within ${timeoutMs / 1000} s`
    case 'EHOSTUNREACH':
    case 'ENETUNREACH': return 'host unreachable'
  }
  const message = (e.message ?? String(error)).replace(/\s+/g, ' ').slice(0, 300)
  if (e.code !== undefined && /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(e.code)) return `TLS: ${message}`
  return e.code === undefined ? message : `${e.code}: ${message}`
}

const tracer = trace.getTracer('projects-api-webhooks')

/**
 * POSTs the body with its headers. Resolves with the status or the reason there
 * was none; rejects only with SendInterrupted, when `signal` aborted it. With
 * tracing on (tracing/start.ts) the attempt is a client span, in the trace of the
 * request that queued the delivery (`traceParent`) when it was traced, and the
 * request carries its `traceparent` so that the receiver can join the trace; the
 * target's path and query (which may hold the receiver's own secret) are not recorded.
 */
export async function send (agent: Agent, url: URL, headers: Record<string, string>, body: string, options: {
  timeoutMs: number
  signal?: AbortSignal
  traceParent?: string | null
}): Promise<SendResult> {
  const attributes = { 'http.request.method': 'POST', 'server.address': url.hostname, 'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)) }
  return await tracer.startActiveSpan('webhook POST', { kind: SpanKind.CLIENT, attributes }, contextOf(options.traceParent), async (span) => {
    const traceHeaders: Record<string, string> = {}
    propagation.inject(context.active(), traceHeaders)
    try {
      const result = await post(agent, url, { ...headers, ...traceHeaders }, body, options)
      if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode)
      if (result.statusCode === null || result.statusCode >= 300) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? `HTTP ${result.statusCode}` })
      return result
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'interrupted by a shutdown' })
      throw error
    } finally {
      span.end()
    }
  })
}

async function post (agent: Agent, url: URL, headers: Record<string, string>, body: string, options: {
  timeoutMs: number
  signal?: AbortSignal
}): Promise<SendResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs)
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal])
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  try {
    const response = await request(url, {
      dispatcher: agent,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
      body,
      signal
    })
    let read = 0
    try {
      for await (const chunk of response.body) {
        read += (chunk as Buffer).length
        if (read >= RESPONSE_READ_BYTES) break
      }
    } catch {
      // The status is the answer; a body cut short (or too slow) changes nothing.
    } finally {
      response.body.destroy()
    }
    const statusCode = response.statusCode
    const retryAfter = response.headers['retry-after']
    return {
      statusCode,
      retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      error: statusCode >= 300 && statusCode < 400 ? 'redirects are not followed' : null,
      durationMs: elapsed()
    }
  } catch (error) {
    if (options.signal?.aborted === true) throw new SendInterrupted()
    const message = timeout.aborted ? `no answer within ${options.timeoutMs / 1000} s` : describeFailure(error, url.hostname, options.timeoutMs)
    return { statusCode: null, retryAfter: null, error: message, durationMs: elapsed() }
  }
}
