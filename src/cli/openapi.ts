// `openapi [file]`: the OpenAPI document, without a database.
import { log, parse, write, type Help } from './common.js'

export interface OpenapiCommand { kind: 'openapi', file: string | undefined }

export function parseOpenapi (rest: string[]): OpenapiCommand | Help {
  const { values, positionals } = parse(rest, {}, 1)
  if (values.help) return { kind: 'help' }
  return { kind: 'openapi', file: positionals[0] }
}

/**
 * The document the server serves, from the app built as the server builds it. The
 * configuration is the defaults, not the environment, so that the document is the
 * same wherever it is generated; the database is never connected to.
 */
export async function runOpenapi (file: string | undefined): Promise<void> {
  const [{ default: Fastify }, { default: app, appOptions }, { loadConfig }, { createDb, dbOptions }, { writeFile }] = await Promise.all([
    import('fastify'), import('../app.js'), import('../config.js'), import('../db/index.js'), import('node:fs/promises')
  ])
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0' })
  const db = await createDb(dbOptions({ ...config, DATABASE_URL: 'postgres://never-connected.invalid/openapi' }))
  const server = Fastify(appOptions(config))
  try {
    await server.register(app, { db, config })
    await server.ready()
    const text = JSON.stringify(server.swagger(), null, 2) + '\n'
    if (file === undefined) write(text)
    else await writeFile(file, text)
  } finally {
    await server.close()
    await db.destroy()
  }
  if (file !== undefined) log(`wrote ${file}`)
}
