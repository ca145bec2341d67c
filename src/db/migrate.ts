// Applies the migrations in migrations/ with Kysely's Migrator.
import { promises as fs } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { FileMigrationProvider, Migrator } from 'kysely/migration'
import type { Db } from './index.js'
import { installJobEngine } from './jobs.js'

const migrationFolder = fileURLToPath(new URL('../../migrations', import.meta.url))

function migrator (db: Db): Migrator {
  return new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder })
  })
}

/** The names of the migrations this build ships with, oldest first. */
export async function expectedMigrations (): Promise<string[]> {
  const provider = new FileMigrationProvider({ fs, path, migrationFolder })
  return Object.keys(await provider.getMigrations()).sort()
}

/**
 * Brings the schema up to date, the job engine's too (its schema is pg-boss's own
 * to version); returns the names of the migrations it applied.
 */
export async function migrateToLatest (db: Db): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest()
  if (error) throw error
  await installJobEngine(db)
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
