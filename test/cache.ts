// What the tests make once and keep between runs (the databases' tarballs, the
// transpiled service): each is named by what it is made from, and whatever is no
// longer used goes after a day.
import { readdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'

/**
 * Removes the entries of `folder` matching `names`, other than `keep`, untouched for
 * a day: those of other versions, and what a process that died left half made. No
 * run still needs them (a run touches what it uses).
 */
export async function pruneUnused (folder: string, keep: string, names: RegExp): Promise<void> {
  for (const name of await readdir(folder)) {
    const other = path.join(folder, name)
    if (other === keep || !names.test(name)) continue
    const { mtimeMs } = await stat(other).catch(() => ({ mtimeMs: Date.now() }))
    if (Date.now() - mtimeMs > 86_400_000) await rm(other, { recursive: true, force: true })
  }
}
