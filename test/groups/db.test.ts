// The files of the group 'db' (test/groups.ts) in one process.
import { runGroup } from '../group.js'

await runGroup('db')
