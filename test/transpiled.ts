// The service transpiled to JavaScript, once per version of its files, for the
// threads and processes the tests start where running from source is not what they
// test. From source, each embedded database's thread and each server registers
// tsx, whose hooks on Node.js 20 run in a thread of their own and see every module
// loaded: a server's start from source takes about 9 s of CPU. Types are not
// checked here (`npm run typecheck` does that). The tree lies under node_modules,
// so that its imports find the packages, and is put in place whole, so that a
// process never runs part of one; trees of other versions go after a day unused
// (test/cache.ts).
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { pruneUnused } from './cache.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** What the service is made of: its TypeScript, and package.json, which it reads. */
const FOLDERS = ['src', 'migrations']

let tree: Promise<string> | undefined

/** The directory holding the transpiled `src/` and `migrations/`, and package.json. */
export function transpiledTree (): Promise<string> {
  tree ??= (async () => {
    const files: string[] = []
    for (const folder of FOLDERS) {
      for (const entry of await readdir(path.join(ROOT, folder), { recursive: true, withFileTypes: true })) {
        if (entry.isFile() && entry.name.endsWith('.ts')) files.push(path.relative(ROOT, path.join(entry.parentPath, entry.name)))
      }
    }
    files.sort()
    const texts = await Promise.all(files.map((file) => readFile(path.join(ROOT, file), 'utf8')))
    const hash = createHash('sha256').update(await readFile(path.join(ROOT, 'package.json')))
    files.forEach((file, i) => hash.update(`\0${file}\0${texts[i]}`))
    const cache = path.join(ROOT, 'node_modules/.cache/projects-api')
    const dir = path.join(cache, `tree-${hash.digest('hex').slice(0, 16)}`)
    if (existsSync(dir)) {
      // Touched, so that it is not pruned while runs still use it.
      const now = new Date()
      await utimes(dir, now, now).catch(() => {})
      return dir
    }
    const { default: ts } = await import('typescript')
    await mkdir(cache, { recursive: true })
    const work = await mkdtemp(path.join(cache, 'building-'))
    const compilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true }
    await Promise.all(files.map(async (file, i) => {
      await mkdir(path.join(work, path.dirname(file)), { recursive: true })
      await writeFile(path.join(work, file.replace(/\.ts$/, '.js')), ts.transpileModule(texts[i]!, { compilerOptions, fileName: file }).outputText)
    }))
    await copyFile(path.join(ROOT, 'package.json'), path.join(work, 'package.json'))
    await rename(work, dir).catch(async (error: NodeJS.ErrnoException) => {
      await rm(work, { recursive: true, force: true })
      // Another process put the same tree there first.
      if (!existsSync(dir)) throw error
    })
    await pruneUnused(cache, dir, /^(tree-|building-)/)
    return dir
  })()
  tree.catch(() => { tree = undefined })
  return tree
}
