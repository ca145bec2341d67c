// Turns the captured statements into pgbench scripts and runs them: the ceiling
// PostgreSQL itself sets for the same statements, with no HTTP, JSON or pool in
// between. Each transaction draws a random target of the operation's set from
// bench_targets (\gset), then sends the captured statements with the per-request
// values ($k) replaced by pgbench variables and every other parameter by a literal.
// Parameters go as untyped text, as node-postgres sends them, and with the protocol
// the server used: -M prepared when it sent named statements, -M extended when unnamed.
import { execFile } from 'node:child_process'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { CompiledQuery, sql } from 'kysely'
import type { Db } from '../src/db/index.js'
import { findProject, projectChildrenVersion } from '../src/db/project-aggregate.js'
import { sqlText } from '../src/db/prepared.js'
import { PLAN_CACHE_MODE } from '../src/db/statement-names.js'
import type { Capture, CapturedStatement } from './capture.js'
import { BackendCpu } from './load.js'
import { NAME_PREFIX, PER_CONNECTION, REVISION_MARKER, TARGET_SETS, newDescription, newName, type OperationName, type Target } from './operations.js'

const run = promisify(execFile)

/**
 * The values a request varies, by the pgbench variable that carries each;
 * bench_targets has the first six and `known` as columns (`known`, the version a
 * read's project was at when captured, is written there anew before each replay);
 * `known_children` is looked up with the target.
 */
export function variableValues (target: Target, revision: number, ifMatch?: string, known?: string[], knownChildren?: string[]): Record<string, unknown> {
  return {
    ...(ifMatch === undefined ? {} : { if_match: [ifMatch] }),
    ...(known === undefined ? {} : { known }),
    ...(knownChildren === undefined ? {} : { known_children: knownChildren }),
    project_id: target.projectId,
    public_id: target.publicId,
    person_id: target.personId,
    token_id: target.tokenId,
    digest: target.digest,
    mentions: target.mentions.map((m) => m.id),
    new_name: newName(revision),
    new_description: newDescription(revision, target.mentions)
  }
}

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`

function arrayLiteral (values: readonly unknown[]): string {
  return '{' + values.map((v) => v === null || v === undefined
    ? 'NULL'
    : Array.isArray(v)
      ? arrayLiteral(v)
      : `"${String(v instanceof Date ? v.toISOString() : v).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',') + '}'
}

/**
 * A parameter as an SQL literal. Quoted, so it stays untyped like the text
 * parameter node-postgres sends and PostgreSQL infers its type from the context.
 */
export function literal (value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (Buffer.isBuffer(value)) return `'\\x${value.toString('hex')}'`
  if (value instanceof Date) return quote(value.toISOString())
  if (Array.isArray(value)) return quote(arrayLiteral(value))
  if (typeof value === 'object') return quote(JSON.stringify(value))
  return quote(String(value))
}

/** Whether a captured parameter is the per-request value `b` (a constant otherwise). */
export function same (a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b)
  // An empty list is the same for every target: it stays a literal.
  if (Array.isArray(a) && Array.isArray(b)) return a.length > 0 && a.length === b.length && a.every((v, i) => same(v, b[i]))
  return typeof a === 'string' && a === b
}

export interface Rewritten {
  sql: string
  /** pgbench variables the statement uses. */
  variables: Set<string>
  /** Parameters that became literals although they carry a per-request value inside them. */
  warnings: string[]
}

/** Replaces `$k` outside quotes by a pgbench variable (a per-request value) or a literal (a constant). */
export function rewrite (statement: CapturedStatement, values: Record<string, unknown>): Rewritten {
  const { sql, parameters } = statement
  // pgbench reads `:name` anywhere in the text, quotes included; only `::` is safe.
  const stray = /(^|[^:]):[A-Za-z0-9_]/.exec(sql)
  if (stray) throw new Error(`captured SQL has ${JSON.stringify(stray[0])}, which pgbench would read as a variable: ${sql.slice(0, 200)}`)
  const variables = new Set<string>()
  const warnings: string[] = []
  let out = ''
  let quoteChar: string | null = null
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!
    if (quoteChar) {
      out += c
      if (c === quoteChar) quoteChar = null // a doubled quote closes and reopens: same result
      continue
    }
    if (c === "'" || c === '"') {
      quoteChar = c
      out += c
      continue
    }
    const match = c === '$' ? /^\$(\d+)/.exec(sql.slice(i)) : null
    if (!match) {
      out += c
      continue
    }
    const index = Number(match[1])
    if (index < 1 || index > parameters.length) throw new Error(`captured SQL refers to $${index} but has ${parameters.length} parameters`)
    const value = parameters[index - 1]
    const name = Object.keys(values).find((key) => same(value, values[key]))
    if (name) {
      variables.add(name)
      out += `:${name}`
    } else {
      if (typeof value === 'string' && Object.values(values).some((v) => typeof v === 'string' && v.length > 8 && value.includes(v))) {
        warnings.push(`$${index} embeds a per-request value but is replayed as a constant`)
      }
      out += literal(value)
    }
    i += match[0].length - 1
  }
  return { sql: out, variables, warnings }
}

