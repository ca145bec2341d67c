// The documents' commands, run as a reader runs them. Every ```sh block of README.md
// and docs/*.md is run with bash, in the order of its document, one bash session per
// document (so a block sees the variables the blocks before it set), against one real
// server started as `npm start` starts it, on a new embedded database that loads the
// demo data. A ```text block right after a ```sh block (blank lines between at most)
// is what that block prints. Blocks in any other fence (```shell for commands that
// need a server in the foreground, PostgreSQL, Docker or a stopped server; ```json,
// ```text and the rest for examples) are shown, not run.
//
// The blocks run in a scratch directory standing for the checkout's root, whose
// .data is the server's data directory (so `cat .data/demo.json` reads this server's
// demo), with http://127.0.0.1:3000 replaced by the server's own origin. The
// checkout's package, sources and dependencies are linked into it, so `npm run cli`
// and `npm start` work there as in the checkout. A block may start a second server
// of its own (on another data directory) on port 3001: `:3001` is replaced by a
// free port.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from '../tap.js'
import { ConfigSchema } from '../../src/config.js'
import { writeMigratedDataDir } from '../database.js'
import { FROM_SOURCE, freePort, launchServer } from '../launch.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The origin the documents show; the test's server has its own. */
const DOCUMENTED_ORIGIN = 'http://127.0.0.1:3000'
/** The port a document's own second server listens on, as the documents show it. */
const SECOND_PORT = /(?<=PORT=|127\.0\.0\.1:)3001\b/g
/** What of the checkout the scratch directory links to, so that npm scripts run there. */
const CHECKOUT = ['package.json', 'node_modules', 'src', 'migrations', 'tsconfig.json']
/** Longest one document's commands may take together (operating.md starts a server of its own). */
const DOCUMENT_TIMEOUT_MS = 240_000

// One server, every document's commands and a second server: more than a file's default budget on a busy machine.
t.setTimeout(600_000)

interface Block {
  /** The fence's language: `sh` is run, anything else shown. */
  lang: string
  /** 1-based line of the opening fence. */
  line: number
  /** Last line of the block (its closing fence). */
  end: number
  text: string
}

interface Command extends Block {
  /** What the block prints, when the document shows it. */
  expected?: string
}

/** The fenced code blocks of a Markdown text, indented ones (in lists) included. */
function fencedBlocks (markdown: string): Block[] {
  const lines = markdown.split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!)
    if (open === null) continue
    const [, indent, fence, lang] = open as unknown as [string, string, string, string]
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const close = new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`)
      if (close.test(lines[j]!)) break
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!.trimStart())
    }
    blocks.push({ lang, line: i + 1, end: j + 1, text: body.join('\n') })
    i = j
  }
  return blocks
}

/** The ```sh blocks of a document, each with the output shown right after it. */
function commands (markdown: string): Command[] {
  const lines = markdown.split('\n')
  const blocks = fencedBlocks(markdown)
  const result: Command[] = []
  blocks.forEach((block, i) => {
    if (block.lang !== 'sh') return
    const next = blocks[i + 1]
    const adjacent = next !== undefined && next.lang === 'text' &&
      lines.slice(block.end, next.line - 1).every((line) => line.trim() === '')
    result.push(adjacent ? { ...block, expected: next.text } : block)
  })
  return result
}

