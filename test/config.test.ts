// The environment as one schema: defaults, conversions, one clear line per bad
// variable, and .env.example documenting exactly the variables the schema knows.
import { readFile } from 'node:fs/promises'
import t from './tap.js'
import { ConfigError, ConfigSchema, loadConfig, localBaseUrl } from '../src/config.js'

t.test('an empty environment gives the documented defaults and no database or Redis URL', async (t) => {
  const config = loadConfig({})
  t.match(config, {
    HOST: '127.0.0.1',
    PORT: 3000,
    DATA_DIR: './.data',
    DB_POOL_SIZE: 10,
    BODY_LIMIT_BYTES: 1048576,
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: 600,
    RATE_LIMIT_WINDOW_MS: 60000,
    TRUST_PROXY: false,
    SHUTDOWN_TIMEOUT_MS: 25000,
    HEADERS_TIMEOUT_MS: 10000,
    REQUEST_TIMEOUT_MS: 30000
  })
  t.equal(config.DATABASE_URL, undefined)
  t.equal(config.REDIS_URL, undefined)
})

t.test('values are converted from their text', async (t) => {
  const config = loadConfig({ PORT: '8080', LOG_PRETTY: 'false', RATE_LIMIT_MAX: '0', DATABASE_URL: 'postgresql://u@h/db', REDIS_URL: 'redis://h:6379' })
  t.equal(config.PORT, 8080)
  t.equal(config.LOG_PRETTY, false)
  t.equal(config.RATE_LIMIT_MAX, 0)
  t.equal(config.DATABASE_URL, 'postgresql://u@h/db')
  t.equal(config.REDIS_URL, 'redis://h:6379')
  t.equal(loadConfig({ DATABASE_URL: '' }).DATABASE_URL, undefined, 'empty means unset')
})

t.test("TRUST_PROXY becomes the value Fastify's trustProxy takes", async (t) => {
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY, true)
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY, false)
  t.throws(() => loadConfig({ TRUST_PROXY: '2' }), { message: /TRUST_PROXY="2": a hop count is not taken: it would trust no proxy/ }, 'a hop count is refused, not silently ignored')
  t.same(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.4 ,,::1' }).TRUST_PROXY, ['10.0.0.0/8', '192.168.1.4', '::1'],
    'addresses and CIDRs, trimmed, empty entries dropped')
  t.same(loadConfig({ TRUST_PROXY: 'loopback' }).TRUST_PROXY, ['loopback'], 'one name is a list of one')
})

t.test('each bad variable is named once, with its value and what it must be, however many there are', async (t) => {
  const expected: Record<string, [string, string]> = {
    PORT: ['70000', 'must be at most 65535'],
    DB_POOL_SIZE: ['ten', 'must be an integer'],
    LOG_LEVEL: ['loud', 'must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"'],
    DATABASE_URL: ['mysql://x', 'must be a postgres:// or postgresql:// URL'],
    REDIS_URL: ['http://x', 'must be a redis:// or rediss:// URL'],
    BODY_LIMIT_BYTES: ['100', 'must be at least 1024'],
    LOG_PRETTY: ['maybe', 'must be a boolean'],
    WEBHOOKS_WORKER_CONCURRENCY: ['0', 'must be at least 1'],
    WEBHOOKS_RETRY_SCHEDULE: ['5,x', 'must be seconds separated by commas (5,300,1800)'],
    // Past eight: TypeBox reports eight errors a check at most.
    METRICS_PORT: ['-1', 'must be at least 0'],
    SHUTDOWN_TIMEOUT_MS: ['soon', 'must be an integer']
  }
  const error = t.throws(() => loadConfig(Object.fromEntries(Object.entries(expected).map(([name, [value]]) => [name, value])))) as ConfigError
  t.ok(error instanceof ConfigError)
  const lines = error.message.split('\n').slice(1).map((line) => line.trim()).sort()
  t.same(lines, Object.entries(expected).map(([name, [value, message]]) => `${name}="${value}": ${message}`).sort())
})

t.test('the client timeouts: converted, bounded below, the headers timeout within the request timeout', async (t) => {
  const config = loadConfig({ HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '1500' })
  t.equal(config.HEADERS_TIMEOUT_MS, 500)
  t.equal(config.REQUEST_TIMEOUT_MS, 1500)
  t.equal(loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '5000' }).REQUEST_TIMEOUT_MS, 5000, 'equal is fine')
  for (const [env, named] of [
    [{ HEADERS_TIMEOUT_MS: '0' }, /HEADERS_TIMEOUT_MS="0": /],
    [{ REQUEST_TIMEOUT_MS: '50' }, /REQUEST_TIMEOUT_MS="50": /],
    [{ HEADERS_TIMEOUT_MS: 'soon' }, /HEADERS_TIMEOUT_MS="soon": /],
    [{ REQUEST_TIMEOUT_MS: '5000' }, /REQUEST_TIMEOUT_MS="5000": must be at least HEADERS_TIMEOUT_MS \(10000\)/],
    [{ HEADERS_TIMEOUT_MS: '40000' }, /REQUEST_TIMEOUT_MS="30000": must be at least HEADERS_TIMEOUT_MS \(40000\)/]
  ] as const) {
    const error = t.throws(() => loadConfig(env)) as ConfigError
    t.ok(error instanceof ConfigError)
    t.match(error.message, named)
    t.equal(error.message.split('\n').length, 2, 'one line')
  }
})

