// The servers an A/B compares, each built from its own tree: this working tree, or
// another commit checked out with `git worktree add` into a temporary directory
// with its own `npm ci`. Each tree is built with its own `npm run build`, migrates
// a database with its own CLI (`node dist/src/cli.js migrate`) and starts as its
// own `npm run start:prod` does, so neither side runs the other's code.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { productionStart, type ProductionStart } from './load.js'

export interface Tree {
  /** The side's name in the report and in its database's: `new` (this tree) or `old`. */
  side: 'new' | 'old'
  /** The commit, shortened, and what else the report says of it. */
  commit: string
  label: string
  root: string
  /** The build's server (dist/src/server.js). */
  entry: string
  start: ProductionStart
  /** Removes a checked-out tree (nothing for this one). */
  remove: () => void
}

/**
 * The files a server is built from (its start:prod flags are reported apart): a
 * change elsewhere (bench/, docs, package.json's scripts) leaves it as it was.
 */
const SERVER_FILES = ['src', 'migrations', 'package-lock.json', 'tsconfig.build.json']

function git (root: string, args: string[]): string {
  const result = spawnSync('git', ['-C', root, ...args], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr.trim()}`)
  return result.stdout.replace(/\n$/, '')
}

/** Runs a command in `cwd`, its output in `log` only; throws with the end of the log when it fails. */
function quietly (command: string, args: string[], cwd: string, log: string, options: SpawnSyncOptions = {}): void {
  const result = spawnSync('bash', ['-c', `"$0" "$@" >> ${JSON.stringify(log)} 2>&1`, command, ...args], { cwd, stdio: 'ignore', ...options })
  if (result.status !== 0) {
    const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : ''
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd} (exit ${String(result.status)}):\n${tail}`)
  }
}

/**
 * `npm run build` in a fresh dist/: a file left there by an earlier build (a
 * migration since removed) would otherwise run as part of this one.
 */
function build (root: string, log: string): void {
  rmSync(path.join(root, 'dist'), { recursive: true, force: true })
  quietly('npm', ['run', 'build'], root, log)
}

function tree (side: Tree['side'], root: string, label: string, remove: () => void): Tree {
  return { side, commit: git(root, ['rev-parse', '--short', 'HEAD']), label, root, entry: path.join(root, 'dist/src/server.js'), start: productionStart(root), remove }
}

/**
 * This working tree, built unless `build` is false (dist/ as it is). The report
 * names the last commit that changed the server's files, and what is uncommitted.
 */
export function thisTree (root: string, options: { build: boolean, log: string }): Tree {
  if (options.build) build(root, options.log)
  const [commit, subject] = git(root, ['log', '-1', '--format=%h%x00%s', '--', ...SERVER_FILES]).split('\0')
  const changed = git(root, ['status', '--porcelain', '--', ...SERVER_FILES])
  const dirs = [...new Set(changed.split('\n').filter((l) => l !== '').map((l) => l.slice(3).split('/')[0]))]
  return tree('new', root, `the server of ${commit} (“${subject!.slice(0, 60).trimEnd()}”)${dirs.length === 0 ? '' : ` with uncommitted changes to ${dirs.join(', ')}`}`, () => {})
}

/**
 * `rev` checked out (detached) at `dir`, installed with `npm ci` as its lock file
 * says and built: about a minute or two. remove() takes the worktree away again.
 */
export function otherTree (root: string, rev: string, options: { dir: string, log: string }): Tree {
  const commit = git(root, ['rev-parse', '--verify', `${rev}^{commit}`])
  git(root, ['worktree', 'add', '--detach', options.dir, commit])
  const remove = () => {
    spawnSync('git', ['-C', root, 'worktree', 'remove', '--force', options.dir], { stdio: 'ignore' })
    rmSync(options.dir, { recursive: true, force: true })
    spawnSync('git', ['-C', root, 'worktree', 'prune'], { stdio: 'ignore' })
  }
  try {
    quietly('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], options.dir, options.log)
    build(options.dir, options.log)
    const short = commit.slice(0, 7)
    const subject = git(options.dir, ['log', '-1', '--format=%s']).slice(0, 60)
    return tree('old', options.dir, `${commit.startsWith(rev) ? short : `${short} (${rev})`} (“${subject.trimEnd()}”)`, remove)
  } catch (error) {
    remove()
    throw error
  }
}

/** Brings the database at `url` to the tree's schema with the tree's own migrations. */
export function migrate (tree: Tree, url: string, log: string): void {
  quietly(process.execPath, [path.join(tree.root, 'dist/src/cli.js'), 'migrate'], tree.root, log, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: url, LOG_LEVEL: 'warn' }
  })
}
