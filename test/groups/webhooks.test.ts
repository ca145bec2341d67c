// The files of the group 'webhooks' (test/groups.ts) in one process.
import { runGroup } from '../group.js'

await runGroup('webhooks')
