// POST /api/external/v1/projects/update_champion: the suite of leader-suite.ts for the champion.
import t from '../../tap.js'
import { build } from '../../helper.js'
import { leaderSuite } from './leader-suite.js'

const { app, db } = await build(t)
await leaderSuite(t, app, db, 'champion')
