// The files of the group 'routes' (test/groups.ts) in one process.
import { runGroup } from '../group.js'

await runGroup('routes')
