// The bench's settings from the environment (bench/run.ts lists them).

/** A positive number from the environment variable `name`, or `fallback` when it is unset or empty. */
export function positive (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`)
  return value
}