const DOCUMENTS = ['README.md', ...(await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
const TEXTS = new Map(await Promise.all(DOCUMENTS.map(async (file) => [file, await readFile(path.join(ROOT, file), 'utf8')] as const)))

interface Run { code: number | null, stdout: string, stderr: string, timedOut: boolean }

/**
 * Runs a bash script in `cwd` with `env`, stdin closed; never rejects. The script
 * runs in a process group of its own, killed whole on a timeout, so that a server a
 * document started in the background does not outlive it.
 */
async function bash (script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  const file = path.join(cwd, `.script-${process.pid}-${Date.now()}.sh`)
  await writeFile(file, script)
  return await new Promise((resolve) => {
    const child = spawn('bash', [file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (chunk) => { stdout += String(chunk) })
    child.stderr.on('data', (chunk) => { stderr += String(chunk) })
    const timer = setTimeout(() => { timedOut = true; process.kill(-child.pid!, 'SIGKILL') }, DOCUMENT_TIMEOUT_MS)
    child.once('close', (code) => {
      clearTimeout(timer)
      rm(file, { force: true }).finally(() => resolve({ code, stdout, stderr, timedOut }))
    })
  })
}

const tail = (text: string, lines = 20) => text.trimEnd().split('\n').slice(-lines).join('\n')

t.test('every runnable command of the documents works as written', async (t) => {
  const work = await mkdtemp(path.join(tmpdir(), 'docs-commands-'))
  t.teardown(() => rm(work, { recursive: true, force: true }))
  for (const name of CHECKOUT) await symlink(path.join(ROOT, name), path.join(work, name))
  const secondPort = String(await freePort())
  // The server holds a metrics port, as the reader's holds the default one.
  const metricsPort = String(await freePort())
  // Migrated already (as `npm start` leaves it, less the demo, which the server loads): the first start itself is server.test.ts's.
  await writeMigratedDataDir(path.join(work, '.data'))
  const server = await launchServer({ t, entry: FROM_SOURCE, env: { DATABASE_URL: '', DATA_DIR: path.join(work, '.data'), LOG_LEVEL: 'warn', METRICS_PORT: metricsPort } })
  t.teardown(() => server.stop())

  // The reader's shell, with none of the server's settings but the default metrics
  // port, which is the server's: a second server there must choose another.
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(ConfigSchema.properties)) delete env[key]
  env.METRICS_PORT = metricsPort

  let ran = 0
  for (const file of DOCUMENTS) {
    const blocks = commands(TEXTS.get(file)!)
    if (blocks.length === 0) continue
    await t.test(file, async (t) => {
      // Markers around each block tell its output and how far the script got.
      const mark = `@@docs-${process.pid}-${Date.now()}`
      const script = ['set -euo pipefail', ...blocks.flatMap((block, i) => [
        `printf '%s\\n' '${mark} start ${i}'`,
        block.text.replaceAll(DOCUMENTED_ORIGIN, server.url).replace(SECOND_PORT, secondPort),
        `printf '\\n%s\\n' '${mark} end ${i}'`
      ])].join('\n')
      const run = await bash(script + '\n', work, env)
      const outputs = new Map<number, string>()
      for (const match of run.stdout.matchAll(new RegExp(`${mark} start (\\d+)\\n([\\s\\S]*?)\\n${mark} end \\1\\n`, 'g'))) {
        outputs.set(Number(match[1]), match[2]!)
      }
      for (const [i, block] of blocks.entries()) {
        const where = `${file}:${block.line}`
        const output = outputs.get(i)
        if (output === undefined) {
          // set -e stopped the session in this block: the blocks after it never ran.
          t.fail(`${where} exits 0`, {
            exitCode: run.code, timedOut: run.timedOut, block: block.text, output: tail(run.stdout.split(`${mark} start ${i}\n`)[1] ?? ''), stderr: tail(run.stderr)
          })
          if (i + 1 < blocks.length) t.fail(`${file}: the ${blocks.length - i - 1} blocks after line ${block.line} are not reached`)
          break
        }
        ran++
        t.pass(`${where} exits 0`)
        if (block.expected !== undefined) {
          t.equal(output.trimEnd(), block.expected.trimEnd(), `${where} prints what the document shows`, { block: block.text })
        }
      }
      if (run.code !== 0 && outputs.size === blocks.length) t.fail(`${file}: bash exits ${run.code}`, { stderr: tail(run.stderr) })
    })
  }
  t.ok(ran >= 10, `the documents' commands ran (${ran} blocks)`)
  t.equal(await server.stop(), 0, 'the server stops cleanly afterwards')
})

t.test('the README and the walkthrough have commands to run', async (t) => {
  t.ok(commands(TEXTS.get('README.md')!).length >= 3, 'README.md')
  t.ok(commands(TEXTS.get('docs/walkthrough.md')!).length >= 10, 'docs/walkthrough.md')
})

t.test('no shown command carries a token, an id or a cursor pasted from another run', async (t) => {
  const pasted = [
    /pat_[A-Za-z0-9_-]{20,}/, // a token
    /whsec_[A-Za-z0-9+/=]{20,}/, // a webhook secret
    /(?<![A-Za-z0-9])[0-9A-Za-z]{22}(?![A-Za-z0-9])/, // a public id (base62 of a UUID)
    /eyJ[A-Za-z0-9_-]{20,}/ // a cursor (base64 of JSON)
  ]
  for (const [file, text] of TEXTS) {
    for (const block of fencedBlocks(text).filter((b) => ['sh', 'shell'].includes(b.lang))) {
      for (const pattern of pasted) t.notMatch(block.text, pattern, `${file}:${block.line} has no ${String(pattern)}`)
    }
  }
})

t.test("docs/api.md's table of operations names every operation of the OpenAPI document", async (t) => {
  const api = TEXTS.get('docs/api.md')!
  const start = api.indexOf('## Operations')
  const rows = api.slice(start, api.indexOf('\n## ', start + 1)).split('\n').filter((line) => line.startsWith('| `'))
  const document = JSON.parse(await readFile(path.join(ROOT, 'openapi.json'), 'utf8')) as { paths: Record<string, unknown> }
  const operations = Object.keys(document.paths).filter((p) => p.startsWith('/api/external/v1/')).map((p) => p.slice('/api/external/v1/'.length))
  t.ok(operations.length >= 30, `${operations.length} operations`)
  for (const operation of operations) {
    const [resource, name] = operation.split('/') as [string, string]
    // A row names an operation whole (`GET projects/get`) or among its resource's (`POST projects/create`, `pause`).
    t.ok(rows.some((row) => row.includes(`${resource}/${name}\``) || (row.includes(` ${resource}/`) && row.includes(`\`${name}\``))), operation)
  }
})

t.test("the README's configuration table names every setting of src/config.ts", async (t) => {
  const readme = TEXTS.get('README.md')!
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1))
  const documented = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]).sort()
  t.same(documented, Object.keys(ConfigSchema.properties).sort())
})

t.test('relative links point at files and headings that exist', async (t) => {
  const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
  const anchors = (text: string) => new Set(text.split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, ''))))
  for (const [file, text] of TEXTS) {
    // Links in code blocks are code, not links.
    const prose = text.replace(/^\s*```[\s\S]*?^\s*```/gm, '')
    for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue
      const [name, anchor] = target!.split('#') as [string, string | undefined]
      const resolved = name === '' ? file : path.normalize(path.join(path.dirname(file), name))
      if (!t.ok(existsSync(path.join(ROOT, resolved)), `${file} → ${target}: ${resolved} exists`)) continue
      if (anchor === undefined || !resolved.endsWith('.md')) continue
      const targetText = TEXTS.get(resolved) ?? await readFile(path.join(ROOT, resolved), 'utf8')
      t.ok(anchors(targetText).has(anchor), `${file} → ${target}: the heading exists`)
    }
  }
})
