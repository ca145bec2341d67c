// The floor under the server's figures: the same requests, answered by the least a
// Node.js server can do with the operation's captured statements (bench/floor-server.ts),
// against the database pgbench replays them in. Its rate beside pgbench's is what
// HTTP, node-postgres and one event loop cost on this machine, before any of the
// server's own work; the server's beside the floor's is what that work costs.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { serialize } from 'node:v8'
import type { Capture } from './capture.js'
import { startServer, type Server } from './load.js'
import { TARGET_SETS, type OperationName, type Target, type TargetSet } from './operations.js'
import { same, variableValues } from './pgbench.js'

/** A captured statement's parameter: a per-request value (bench/pgbench.ts, variableValues) or the captured constant. */
export type FloorParameter = { variable: string } | { value: unknown }

export interface FloorPlan {
  operation: OperationName
  set: TargetSet
  statements: Array<{ sql: string, named: boolean, parameters: FloorParameter[] }>
  targets: Target[]
}

/** The statements of `capture` with each parameter found among its target's per-request values, as pgbench's script takes them. */
export function floorPlan (operation: OperationName, capture: Capture, target: Target, targets: readonly Target[]): FloorPlan {
  const values = variableValues(target, capture.revision, capture.ifMatch, capture.known, capture.knownChildren)
  const statements = capture.statements.map((statement) => ({
    sql: statement.sql,
    named: statement.named,
    parameters: statement.parameters.map((value): FloorParameter => {
      const variable = Object.keys(values).find((name) => same(value, values[name]))
      return variable === undefined ? { value } : { variable }
    })
  }))
  return { operation, set: TARGET_SETS[operation], statements, targets: [...targets] }
}

/** The floor's server for `plan`, on the database at `url`, started as the bench starts the server (production's node flags). */
export async function startFloor (plan: FloorPlan, options: { dir: string, url: string, poolSize: number }): Promise<Server> {
  const file = path.join(options.dir, `${plan.operation}-floor.plan`)
  await writeFile(file, serialize(plan))
  return await startServer({
    entry: 'bench/floor-server.ts',
    nodeArgs: ['--import=tsx'],
    env: { DATABASE_URL: options.url, DB_POOL_SIZE: String(options.poolSize), FLOOR_PLAN: file },
    logFile: path.join(options.dir, `${plan.operation}-floor.log`)
  })
}