t.test('the webhook settings: the retry schedule decoded to seconds, the attempt bound within the job expiry', async (t) => {
  const defaults = loadConfig({})
  t.match(defaults, {
    WEBHOOKS_WORKER: true,
    WEBHOOKS_WORKER_CONCURRENCY: 10,
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: false,
    WEBHOOKS_ATTEMPT_TIMEOUT_MS: 10000,
    WEBHOOKS_JOB_EXPIRY_SECONDS: 60
  })
  t.same(defaults.WEBHOOKS_RETRY_SCHEDULE, [5, 300, 1800, 7200, 18000, 36000, 36000])
  t.same(loadConfig({ WEBHOOKS_RETRY_SCHEDULE: ' 0.5, 2 ,10' }).WEBHOOKS_RETRY_SCHEDULE, [0.5, 2, 10], 'trimmed, fractions allowed')
  t.same(loadConfig({ WEBHOOKS_RETRY_SCHEDULE: '30' }).WEBHOOKS_RETRY_SCHEDULE, [30], 'one retry')
  t.equal(loadConfig({ WEBHOOKS_ATTEMPT_TIMEOUT_MS: '3000', DB_STATEMENT_TIMEOUT_MS: '1000', WEBHOOKS_JOB_EXPIRY_SECONDS: '5' }).WEBHOOKS_JOB_EXPIRY_SECONDS, 5,
    'an expiry of exactly the attempt and two statements')
  for (const [env, named] of [
    [{ WEBHOOKS_RETRY_SCHEDULE: '5,,10' }, /WEBHOOKS_RETRY_SCHEDULE="5,,10": /],
    [{ WEBHOOKS_RETRY_SCHEDULE: '-5' }, /WEBHOOKS_RETRY_SCHEDULE="-5": /],
    [{ WEBHOOKS_RETRY_SCHEDULE: '5m' }, /WEBHOOKS_RETRY_SCHEDULE="5m": /],
    [{ WEBHOOKS_ATTEMPT_TIMEOUT_MS: '50' }, /WEBHOOKS_ATTEMPT_TIMEOUT_MS="50": /],
    [{ WEBHOOKS_JOB_EXPIRY_SECONDS: '1' }, /WEBHOOKS_JOB_EXPIRY_SECONDS="1": /],
    [{ WEBHOOKS_JOB_EXPIRY_SECONDS: '19' }, /WEBHOOKS_JOB_EXPIRY_SECONDS="19": must be at least WEBHOOKS_ATTEMPT_TIMEOUT_MS \+ 2 × DB_STATEMENT_TIMEOUT_MS \(20 s\)/],
    [{ WEBHOOKS_ATTEMPT_TIMEOUT_MS: '60000' }, /WEBHOOKS_JOB_EXPIRY_SECONDS="60": must be at least .* \(70 s\)/]
  ] as const) {
    const error = t.throws(() => loadConfig(env)) as ConfigError
    t.ok(error instanceof ConfigError)
    t.match(error.message, named)
    t.equal(error.message.split('\n').length, 2, 'one line')
  }
})

t.test('.env.example documents every variable, and only those', async (t) => {
  const text = await readFile(new URL('../.env.example', import.meta.url), 'utf8')
  const documented = [...text.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]).sort()
  t.same(documented, Object.keys(ConfigSchema.properties).sort())
  // The values shown are the defaults.
  const example: Record<string, string> = {}
  for (const m of text.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)) example[m[1]!] = m[2]!
  const defaults = loadConfig({}) as Record<string, unknown>
  for (const [key, value] of Object.entries(example)) {
    if (value === '') t.equal(defaults[key], undefined, `${key} has no default`)
    else t.equal(String(defaults[key]), value, `${key} shows its default`)
  }
})

t.test('localBaseUrl turns wildcard hosts into loopback', async (t) => {
  t.equal(localBaseUrl({ HOST: '0.0.0.0', PORT: 3000 }), 'http://127.0.0.1:3000')
  t.equal(localBaseUrl({ HOST: '::1', PORT: 3000 }), 'http://[::1]:3000')
})
