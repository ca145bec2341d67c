// The bench's settings from the environment (bench/run.ts lists them) and its flags.

/**
 * The flags of `npm run bench -- <flags>` and what each does: bench/run.ts accepts
 * these and no others, and RESULTS.md's table of options lists them from here.
 */
export const FLAGS: Readonly<Record<string, string>> = {
  '--embedded': 'include the embedded (PGlite) runs (the default)',
  '--no-embedded': 'skip the embedded (PGlite) runs',
  '--no-build': 'skip `npm run build` (measures whatever dist/ holds)',
  '--keep': 'keep the temporary directory (pgbench scripts, server logs, PGlite data)',
  '--drop': 'drop `projects_bench` at the end',
  '--cpu-prof': 'run the server with `--cpu-prof` and keep the profiles (in the kept directory)',
  '--no-delay': 'skip the runs behind the simulated network delay',
  '--no-profile': 'skip the CPU profile of the server, each operation again on a server run with `--cpu-prof`',
  '--no-timings': 'skip the server\'s own clock on each request, each operation again at the lowest connection count on a server run with bench/timings-preload.mjs',
  '--no-unkept': 'skip the reads on a server that keeps no answers (ANSWER_CACHE_MB=0)',
  '--no-webhooks': 'skip the webhook figures (bench/webhooks.ts)'
}

/** A positive number from the environment variable `name`, or `fallback` when it is unset or empty. */
export function positive (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`)
  return value
}
