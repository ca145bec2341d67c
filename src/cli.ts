// Operator commands: `npm run cli -- <command>` (`node dist/src/cli.js` in the image).
// The commands themselves are in cli/, one file per group.
import { main } from './cli/index.js'

process.exitCode = await main(process.argv.slice(2))
