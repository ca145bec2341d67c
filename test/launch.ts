// Starts the real server for the tests and the bench, and hands it over once it is
// ready: as a child process (what an operator runs: `npm start`, or the build), or
// the app of `build` listening in this process. Readiness is /health/ready
// answering 200, the same probe a deployment waits on.
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { ConfigSchema } from '../src/config.js'
import { send } from './http.js'
import { waitFor } from './helper.js'
import { transpiledTree } from './transpiled.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** What `npm start` runs: the server from source, tsx as node's loader. */
export const FROM_SOURCE = ['--import=tsx', 'src/server.ts']
/** What `npm run build` emits and the image runs. */
export const BUILT = ['dist/src/server.js']

/**
 * A file of the service transpiled once (test/transpiled.ts), as node's entry: what
 * a test starts when how the service was built is not what it tests. A start takes
 * a third of the CPU a start from source takes.
 */
export async function transpiled (file = 'src/server.js'): Promise<string[]> {
  return [path.join(await transpiledTree(), file)]
}

/** A TCP port on loopback that nothing listens on right now. */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** Whether /health/ready answers 200 on that port now. */
export async function isReady (port: number): Promise<boolean> {
  return (await send(port, 'GET', '/health/ready', { livenessMs: 5000 })).status === 200
}

export interface ServerProcess {
  child: ChildProcess
  pid: number
  port: number
  url: string
  /** Everything the process has written to stdout and stderr so far. */
  output: () => string
  /** The exit code (null when killed by a signal), once the process is gone and all its output read. */
  exited: Promise<number | null>
  /** Waits at most `ms` for the exit; a process still running then is killed and reported as hanging. */
  exitWithin: (ms: number) => Promise<number | null | 'hung'>
  /** SIGTERM, then the exit code; a process still running after `killAfterMs` is killed. */
  stop: (killAfterMs?: number) => Promise<number | null>
}

function tail (text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n')
}

/**
 * Starts `node <entry>` in the repository with none of this process's own
 * configuration variables (tap's DATABASE_URL, say) but `env`, listening on
 * 127.0.0.1 at `port` (a free one by default; `env.PORT` wins). Resolves once
 * /health/ready answers 200, or at once with `waitUntil: 'started'`; throws with
 * the end of its output when it exits first or is not ready within `readyWithinMs`.
 * With `t`, a process still running when that test ends is killed.
 */
export async function launchServer (options: {
  env?: Record<string, string>
  /** Node's entry and its arguments: the server transpiled (`transpiled()`) unless told; FROM_SOURCE is `npm start`'s. */
  entry?: string[]
  nodeArgs?: string[]
  /**
   * Runs `npm <args>` (`['start']`) instead of node, in a process group of its own
   * as a process manager runs it: `pid` is npm's and the group's. A process still
   * running when the test ends is killed with its whole group.
   */
  npm?: string[]
  port?: number
  /** Also writes the output to this file. */
  logFile?: string
  waitUntil?: 'ready' | 'started'
  readyWithinMs?: number
  t?: { teardown: (fn: () => unknown) => void }
} = {}): Promise<ServerProcess> {
  const port = options.port ?? await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(ConfigSchema.properties)) delete env[key]
  // Metrics off unless asked for: processes started side by side would all want port 9464.
  Object.assign(env, { HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0' }, options.env)

  const group = options.npm !== undefined
  const child = group
    ? spawn('npm', options.npm!, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    : spawn(process.execPath, [...(options.nodeArgs ?? []), ...(options.entry ?? await transpiled())], {
      cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe']
    })
  const kill = () => {
    if (!group) child.kill('SIGKILL')
    else try { process.kill(-child.pid!, 'SIGKILL') } catch {} // the group is gone already
  }
  const file = options.logFile === undefined ? undefined : createWriteStream(options.logFile)
  let output = ''
  const collect = (chunk: Buffer) => {
    output += String(chunk)
    file?.write(chunk)
  }
  child.stdout!.on('data', collect)
  child.stderr!.on('data', collect)
  let gone = false
  // 'close' rather than 'exit': by then everything the process wrote has been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => {
    gone = true
    file?.end()
    resolve(code)
  }))
  options.t?.teardown(() => { if (!gone) kill() })

  const exitWithin = async (ms: number): Promise<number | null | 'hung'> => {
    let timer: NodeJS.Timeout | undefined
    const result = await Promise.race([exited, new Promise<'hung'>((resolve) => { timer = setTimeout(() => resolve('hung'), ms) })])
    clearTimeout(timer)
    if (result === 'hung') kill()
    return result
  }
  const stop = async (killAfterMs = 20_000): Promise<number | null> => {
    if (!gone) {
      child.kill('SIGTERM')
      if (await exitWithin(killAfterMs) === 'hung') await exited
    }
    return await exited
  }
  const server: ServerProcess = {
    child, pid: child.pid!, port, url: `http://127.0.0.1:${port}`, output: () => output, exited, exitWithin, stop
  }
  if (options.waitUntil === 'started') return server

  const readyWithinMs = options.readyWithinMs ?? 60_000
  const ready = await waitFor(async () => gone || await isReady(port), readyWithinMs)
  if (gone) throw new Error(`the server exited with ${String(await exited)} before it was ready:\n${tail(output)}`)
  if (!ready) {
    kill()
    throw new Error(`the server was not ready within ${readyWithinMs / 1000} s:\n${tail(output)}`)
  }
  return server
}

/** The app listening on a free loopback port, as a real client reaches it. */
export async function listen (app: FastifyInstance): Promise<{ port: number, url: string }> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { port, url: `http://127.0.0.1:${port}` }
}
