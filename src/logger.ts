// The log's settings (pino's), for the server and the webhook worker process
// alike: the level and what is never written (credentials); and where its lines
// go: pretty only in development on a terminal, else JSON on standard output.
import { trace } from '@opentelemetry/api'
import { pino, type DestinationStream, type LoggerOptions } from 'pino'
import type { Config } from './config.js'
import { redactTokens } from './redact.js'

function prettyLogs (config: Config): boolean {
  const wanted = config.LOG_PRETTY ?? (process.stdout.isTTY === true && config.NODE_ENV !== 'production')
  if (!wanted) return false
  try {
    import.meta.resolve('pino-pretty') // a development dependency: absent from production images
    return true
  } catch {
    return false
  }
}

/** The trace and span a line is written in, with tracing on (tracing/start.ts): a request's lines carry its trace id. */
function traceFields (): Record<string, string> {
  const span = trace.getActiveSpan()
  if (span === undefined) return {}
  const { traceId, spanId } = span.spanContext()
  return { trace_id: traceId, span_id: spanId }
}

export function loggerOptions (config: Config): LoggerOptions {
  return {
    level: config.LOG_LEVEL,
    mixin: traceFields,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      req: (req) => ({
        method: req.method,
        // A token belongs in the Authorization header, but a client may put one
        // anywhere else: in the URL (percent-encoded or not) or in a header.
        url: redactTokens(req.url),
        remoteAddress: req.ip,
        userAgent: req.headers?.['user-agent'] === undefined ? undefined : redactTokens(req.headers['user-agent'])
      })
    }
  }
}

/**
 * Where the log goes: `logStream` when given (tests), pino-pretty when pretty, else
 * standard output, written synchronously as Node.js writes to files and pipes.
 * pino's own default writes in the background, and a process's exit drops a write
 * still under way: a stop's last line ('shut down') could be lost.
 */
export function logDestination (config: Config, options: { logStream?: DestinationStream } = {}): DestinationStream {
  if (options.logStream !== undefined) return options.logStream
  if (prettyLogs(config)) return pino.transport({ target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } })
  return pino.destination({ dest: 1, sync: true })
}
