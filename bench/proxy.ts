// A TCP proxy that delays every chunk by a fixed time in each direction: the
// database behind a network, as in most deployments, where every round trip the
// server makes costs twice the delay. Chunks keep their order (one queue per
// direction, flushed by one timer); nothing is dropped or reordered.
//
// Run as its own process, so that the load generator's event loop does not add to
// the delay: `node --import tsx bench/proxy.ts <delay ms> <target host> <target port>`
// prints `listening <port>` once it accepts connections on 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** Writes each chunk to `to` `delayMs` after it arrived, in arrival order. */
function delayed (from: net.Socket, to: net.Socket, delayMs: number): void {
  const queue: Array<{ due: number, chunk: Buffer }> = []
  let timer: NodeJS.Timeout | null = null
  let ended = false
  const flush = () => {
    timer = null
    const now = performance.now()
    while (queue.length > 0 && queue[0]!.due <= now) to.write(queue.shift()!.chunk)
    if (queue.length > 0) timer = setTimeout(flush, queue[0]!.due - now)
    else if (ended) to.end()
  }
  from.on('data', (chunk: Buffer) => {
    queue.push({ due: performance.now() + delayMs, chunk })
    timer ??= setTimeout(flush, delayMs)
  })
  from.on('end', () => {
    ended = true
    if (queue.length === 0 && timer === null) to.end()
  })
}

export function startProxy (delayMs: number, host: string, port: number): Promise<net.Server> {
  const server = net.createServer((client) => {
    client.setNoDelay(true)
    const upstream = net.connect({ host, port })
    upstream.setNoDelay(true)
    delayed(client, upstream, delayMs)
    delayed(upstream, client, delayMs)
    const close = () => { client.destroy(); upstream.destroy() }
    client.on('error', close)
    upstream.on('error', close)
    client.on('close', () => upstream.end())
    upstream.on('close', () => client.end())
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })
}

export interface ProxyProcess {
  port: number
  pid: number
  stop: () => Promise<void>
}

/** Starts the proxy as a child process and waits for its port. */
export async function spawnProxy (delayMs: number, host: string, port: number): Promise<ProxyProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), String(delayMs), host, String(port)], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const listening = await new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const m = /listening (\d+)/.exec(out)
      if (m) resolve(Number(m[1]))
    })
    child.once('exit', (code) => reject(new Error(`the proxy exited with ${code} before listening`)))
    child.once('error', reject)
  })
  return {
    port: listening,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [delay, host, port] = process.argv.slice(2)
  const ms = Number(delay)
  if (!Number.isFinite(ms) || ms < 0 || !host || !Number.isInteger(Number(port))) {
    process.stderr.write('usage: proxy.ts <delay ms> <target host> <target port>\n')
    process.exit(2)
  }
  const server = await startProxy(ms, host, Number(port))
  process.stdout.write(`listening ${(server.address() as net.AddressInfo).port}\n`)
  process.on('SIGTERM', () => process.exit(0))
}
