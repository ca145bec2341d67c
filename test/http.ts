// One raw HTTP request over loopback that always settles: with the answer, with
// the socket error's code (ECONNREFUSED, ECONNRESET…), or as HUNG when nothing
// came back within the liveness bound. For tests of a server that may be going away.
import { request as httpRequest, type Agent } from 'node:http'

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
