// The files of the group 'http' (test/groups.ts) in one process.
import { runGroup } from '../group.js'

await runGroup('http')
