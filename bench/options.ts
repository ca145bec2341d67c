// The bench's settings from the environment (bench/run.ts lists them) and its flags.
import { parseArgs } from 'node:util'

/**
 * The flags of `npm run bench -- <flags>` and what each does: bench/run.ts accepts
 * these and no others, and RESULTS.md's table of options lists them from here.
 */
export const FLAGS: Readonly<Record<string, string>> = {
  '--against <rev>': 'A/B: also build the server of that commit (a temporary `git worktree` with its own `npm ci`) and take turns with it on a database of its own',
  '--no-build': 'skip `npm run build` of this tree (measures whatever dist/ holds)',
  '--no-delay': 'skip the runs behind the simulated network delay',
  '--no-webhooks': 'skip the webhook figures (bench/webhooks.ts)',
  '--no-observability': 'skip the cost of metrics and traces (bench/observability.ts)',
  '--keep': 'keep the temporary directory (server logs, the other tree) and the databases',
  '--cpu-prof': 'run the servers with `--cpu-prof`; the profiles are kept in the temporary directory (implies --keep)'
}

export interface Flags {
  against: string | null
  build: boolean
  delay: boolean
  webhooks: boolean
  observability: boolean
  keep: boolean
  cpuProf: boolean
}

export function parseFlags (args: string[]): Flags {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      against: { type: 'string' },
      'no-build': { type: 'boolean' },
      'no-delay': { type: 'boolean' },
      'no-webhooks': { type: 'boolean' },
      'no-observability': { type: 'boolean' },
      keep: { type: 'boolean' },
      'cpu-prof': { type: 'boolean' }
    }
  })
  const cpuProf = values['cpu-prof'] === true
  return {
    against: values.against ?? null,
    build: values['no-build'] !== true,
    delay: values['no-delay'] !== true,
    webhooks: values['no-webhooks'] !== true,
    observability: values['no-observability'] !== true,
    keep: values.keep === true || cpuProf,
    cpuProf
  }
}

/** A positive number from the environment variable `name`, or `fallback` when it is unset or empty. */
export function positive (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`)
  return value
}
