// The files of the group 'stress' (test/groups.ts) in one process.
import { runGroup } from '../group.js'

await runGroup('stress')
