// The files of the group 'routes-projects' (test/groups.ts) in one process.
import { runGroup } from '../group.js'

await runGroup('routes-projects')
