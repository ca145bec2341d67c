// The house of docs/architecture.md, checked: every relative import under src/
// runs down the layers or stays in its own, never back up. From the bottom: the
// leaf modules at the root (configuration, errors, ids, the logger, redaction, the
// token's format) and the schemas every resource builds on; the database and
// tracing; HTTP, authentication and metrics; the resources
// (projects, notifications, people, companies, webhooks, health, the demo data);
// and what puts them together (the app, the processes, the command line, MCP).
// And the house of test/: every test file runs once, in its group's process or alone.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from './tap.js'
import ts from 'typescript'
import { testFilesUnder } from './group.js'
import { GROUPS } from './groups.js'

const SRC = fileURLToPath(new URL('../src/', import.meta.url))

const LAYERS: ReadonlyArray<readonly string[]> = [
  ['config.ts', 'errors.ts', 'ids.ts', 'lazy.ts', 'logger.ts', 'redact.ts', 'stop-signals.ts', 'token-format.ts', 'schemas'],
  ['db', 'tracing'],
  ['http', 'auth', 'metrics'],
  ['projects', 'notifications', 'people', 'companies', 'webhooks', 'health', 'demo'],
  ['mcp', 'cli', 'components.ts', 'app.ts', 'server.ts', 'worker.ts', 'cli.ts']
]

/** A file's room: its folder under src/, or its own name at the root. */
const roomOf = (file: string) => file.split('/')[0]!

function layerOf (file: string): number {
  const layer = LAYERS.findIndex((rooms) => rooms.includes(roomOf(file)))
  if (layer === -1) throw new Error(`src/${file} is in no layer of test/architecture.test.ts: give its room one`)
  return layer
}

function sources (dir = ''): string[] {
  return readdirSync(path.join(SRC, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return sources(file)
    return entry.name.endsWith('.ts') ? [file] : []
  })
}

/** The files under src/ that `file` imports (TypeScript's own reading: `from`, a bare `import`, import()), by their paths under src/. */
function importsOf (file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(path.join(SRC, file), 'utf8'), true, true)
  return importedFiles.map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
    .map((specifier) => path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, '.ts'))
    .filter((target) => !target.startsWith('..'))
}

const files = sources()

t.test('every file of src/ is in a layer', async (t) => {
  for (const file of files) t.doesNotThrow(() => layerOf(file), file)
})

t.test('no import runs back up a layer', async (t) => {
  let checked = 0
  for (const file of files) {
    for (const target of importsOf(file)) {
      checked++
      if (layerOf(target) > layerOf(file)) t.fail(`src/${file} imports src/${target}, a layer above it`)
    }
  }
  t.ok(checked > 300, `${checked} imports checked`)
})

t.test('the check sees an import that runs back up', async (t) => {
  t.ok(layerOf('projects/query.ts') > layerOf('db/index.ts'), 'a query imported by the database would be caught')
  t.ok(importsOf('app.ts').includes('components.ts'), 'imports are read with their paths under src/')
})

// ---- The test files' processes (test/group.ts, docs/testing.md) ------------------

/** Every test file, as a path from test/; the files of test/groups/ are the groups themselves. */
const testFiles = async () => (await testFilesUnder('.')).filter((file) => !file.startsWith('groups/'))

t.test("every test file runs once: in one group, or alone where tap's exclude does not name it", async (t) => {
  const tap = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).tap as { exclude: string[] }
  const grouped = Object.values(GROUPS).flat()
  t.same(tap.exclude.filter((glob) => glob.startsWith('test/')).sort(), grouped.map((entry) => entry.endsWith('.test.ts') ? `test/${entry}` : `test/${entry}/**`).sort(),
    "package.json's tap.exclude names the groups' folders and files, and nothing else under test/")
  t.same(readdirSync(new URL('groups/', import.meta.url)).sort(), Object.keys(GROUPS).map((name) => `${name}.test.ts`).sort(), 'test/groups/ has a file for each group')

  const inGroups = (await Promise.all(grouped.map(testFilesUnder))).flat()
  t.equal(new Set(inGroups).size, inGroups.length, 'no file is in two groups')
  const all = await testFiles()
  for (const file of inGroups) t.ok(all.includes(file), `test/${file} exists`)
  t.ok(inGroups.length > 50, `${inGroups.length} of ${all.length} files run in groups`)
})

t.test("every test file takes its t from test/tap.ts, which a group points at the file's own subtest", async (t) => {
  for (const file of await testFiles()) {
    const lines = readFileSync(new URL(file, import.meta.url), 'utf8').split('\n')
    t.ok(lines.filter((line) => line.endsWith(" from 'tap'")).every((line) => line.startsWith('import type ')), `test/${file} takes only types from tap itself`)
    const shim = path.posix.relative(path.posix.dirname(file), 'tap.js')
    t.ok(lines.includes(`import t from '${shim.startsWith('.') ? shim : `./${shim}`}'`), `test/${file} imports t from test/tap.ts`)
  }
})
