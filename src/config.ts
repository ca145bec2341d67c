// The environment, as one TypeBox schema: validated once at start, typed by Static<>.
import Type, { type StaticDecode } from 'typebox'
import { Value } from 'typebox/value'
import { redactPasswords } from './redact.js'
import { POSTGRES_URL, REDIS_URL, SECONDS_LIST } from './schemas/common.js'
import { propertyDetails } from './schemas/validation.js'

/**
 * The proxies whose X-Forwarded-For is believed, as Fastify's trustProxy takes
 * them: `true` or `false`, or addresses and CIDRs. A hop count is refused: Fastify
 * 5.12 trusts no proxy for one (it cannot tell that the nearest peer is a proxy),
 * so it would silently believe nobody.
 */
type TrustProxy = boolean | string[]

const TrustProxySchema = Type.Codec(Type.String({
  default: 'false',
  description: 'Proxies whose X-Forwarded-For is believed: false, true, or comma-separated addresses/CIDRs',
  pattern: '^(?![0-9]+$)'
})).Decode((value): TrustProxy => {
  if (value === 'true' || value === 'false') return value === 'true'
  return value.split(',').map((entry) => entry.trim()).filter(Boolean)
}).Encode((value) => Array.isArray(value) ? value.join(',') : String(value))

/**
 * The waits before each retry of a webhook delivery, in seconds: after the first
 * attempt fails the second comes after the first wait, and so on; when the list
 * is used up the delivery has failed. Svix's schedule, about a day in all.
 */
const RetryScheduleSchema = Type.Codec(Type.String({
  default: '5,300,1800,7200,18000,36000,36000',
  pattern: SECONDS_LIST,
  description: 'Seconds to wait before each retry of a failed webhook delivery, comma-separated; jittered by up to ±20%'
})).Decode((value): number[] => value.split(',').map((entry) => Number(entry.trim())))
  .Encode((value) => value.join(','))

export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'Address to listen on' }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535, description: 'Port to listen on' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: POSTGRES_URL, description: 'PostgreSQL URL; without it the embedded database under DATA_DIR is used' })),
  DATA_DIR: Type.String({ default: './.data', minLength: 1, description: 'Where the embedded database keeps its files' }),
  DB_POOL_SIZE: Type.Integer({ default: 10, minimum: 1, maximum: 1000, description: 'Connections per process' }),
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 1, description: 'Longest a statement may run' }),
  DB_CONNECTION_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 1, description: 'Longest to wait for a connection' }),
  DB_STATEMENT_CACHE: Type.Boolean({ default: true, description: 'Build the Project\'s statements once and prepare them on each connection; false builds and plans each anew' }),
  ANSWER_CACHE_MB: Type.Integer({ default: 64, minimum: 0, maximum: 65536, description: 'Memory for the answers of reads kept while the database stays as it was (http/answer-cache.ts); 0 keeps none' }),
  BODY_LIMIT_BYTES: Type.Integer({ default: 1048576, minimum: 1024, maximum: 67108864, description: 'Largest request body accepted; larger gets 413' }),
  HEADERS_TIMEOUT_MS: Type.Integer({ default: 10000, minimum: 100, description: "Longest a client may take to send a request's headers; then 408 and the connection is closed" }),
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 30000, minimum: 100, description: 'Longest a client may take to send a whole request, body included; then 408 and the connection is closed. At least HEADERS_TIMEOUT_MS' }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info', description: 'Least severe log level written' }),
  LOG_PRETTY: Type.Optional(Type.Boolean({ description: 'Human-readable logs; default: on when stdout is a terminal and NODE_ENV is not production' })),
  NODE_ENV: Type.String({ default: 'development', description: 'production turns off pretty logs' }),
  RATE_LIMIT_MAX: Type.Integer({ default: 600, minimum: 0, description: 'Requests per token (or per address without one) in each window; 0 turns the limit off' }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ default: 60000, minimum: 1000, description: 'Length of the rate-limit window' }),
  AUTH_FAILURE_LIMIT_MAX: Type.Integer({ default: 20, minimum: 0, description: 'Failed authentications per client address in each window before its requests get 429 without a token lookup (tokens that authenticated before are still served); 0 turns the limit off' }),
  AUTH_FAILURE_LIMIT_WINDOW_MS: Type.Integer({ default: 60000, minimum: 1000, description: 'Length of the failed-authentication window' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: REDIS_URL, description: 'Redis URL; with it all instances share one rate-limit budget' })),
  TRUST_PROXY: TrustProxySchema,
  WEBHOOKS_WORKER: Type.Boolean({ default: true, description: 'Deliver webhooks from this API process; false when separate workers (npm run worker) deliver them' }),
  WEBHOOKS_WORKER_CONCURRENCY: Type.Integer({ default: 10, minimum: 1, maximum: 100, description: 'Deliveries one process makes at once' }),
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: Type.Boolean({ default: false, description: 'Allow http and loopback/private webhook targets: for development and tests only, never in production' }),
  WEBHOOKS_RETRY_SCHEDULE: RetryScheduleSchema,
  WEBHOOKS_ATTEMPT_TIMEOUT_MS: Type.Integer({ default: 10000, minimum: 100, maximum: 60000, description: 'Longest one delivery attempt may take, connection and answer included; then it has failed' }),
  WEBHOOKS_JOB_EXPIRY_SECONDS: Type.Integer({ default: 60, minimum: 2, maximum: 3600, description: 'A delivery job active this long is taken for one whose process died and is run again; at least WEBHOOKS_ATTEMPT_TIMEOUT_MS + 2 × DB_STATEMENT_TIMEOUT_MS' }),
  METRICS_HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'Address the Prometheus metrics endpoint (GET /metrics) listens on' }),
  METRICS_PORT: Type.Integer({ default: 9464, minimum: 0, maximum: 65535, description: 'Port of the Prometheus metrics endpoint, never the API\'s; 0 turns metrics off' }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ default: 25000, minimum: 100, description: 'Longest a shutdown waits for requests in flight before it exits; keep it above DB_CONNECTION_TIMEOUT_MS + 2 × DB_STATEMENT_TIMEOUT_MS' })
})

