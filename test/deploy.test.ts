// The container files, read as a deployer would: the image runs what `npm run
// build` emits, as a non-root user, with a health check on /health/ready; the
// compose stack starts the API and the webhook worker only after a healthy
// PostgreSQL and a finished migration. (Building the image needs a Docker engine; this checks what can
// drift without one.)
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import t from './tap.js'
import { parse } from 'yaml'
import { ConfigSchema, loadConfig } from '../src/config.js'

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
  t.match(runtime, /^CMD \["node", (?:"--[\w-]+(?:=\w+)?", )*"dist\/src\/server\.js"\]$/m)
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

t.test('compose: a worker service of the same image delivers the webhooks, after the migration; the API does not', async (t) => {
  const { api, worker, migrate } = compose.services
  t.ok(worker, 'a worker service')
  t.equal(worker.build, api.build, 'built from the same image')
  t.same(worker.command, ['node', 'dist/src/worker.js'])
  t.equal(pkg.scripts['start:worker:prod'], 'node dist/src/worker.js', 'what npm run start:worker:prod runs')
  t.equal(pkg.scripts.worker, 'node --import tsx src/worker.ts', 'node itself, tsx only its loader: no parent relaying signals (test/stop-signals.test.ts)')
  t.ok(existsSync(`${root}/src/worker.ts`), 'the entry the build emits as dist/src/worker.js')
  t.match(worker.depends_on, {
    db: { condition: 'service_healthy' },
    migrate: { condition: 'service_completed_successfully' }
  })
  t.same(migrate.command, ['node', 'dist/src/cli.js', 'migrate'])
  t.equal(worker.environment.DATABASE_URL, api.environment.DATABASE_URL, 'the same database as the API')
  t.equal(api.environment.WEBHOOKS_WORKER, 'false', 'the API leaves delivery to the worker')
  for (const service of [api, worker]) {
    for (const key of Object.keys(service.environment)) t.ok(key in ConfigSchema.properties, `${key} is a setting the processes know`)
    t.not(service.environment.WEBHOOKS_ALLOW_PRIVATE_TARGETS, 'true', 'private webhook targets stay refused')
  }
  t.equal(worker.ports, undefined, 'a worker serves nothing')
  t.same(worker.healthcheck, { disable: true }, 'the image\'s HTTP health check is off for it')
  t.equal(worker.restart, 'unless-stopped')
  const grace = Number(/^(\d+)s$/.exec(worker.stop_grace_period)?.[1])
  t.ok(grace > loadConfig({}).SHUTDOWN_TIMEOUT_MS / 1000, 'compose gives the worker more than the shutdown deadline')
})

t.test('the image runs a supported Node.js line that every production dependency accepts', async (t) => {
  const major = Number(/^ARG NODE_VERSION=(\d+)$/m.exec(dockerfile)?.[1])
  // Even-numbered lines become LTS; 20 reached its end of life on 2026-04-30.
  t.ok(major >= 22 && major % 2 === 0, `Node ${major} is an LTS line after 20`)
  t.equal(pkg.engines.node, '>=22', 'engines says what the dependencies need')
  const lock = JSON.parse(await readFile(`${root}/package-lock.json`, 'utf8')) as {
    packages: Record<string, { dev?: boolean, engines?: { node?: string } }>
  }
  for (const [name, entry] of Object.entries(lock.packages)) {
    if (name === '' || entry.dev === true) continue
    const floor = /^>=\s*(\d+)/.exec(entry.engines?.node ?? '')?.[1]
    if (floor !== undefined) t.ok(Number(floor) <= major, `${name} runs on Node ${major}`)
  }
})

