// Runs the test files of a group's folders (test/groups.ts) in this one process,
// one after another, each as a subtest named after its file.
//
// A test process costs seconds of CPU before its first assertion: tap's runner
// and the loader hooks it puts into every test process, tsx, and the app's
// modules, over a thousand of them, each passing through those hooks. Files run
// in a group pay that once. What they give up: they share the process's module
// state (no file of a group may change the process's environment or install
// anything process-wide: such files run alone), and the group's files run in
// sequence, the groups and the files run alone in parallel.
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import tap from 'tap'
import { GROUPS } from './groups.js'
import { runningAs } from './tap.js'

const TEST = fileURLToPath(new URL('.', import.meta.url))

/** The test files under `folder` of test/ (or that file itself), as paths from test/, in order. */
export async function testFilesUnder (folder: string): Promise<string[]> {
  if (folder.endsWith('.test.ts')) return [folder]
  const entries = await readdir(path.join(TEST, folder), { recursive: true })
  return entries.filter((file) => file.endsWith('.test.ts')).map((file) => path.posix.join(folder, file.split(path.sep).join('/'))).sort()
}

/** Runs the files of group `name`, each with the time budget tap gives a file. */
export async function runGroup (name: string): Promise<void> {
  const folders = GROUPS[name]
  if (folders === undefined) throw new Error(`test/groups.ts has no group ${name}`)
  // tap's budget is for one file (TAP_TIMEOUT, in seconds); the group as a whole has none.
  const timeout = Number(process.env.TAP_TIMEOUT ?? 30) * 1000
  tap.setTimeout(0)
  const files = (await Promise.all(folders.map(testFilesUnder))).flat()
  for (const file of files) {
    await tap.test(`test/${file}`, { timeout }, async (t) => {
      runningAs(t)
      await import(pathToFileURL(path.join(TEST, file)).href)
    })
  }
  runningAs(tap)
}
