// What every command group shares: the two kinds of failure, argument parsing,
// output, and tables. Nothing here loads the database stack.
import { AsyncLocalStorage } from 'node:async_hooks'
import { parseArgs, type ParseArgsConfig } from 'node:util'

/** A command line that asks for something impossible: exit 2, before any database is opened. */
export class UsageError extends Error {}

/** A command that fails for a reason the operator should read, without a stack. */
export class CommandError extends Error {}

export type Options = NonNullable<ParseArgsConfig['options']>
type Output = (text: string) => void

/** Where a command line's results and messages go: the process's stdout and stderr unless `main` is given others. */
export interface Streams { stdout: (text: string) => void, stderr: (text: string) => void }

const PROCESS_STREAMS: Streams = { stdout: (text) => { process.stdout.write(text) }, stderr: (text) => { process.stderr.write(text) } }
/** The streams of the command line running (index.ts's `main` sets them for its run). */
export const commandStreams = new AsyncLocalStorage<Streams>()
const streams = (): Streams => commandStreams.getStore() ?? PROCESS_STREAMS

/** A result, on stdout. */
export const out: Output = (text) => { streams().stdout(text + '\n') }
/** Progress and errors, on stderr. */
export const log: Output = (text) => { streams().stderr(text + '\n') }
/** Text on stdout as it is, without a newline added. */
export const write: Output = (text) => { streams().stdout(text) }

export interface Help { kind: 'help' }

export function parse<O extends Options> (args: string[], options: O, positionals = 0) {
  let parsed
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: positionals > 0 })
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
      throw new UsageError((error as Error).message.replace(/\s*\n\s*/g, ' '))
    }
    throw error
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument '${parsed.positionals[positionals]}'`)
  }
  return parsed
}

export function nonBlank (flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.trim() === '') throw new UsageError(`${flag} must not be blank`)
  return value?.trim()
}

/** A flag the command cannot do without, trimmed and not blank. */
export function required (command: string, flag: string, what: string, value: string | undefined): string {
  const given = nonBlank(flag, value)
  if (given === undefined) throw new UsageError(`${command} needs ${flag} <${what}>`)
  return given
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/
const NAME_MAX_LENGTH = 255

/** A name (of a company, person, space or title) as the API takes names: trimmed, 1 to 255 characters, no control characters. */
export function name (flag: string, value: string): string {
  const trimmed = value.trim()
  if (trimmed === '') throw new UsageError(`${flag} must not be blank`)
  if ([...trimmed].length > NAME_MAX_LENGTH) throw new UsageError(`${flag} must be at most ${NAME_MAX_LENGTH} characters`)
  if (CONTROL.test(trimmed)) throw new UsageError(`${flag} must not contain control characters`)
  return trimmed
}

/** Columns padded to their widest cell. */
export function table (header: string[], rows: string[][]): string {
  const all = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)))
  return all.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')
}
