// What `seed --demo --json`, the start-up message and DATA_DIR/demo.json show of the
// demo dataset: each demo project's current public id by its demo name, and the
// tokens just issued.
import type { DemoResult } from './load.js'
import { sluggedId } from '../ids.js'

export interface DemoSummary {
  projects: Record<string, string>
  tokens: DemoResult['tokens']
}

export function demoSummary (demo: DemoResult): DemoSummary {
  return {
    projects: Object.fromEntries(Object.entries(demo.projects).map(([demoName, p]) => [demoName, sluggedId(p.id, p.name)])),
    tokens: demo.tokens
  }
}
