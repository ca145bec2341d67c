// The container files, read as a deployer would: the image runs what `npm run
// build` emits, as a non-root user, with a health check on /health/ready; the
// compose stack starts the API only after a healthy PostgreSQL and a finished
// migration. (Building the image needs a Docker engine; this checks what can
// drift without one.)
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse } from 'yaml'
import { ConfigSchema } from '../src/config.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const dockerfile = await readFile(`${root}/Dockerfile`, 'utf8')
// Compose honours YAML merge keys (<<), as the file uses them.
const compose = parse(await readFile(`${root}/docker-compose.yml`, 'utf8'), { merge: true })
const build = JSON.parse(await readFile(`${root}/tsconfig.build.json`, 'utf8'))
const pkg = JSON.parse(await readFile(`${root}/package.json`, 'utf8'))

t.test('the Dockerfile builds with tsc and runs the emitted server as a non-root user', async (t) => {
  const stages = [...dockerfile.matchAll(/^FROM \S+(?: AS (\S+))?$/gm)]
  t.equal(stages.length, 3, 'build, production dependencies, runtime')
  t.match(dockerfile, /RUN npm run build/)
  t.equal(pkg.scripts.build, 'tsc -p tsconfig.build.json')
  t.equal(build.compilerOptions.outDir, 'dist')
  t.match(dockerfile, /npm ci --omit=dev/)
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.match(runtime, /^USER node$/m)
  t.notMatch(runtime, /COPY (src|test|bench)\b/, 'no sources in the runtime stage')
  t.match(runtime, /HEALTHCHECK .*[\s\S]*\/health\/ready/)
  t.match(runtime, /CMD \["node", "dist\/src\/server\.js"\]/)
  for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
    for (const file of source!.split(' ')) t.ok(existsSync(`${root}/${file}`), `${file} exists`)
  }
  // The paths the image runs are the ones the build emits.
  t.same(build.include, ['src', 'migrations'])
})

t.test('compose: a healthy database, a one-shot migration, then the API', async (t) => {
  const { db, migrate, api } = compose.services
  t.ok(db.healthcheck?.test, 'the database has a health check')
  t.same(migrate.command, ['node', 'dist/src/cli.js', 'migrate'])
  t.equal(migrate.restart, 'no')
  t.same(migrate.depends_on, { db: { condition: 'service_healthy' } })
  t.match(api.depends_on, {
    db: { condition: 'service_healthy' },
    migrate: { condition: 'service_completed_successfully' }
  })
  t.equal(api.environment.HOST, '0.0.0.0')
  t.match(api.environment.DATABASE_URL, /^postgres:\/\/\w+:\w+@db:5432\/\w+$/)
  t.match(api.environment.REDIS_URL, /^redis:\/\/redis:6379$/)
  for (const key of Object.keys(api.environment)) t.ok(key in ConfigSchema.properties, `${key} is a setting the server knows`)
})
