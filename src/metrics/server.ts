// The metrics endpoint: GET /metrics on a port of its own (METRICS_HOST,
// METRICS_PORT; 0 turns it off), never on the API's, so that what the API's
// clients can reach never includes it. A plain node:http server: nothing of the
// API's (tokens, rate limits, hooks) applies to it, and it answers nothing else.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { listenError, type Config } from '../config.js'
import { registry } from './registry.js'

/** The server, not yet listening: GET /metrics, and 404 or 405 for anything else. */
export function createMetricsServer (): Server {
  return createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0]
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found; the metrics are at /metrics\n')
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('use GET\n')
      return
    }
    registry.metrics().then((text) => {
      response.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' })
      response.end(request.method === 'HEAD' ? undefined : text)
    }, (error: unknown) => {
      response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics could not be collected: ${String(error)}\n`)
    })
  })
}

export interface MetricsServer {
  /** The port it listens on. */
  port: number
  close: () => Promise<void>
}

/** Listens on METRICS_HOST:METRICS_PORT; null (nothing opened) when METRICS_PORT is 0. */
export async function startMetricsServer (config: Pick<Config, 'METRICS_HOST' | 'METRICS_PORT'>): Promise<MetricsServer | null> {
  if (config.METRICS_PORT === 0) return null
  const server = createMetricsServer()
  // A scraper's keep-alive connection must not hold a shutdown up.
  server.keepAliveTimeout = 5000
  await new Promise<void>((resolve, reject) => {
    const refuse = (error: Error) => { reject(listenError(error, 'METRICS_PORT', config.METRICS_HOST, config.METRICS_PORT, ', or 0 to turn metrics off')) }
    server.once('error', refuse)
    server.listen({ host: config.METRICS_HOST, port: config.METRICS_PORT }, () => {
      server.off('error', refuse)
      resolve()
    })
  })
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