t.test('no development tool ships in the production image', async (t) => {
  for (const tool of ['tsx', 'esbuild', 'typescript', 'tap']) {
    t.notOk(tool in pkg.dependencies, `${tool} is not a production dependency`)
  }
  const lock = JSON.parse(await readFile(`${root}/package-lock.json`, 'utf8')) as { packages: Record<string, { dev?: boolean }> }
  for (const [name, entry] of Object.entries(lock.packages)) {
    if (/node_modules\/(tsx|esbuild|@esbuild\/[^/]+)$/.test(name)) t.equal(entry.dev, true, `${name} is installed for development only`)
  }
  // The runtime starts the build, never the sources through tsx.
  t.notMatch(dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')), /tsx/)
})

t.test('every dependency\'s install script is decided in allowScripts', async (t) => {
  // npm runs a dependency's install script only where package.json's allowScripts allows it (npm 12; npm 11 warns).
  // ssh2 and cpu-features (testcontainers' SSH transport) compile native code nothing here uses.
  const lock = JSON.parse(await readFile(`${root}/package-lock.json`, 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> }
  const scripted = Object.entries(lock.packages).filter(([name, entry]) => name !== '' && entry.hasInstallScript === true)
    .map(([name]) => name.slice(name.lastIndexOf('node_modules/') + 'node_modules/'.length)).sort()
  t.ok(scripted.length > 0, 'the lockfile records install scripts')
  t.same(Object.keys(pkg.allowScripts ?? {}).sort(), scripted, 'each is allowed or denied, and nothing else is listed')
  t.equal(pkg.allowScripts?.esbuild, true, 'esbuild checks its binary')
  for (const name of ['ssh2', 'cpu-features']) t.equal(pkg.allowScripts?.[name], false, `${name} builds nothing`)
})

t.test('the embedded database lives in a declared volume, and docker stop outlasts a shutdown', async (t) => {
  const dataDir = /DATA_DIR=(\S+)/.exec(dockerfile)?.[1]
  t.equal(dataDir, '/var/lib/projects-api')
  t.match(dockerfile, new RegExp(`^VOLUME \\["${dataDir}"\\]$`, 'm'))
  const shutdownSeconds = loadConfig({}).SHUTDOWN_TIMEOUT_MS / 1000
  const runLines = [...dockerfile.matchAll(/^#\s+docker run (.*)$/gm)].map((m) => m[1]!)
  t.ok(runLines.length > 0, 'the header shows how to run the image')
  for (const line of runLines) {
    const stopTimeout = Number(/--stop-timeout (\d+)/.exec(line)?.[1])
    t.ok(stopTimeout > shutdownSeconds, `"docker run ${line}" gives a shutdown ${stopTimeout} s, more than ${shutdownSeconds} s`)
  }
  const grace = Number(/^(\d+)s$/.exec(compose.services.api.stop_grace_period)?.[1])
  t.ok(grace > shutdownSeconds, 'compose gives the API more than the shutdown deadline')
})

// The server's V8 flags keep its resident memory under 200 MB under the bench's load
// (bench/RESULTS.md) by collecting garbage sooner, never by capping the heap: a cap
// would crash the process under many large bodies at once.
t.test('the image and npm run start:prod start the server with the same memory flags, and none caps the heap', async (t) => {
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runtime)![1]!) as string[]
  const flags = cmd.slice(1, -1)
  t.same(flags, ['--max-semi-space-size=8', '--heap-growing-percent=50', '--single-threaded-gc'])
  t.equal(pkg.scripts['start:prod'], `MALLOC_ARENA_MAX=2 node ${flags.join(' ')} dist/src/server.js`, 'what npm run start:prod runs')
  // glibc makes a malloc arena per thread that allocates (the main thread, V8's and
  // libuv's), up to 8 per core, and keeps what each has freed: two bound it, in the
  // environment the process starts with (glibc reads it at the first allocation).
  t.match(runtime, /^ENV [^\n]*(?:\\\n[^\n]*)*MALLOC_ARENA_MAX=2/m, 'the image sets it too')
  t.notOk(compose.services.api.command, 'compose runs the image\'s CMD')
  for (const flag of flags) t.notMatch(flag, /max-old-space|max-heap-size|initial-heap|stack-size/, `${flag} is no heap limit`)
  // This Node.js takes the flags, and the heap's limit with them is the one without.
  const limit = (args: string[]) => {
    const run = spawnSync(process.execPath, [...args, '-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'], { encoding: 'utf8' })
    t.equal(run.status, 0, `node ${args.join(' ')} starts: ${run.stderr}`)
    return Number(run.stdout)
  }
  const plain = limit([])
  const tuned = limit(flags)
  t.ok(plain > 0)
  // The young generation is part of the limit: smaller semi-spaces lower it by their
  // difference (16 MB × 3 against 8 MB × 3), nothing more.
  t.ok(tuned >= plain - 3 * 16 * 2 ** 20, `heap limit ${tuned} against ${plain} without the flags`)
})