/** A short name for a statement in reports: the tables it reads and writes. */
export function statementLabel (sql: string): string {
  const names = (re: RegExp) => [...new Set([...sql.matchAll(re)].map((m) => m[1]!))]
  const ctes = new Set(names(/(?:\bwith|,)\s+"?(\w+)"?\s+as\s+(?:not\s+)?(?:materialized\s+)?\(/gi))
  // `for update of "p"` is no write: an UPDATE names its table before SET.
  const writes = [...new Set([...sql.matchAll(/\bupdate\s+"?(\w+)"?(?:\s+as\s+"?\w+"?)?\s+set\b|\binsert\s+into\s+"?(\w+)"?/gi)]
    .map((m) => (m[1] ?? m[2])!))]
  const read = names(/\b(?:from|join)\s+"?(\w+)\b"?(?!\s*\()/gi).filter((t) => !ctes.has(t) && t.toLowerCase() !== 'lateral')
  if (read.length === 0 && writes.length === 0) return sql.trim().split(/\s+/)[0]!.toLowerCase()
  const list = (tables: string[]) => tables.length > 3 ? `${tables.slice(0, 3).join(', ')} and ${tables.length - 3} more` : tables.join(', ')
  return [read.length > 0 ? `reads ${list(read)}` : '', writes.length > 0 ? `writes ${list(writes)}` : ''].filter(Boolean).join('; ')
}

export type Protocol = 'extended' | 'prepared'

export interface Script {
  operation: OperationName
  text: string
  /** The server's protocol: prepared when it named its statements. */
  protocol: Protocol
  /** Labels of the script's commands in order, for pgbench's per-statement latencies. */
  commands: string[]
  warnings: string[]
}

const VARIABLE_NAME = /^[A-Za-z0-9_]+$/

/**
 * The pgbench script of one operation. With `verify`, each statement that returned
 * exactly one row in the capture stores it with \gset, which pgbench fails on when
 * the replay returns none: a wrong digest or id cannot go unnoticed.
 */
export function pgbenchScript (operation: OperationName, capture: Capture, target: Target, targets: number, verify = false): Script {
  const values = variableValues(target, capture.revision, capture.ifMatch, capture.known, capture.knownChildren)
  const conditional = PER_CONNECTION.has(operation)
  const rewritten = capture.statements.map((s) => rewrite(s, values))
  const used = new Set(rewritten.flatMap((r) => [...r.variables]))
  const columns: string[] = []
  for (const name of ['project_id', 'public_id', 'person_id', 'token_id', 'digest', 'mentions', 'known']) {
    if (used.has(name)) columns.push(`t.${name}`)
  }
  // A change's: the version of its project's kept children as they are when the
  // transaction starts (db/project-aggregate.ts, childrenVersion), which the server
  // holds written from its change before: read here, as a change of the run may
  // have changed them (the first description with mentions of a project does).
  if (used.has('known_children')) {
    columns.push(`ARRAY[${sqlText(projectChildrenVersion(sql.ref('t.project_id')))}] AS known_children`)
  }
  if (used.has('new_name')) columns.push(`${quote(NAME_PREFIX)} || :r::text AS new_name`)
  if (used.has('new_description')) columns.push(`replace(t.description, ${quote(REVISION_MARKER)}, :r::text) AS new_description`)
  const set = TARGET_SETS[operation]
  if (used.has('if_match')) columns.push("'{' || g.tag || '}' AS if_match")
  const lines = [
    `-- ${operation}: ${capture.statements.length} statement(s) captured from the server, per-request values from bench_targets (${set})`,
    // A conditional rename: this client's own projects (client k of :clients takes k + 1, k + 1 + :clients, ...; -D clients=N).
    ...(conditional
      ? [`\\set k random(0, (${targets} - 1 - :client_id) / :clients)`, '\\set n 1 + :client_id + :clients * :k']
      : [`\\set n random(1, ${targets})`]),
    '\\set r random(1, 1000000000)'
  ]
  const commands = [...(conditional ? ['\\set k'] : []), '\\set n', '\\set r']
  if (columns.length > 0) {
    const from = used.has('if_match') ? 'bench_targets t JOIN bench_tags g USING (kind, n)' : 'bench_targets t'
    lines.push(`SELECT ${columns.join(', ')} FROM ${from} WHERE t.kind = ${quote(set)} AND t.n = :n \\gset`)
    commands.push(used.has('if_match') ? 'target and tag lookup (bench_targets, bench_tags)' : 'target lookup (bench_targets)')
  }
  rewritten.forEach((r, i) => {
    const statement = capture.statements[i]!
    const names = statement.columns.every((c) => VARIABLE_NAME.test(c))
    if (r.variables.has('if_match')) {
      // The answer's tag is the one the project's next If-Match must carry.
      if (!statement.columns.includes('etag') || !names) throw new Error(`${operation}: the statement with If-Match returns no etag column pgbench can read`)
      lines.push(`${r.sql} \\gset m_`, `UPDATE bench_tags SET tag = :m_etag WHERE kind = ${quote(set)} AND n = :n;`)
      commands.push(statementLabel(statement.sql), 'tag bookkeeping (bench_tags, unlogged)')
      return
    }
    const check = verify && statement.rows === 1 && names
    lines.push(check ? `${r.sql} \\gset v${i + 1}_` : `${r.sql};`)
    commands.push(statementLabel(statement.sql))
  })
  if (conditional && !used.has('if_match')) throw new Error(`${operation}: no captured parameter carries the If-Match tag`)
  const named = capture.statements.filter((st) => st.named).length
  const warnings = rewritten.flatMap((r) => r.warnings)
  // pgbench uses one protocol for a whole script: prepared as soon as the server named
  // any statement, with a warning when it named only some.
  if (named > 0 && named < capture.statements.length) {
    warnings.push(`the server named ${named} of its ${capture.statements.length} statements; pgbench prepares them all`)
  }
  return { operation, text: lines.join('\n') + '\n', protocol: named > 0 ? 'prepared' : 'extended', commands, warnings }
}

export interface PgbenchResult {
  tps: number
  latencyMs: number | null
  failed: number
  /**
   * The median and 99th percentile of the transactions' latencies in ms, from
   * pgbench's log of every transaction (runPgbench only; null without it): what a
   * client of the database alone would see at these clients, beside the server's.
   */
  p50Ms: number | null
  p99Ms: number | null
  /** Average latency of each command in ms, in script order (pgbench -r). */
  statementMs: number[]
  /** CPU ms per transaction of the backends serving the database, and of pgbench itself (runPgbench only). */
  backendCpuMs: number | null
  clientCpuMs: number | null
  output: string
}

export function parsePgbench (output: string): PgbenchResult {
  const number = (re: RegExp) => {
    const m = re.exec(output)
    return m ? Number(m[1]) : null
  }
  const tps = number(/^tps = ([\d.]+)/m)
  if (tps === null) throw new Error(`no tps in pgbench output:\n${output}`)
  const statementMs: number[] = []
  const start = output.search(/^statement latencies in milliseconds/m)
  if (start >= 0) {
    for (const line of output.slice(start).split('\n').slice(1)) {
      const m = /^\s+([\d.]+)\s/.exec(line)
      if (!m) break
      statementMs.push(Number(m[1]))
    }
  }
  return {
    tps,
    latencyMs: number(/^latency average = ([\d.]+) ms/m),
    failed: number(/^number of failed transactions: (\d+)/m) ?? 0,
    statementMs,
    p50Ms: null,
    p99Ms: null,
    backendCpuMs: null,
    clientCpuMs: null,
    output
  }
}

export interface PgbenchOptions {
  binary: string
  url: string
  clients: number
  threads: number
  /** extended: parsed and planned on every call (unnamed statements); prepared: once per connection. */
  protocol: Protocol
}

// The line bash's `times` prints for the shell's children: user and system time.
const CHILD_TIMES = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/

// pgbench's sessions plan the statements as the server's do (src/db/index.ts):
// generic plans, made once per connection.
const SESSION_OPTIONS = `-c plan_cache_mode=${PLAN_CACHE_MODE}`

/** pgbench's output and the CPU seconds it used itself (user + system, from bash's `times`; null without it). */
async function pgbench (options: PgbenchOptions, file: string, args: string[], timeoutMs: number): Promise<{ output: string, cpuSeconds: number | null }> {
  try {
    const { stdout, stderr } = await run('bash', ['-c', '"$0" "$@"; status=$?; times >&2; exit $status', options.binary,
      '-n', '-M', options.protocol, '-c', String(options.clients), '-j', String(Math.min(options.threads, options.clients)),
      '-D', `clients=${options.clients}`,
      ...args, '-f', file, options.url
    ], { maxBuffer: 16 * 1024 * 1024, timeout: timeoutMs, env: { ...process.env, PGOPTIONS: SESSION_OPTIONS } })
    const lines = stderr.trimEnd().split('\n')
    const times = CHILD_TIMES.exec(lines.at(-1) ?? '')
    const output = `${stdout}\n${lines.slice(0, times ? -2 : undefined).join('\n')}`
    return { output, cpuSeconds: times ? Number(times[1]) * 60 + Number(times[2]) + Number(times[3]) * 60 + Number(times[4]) : null }
  } catch (error) {
    const e = error as { stdout?: string, stderr?: string, message: string }
    throw new Error(`pgbench failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`.trim())
  }
}

export async function writeScript (dir: string, name: string, script: Script): Promise<string> {
  const file = path.join(dir, `${name}.sql`)
  await writeFile(file, script.text)
  return file
}

/** Runs the script once (`-t 1`); throws unless the one transaction went through without an error. */
export async function verifyScript (options: PgbenchOptions, file: string): Promise<void> {
  const { output } = await pgbench({ ...options, clients: 1, threads: 1 }, file, ['-t', '1'], 60_000)
  if (!/number of transactions actually processed: 1\/1\b/.test(output) || /number of failed transactions: [1-9]/.test(output)) {
    throw new Error(`pgbench -t 1 did not complete its one transaction:\n${output}`)
  }
}

/**
 * The latencies in ms of the transactions of pgbench's per-transaction log (`-l`):
 * a line per transaction, `client transaction latency_us script epoch_s epoch_us`
 * (a line whose latency is not a number, `skipped` under a rate limit, which this bench
 * does not set, or `failed`, is left out: a failed transaction is counted by pgbench).
 */
export function logLatencies (text: string): number[] {
  const latencies: number[] = []
  for (const line of text.split('\n')) {
    const us = Number(line.split(' ')[2])
    if (line !== '' && Number.isFinite(us)) latencies.push(us / 1000)
  }
  return latencies
}

/** The `p`-th percentile (0 to 1) of `values` by nearest rank, as a latency histogram reads it; null for none. */
export function percentile (values: readonly number[], p: number): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!
}

/**
 * A timed run, with the CPU per transaction of the database's backends (from /proc,
 * as the HTTP runs measure them) and of pgbench itself, and the percentiles of its
 * transactions' latencies (from its log of every transaction, written beside the
 * script and removed once read).
 */
export async function runPgbench (options: PgbenchOptions, file: string, seconds: number): Promise<PgbenchResult> {
  const backends = new BackendCpu(new URL(options.url).pathname.slice(1))
  let backendMs = 0
  const dir = path.dirname(file)
  const prefix = `${path.basename(file, '.sql')}-${options.protocol}-${options.clients}-log`
  const { output, cpuSeconds } = await pgbench(options, file, ['-r', '-T', String(seconds), '-l', `--log-prefix=${path.join(dir, prefix)}`], (seconds + 120) * 1000)
    .finally(() => { backendMs = backends.stop() })
  const latencies: number[] = []
  // One log per pgbench thread: <prefix>.<pid>[.<thread>].
  for (const name of (await readdir(dir)).filter((n) => n.startsWith(`${prefix}.`))) {
    latencies.push(...logLatencies(await readFile(path.join(dir, name), 'utf8')))
    await rm(path.join(dir, name))
  }
  const result = { ...parsePgbench(output), p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) }
  const transactions = Number(/^number of transactions actually processed: (\d+)/m.exec(output)?.[1] ?? 0)
  if (transactions === 0) return result
  return { ...result, backendCpuMs: backendMs / transactions, clientCpuMs: cpuSeconds === null ? null : (1000 * cpuSeconds) / transactions }
}

/**
 * bench_tags: each target's current tag as its champion reads it, for the conditional
 * rename's script (operations.ts, PER_CONNECTION). Unlogged, so that keeping it
 * writes no WAL and forces no flush beside the replayed statement's own. Rebuilt
 * before each run: the runs between change the projects.
 */
export async function writeBenchTags (db: Db, set: string, targets: readonly Target[]): Promise<void> {
  await db.executeQuery(CompiledQuery.raw('CREATE UNLOGGED TABLE IF NOT EXISTS bench_tags (kind text NOT NULL, n int NOT NULL, tag text NOT NULL, PRIMARY KEY (kind, n))'))
  const tags: string[] = []
  for (const target of targets) {
    const project = await findProject(db, target.projectId, target.personId)
    if (!project) throw new Error(`bench_tags: ${target.publicId} is not visible to its champion`)
    tags.push(project.etag)
  }
  await db.executeQuery(CompiledQuery.raw('DELETE FROM bench_tags WHERE kind = $1', [set]))
  await db.executeQuery(CompiledQuery.raw(
    'INSERT INTO bench_tags (kind, n, tag) SELECT $1, n, tag FROM unnest($2::text[]) WITH ORDINALITY AS x(tag, n)', [set, tags]))
}
