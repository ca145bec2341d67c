// The files of the group 'modules' (test/groups.ts) in one process.
import { runGroup } from '../group.js'

await runGroup('modules')