/** The settings, decoded: TRUST_PROXY as Fastify takes it. */
export type Config = StaticDecode<typeof ConfigSchema>

export class ConfigError extends Error {}

/** Reads the settings from an environment; throws a ConfigError naming each bad variable. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const given: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') given[key] = value
  }
  const config = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, given)) as Record<string, unknown>
  const lines = propertyDetails(ConfigSchema, config).map(({ path, message }) => {
    const name = path.slice(1)
    // A URL's password is never repeated: the message goes to logs and terminals.
    return `${name}=${redactPasswords(JSON.stringify(env[name] ?? ''))}: ${name === 'TRUST_PROXY' ? HOP_COUNT : message}`
  })
  if (lines.length > 0) throw configError(lines)
  const decoded = Value.Decode(ConfigSchema, config)
  // Node.js refuses a headers timeout longer than the request's, which contains it.
  const { HEADERS_TIMEOUT_MS: headers, REQUEST_TIMEOUT_MS: request } = decoded
  if (headers > request) throw configError([`REQUEST_TIMEOUT_MS=${JSON.stringify(String(request))}: must be at least HEADERS_TIMEOUT_MS (${headers})`])
  // A job taken for dead while its attempt still runs would be run twice at once:
  // an attempt is its request and the two statements around it.
  const attemptBound = decoded.WEBHOOKS_ATTEMPT_TIMEOUT_MS + 2 * decoded.DB_STATEMENT_TIMEOUT_MS
  if (decoded.WEBHOOKS_JOB_EXPIRY_SECONDS * 1000 < attemptBound) {
    throw configError([`WEBHOOKS_JOB_EXPIRY_SECONDS=${JSON.stringify(String(decoded.WEBHOOKS_JOB_EXPIRY_SECONDS))}: must be at least WEBHOOKS_ATTEMPT_TIMEOUT_MS + 2 × DB_STATEMENT_TIMEOUT_MS (${attemptBound / 1000} s)`])
  }
  return decoded
}

const HOP_COUNT = 'a hop count is not taken: it would trust no proxy (nothing can tell that the nearest peer is one); give the proxies\' addresses or CIDRs, or true'

/** The settings of a process's environment; a bad one is said on stderr, and the process exits 2. */
export function loadConfigOrExit (): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
      process.exit(2)
    }
    throw error
  }
}

function configError (lines: Iterable<string>): ConfigError {
  return new ConfigError(`invalid configuration:\n  ${[...lines].join('\n  ')}`)
}

/**
 * A listen that failed, said as the setting that chose the port: a port in use or
 * one that needs privileges is the operator's to change, not a crash to read.
 * `off`, when the setting can turn its listener off.
 */
export function listenError (error: unknown, setting: 'PORT' | 'METRICS_PORT', host: string, port: number, off = ''): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
  if (code === 'EADDRINUSE') return new Error(`${setting}=${port}: ${where} is in use by another process (another server?); choose a free port${off}`)
  if (code === 'EACCES') return new Error(`${setting}=${port}: listening on ${where} needs privileges this process lacks; choose a port above 1023${off}`)
  return error
}

/** The URL a client on this machine uses to reach the server (wildcard hosts mean loopback). */
export function localBaseUrl (config: Pick<Config, 'HOST' | 'PORT'>): string {
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`
}
