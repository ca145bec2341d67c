// One raw HTTP request over loopback that always settles: with the answer, with
// the socket error's code (ECONNREFUSED, ECONNRESET…), or as HUNG when nothing
// came back within the liveness bound. For tests of a server that may be going away.
import { request as httpRequest, type Agent } from 'node:http'
import { connect } from 'node:net'

export interface Answer {
  status: number // 0: no HTTP answer
  error: string | null
  body: string
  headers: Record<string, string | string[] | undefined>
  retryAfter: string | undefined
}

export async function send (port: number, method: 'GET' | 'POST', path: string, options: {
  token?: string, body?: unknown, agent?: Agent | false, livenessMs?: number
} = {}): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
  return await new Promise((resolve) => {
    const failed = (error: NodeJS.ErrnoException, body = '') => {
      clearTimeout(timer)
      resolve({ status: 0, error: error.code ?? error.message, body, headers: {}, retryAfter: undefined })
    }
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method,
      path,
      agent: options.agent ?? false,
      headers: {
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        ...(payload === undefined ? {} : { 'content-type': 'application/json' })
      }
    }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => {
        clearTimeout(timer)
        const retry = res.headers['retry-after']
        resolve({ status: res.statusCode ?? 0, error: null, body, headers: res.headers, retryAfter: Array.isArray(retry) ? retry[0] : retry })
      })
      res.on('error', (error: NodeJS.ErrnoException) => failed(error, body))
    })
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('no answer'), { code: 'HUNG' })), options.livenessMs ?? 15_000)
    req.on('error', (error: NodeJS.ErrnoException) => failed(error))
    req.end(payload)
  })
}

export interface RawAnswer extends Answer {
  /** Whether the server closed the connection (rather than the liveness bound or the answer ending it). */
  closed: boolean
  /** From the first byte sent to the settlement. */
  ms: number
  /** Everything received, as latin1 text. */
  raw: string
}

/**
 * Bytes exactly as given, for what `send` cannot say: malformed HTTP, a body that
 * stalls or trickles (`chunks` written `gapMs` apart), a client that goes away
 * (`abortAfterMs`, `reset` for a TCP RST rather than a FIN); `onSent` is called once
 * every chunk has been handed to the kernel. Settles with the
 * final answer (a 100 Continue is skipped) once the server closes the connection,
 * or once the answer is whole if `untilClosed` is false; HUNG past the liveness bound.
 */
export async function sendRaw (port: number, chunks: Array<string | Buffer>, options: {
  gapMs?: number, abortAfterMs?: number, reset?: boolean, livenessMs?: number, untilClosed?: boolean, onSent?: () => void
  /** Called with everything received so far, at each arrival. */
  onData?: (raw: string) => void
} = {}): Promise<RawAnswer> {
  const started = Date.now()
  return await new Promise((resolve) => {
    let received = Buffer.alloc(0)
    let error: string | null = null
    let settled = false
    const timers: NodeJS.Timeout[] = []
    const socket = connect(port, '127.0.0.1')
    const settle = (closed: boolean) => {
      if (settled) return
      settled = true
      for (const timer of timers) clearTimeout(timer)
      socket.destroy()
      resolve({ ...parseAnswer(received), ...(error === null ? {} : { error }), closed, ms: Date.now() - started, raw: received.toString('latin1') })
    }
    socket.on('connect', () => {
      if (chunks.length === 0) options.onSent?.()
      chunks.forEach((chunk, i) => timers.push(setTimeout(() => {
        if (!socket.destroyed) socket.write(chunk, i === chunks.length - 1 ? () => options.onSent?.() : undefined)
      }, i * (options.gapMs ?? 0))))
    })
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data])
      options.onData?.(received.toString('latin1'))
      if (options.untilClosed === false && parseAnswer(received).complete) settle(false)
    })
    socket.on('error', (e: NodeJS.ErrnoException) => { error = e.code ?? e.message })
    socket.on('close', () => settle(true))
    if (options.abortAfterMs !== undefined) {
      timers.push(setTimeout(() => { if (options.reset) socket.resetAndDestroy(); else socket.destroy() }, options.abortAfterMs))
    }
    timers.push(setTimeout(() => { error = 'HUNG'; settle(false) }, options.livenessMs ?? 15_000))
  })
}

/** The last answer in `bytes` (interim 1xx answers skipped); status 0 when there is none. */
function parseAnswer (bytes: Buffer): Answer & { complete: boolean } {
  let rest = bytes
  for (;;) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) return { status: 0, error: rest.length === 0 ? 'no answer' : 'incomplete answer', body: '', headers: {}, retryAfter: undefined, complete: false }
    const [statusLine = '', ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n')
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0)
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const body = rest.subarray(end + 4)
    if (status >= 100 && status < 200) {
      rest = body
      continue
    }
    const length = Number(headers['content-length'] ?? body.length)
    return {
      status,
      error: null,
      body: body.subarray(0, length).toString('utf8'),
      headers,
      retryAfter: headers['retry-after'],
      complete: body.length >= length
    }
  }
}
