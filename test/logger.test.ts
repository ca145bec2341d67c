// The process's log (src/logger.ts): each line is on standard output when the call
// that logs it returns, so that an exit, even a sudden one, loses none of them.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from './tap.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

t.test('every line logged before a process dies is on its standard output', async (t) => {
  const script = `
    import { pino } from 'pino'
    import { loadConfig } from './src/config.ts'
    import { logDestination, loggerOptions } from './src/logger.ts'
    const config = loadConfig({ LOG_LEVEL: 'info', LOG_PRETTY: 'false' })
    const log = pino(loggerOptions(config), logDestination(config))
    for (let i = 0; i < 200; i++) log.info({ i }, 'line')
    process.kill(process.pid, 'SIGKILL')
  `
  const child = spawn(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += String(chunk) })
  const signal = await new Promise((resolve) => child.once('close', (_code, signal) => resolve(signal)))
  t.equal(signal, 'SIGKILL', 'it died at once')
  const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { i: number })
  t.same(lines.map((l) => l.i), Array.from({ length: 200 }, (_, i) => i), 'all 200 lines, in order')
})
