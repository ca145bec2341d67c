// The environment, as one TypeBox schema: validated once at start, typed by Static<>.
import Type, { type Static } from 'typebox'
import { Value } from 'typebox/value'

export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'Address to listen on' }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535, description: 'Port to listen on' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'PostgreSQL URL; without it the embedded database under DATA_DIR is used' })),
  DATA_DIR: Type.String({ default: './.data', minLength: 1, description: 'Where the embedded database keeps its files' }),
  DB_POOL_SIZE: Type.Integer({ default: 10, minimum: 1, maximum: 1000, description: 'Connections per process' }),
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({ default: 10000, minimum: 1, description: 'Longest a statement may run' }),
  DB_CONNECTION_TIMEOUT_MS: Type.Integer({ default: 5000, minimum: 1, description: 'Longest to wait for a connection' }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' })
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {}

/** Reads the settings from an environment; throws a ConfigError naming each bad variable. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const given: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') given[key] = value
  }
  const config = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, given))
  const errors = [...Value.Errors(ConfigSchema, config)]
  if (errors.length > 0) {
    const lines = new Map<string, string>()
    for (const e of errors) {
      const name = e.instancePath.slice(1) || 'environment'
      if (!lines.has(name)) lines.set(name, `${name}=${JSON.stringify(env[name] ?? '')}: ${e.message}`)
    }
    throw new ConfigError(`invalid configuration:\n  ${[...lines.values()].join('\n  ')}`)
  }
  return config as Config
}

/** The URL a client on this machine uses to reach the server (wildcard hosts mean loopback). */
export function localBaseUrl (config: Pick<Config, 'HOST' | 'PORT'>): string {
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`
}
