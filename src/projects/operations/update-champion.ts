// POST /api/external/v1/projects/update_champion: update-leader.ts, for the champion.
import { updateLeader } from './update-leader.js'

export default updateLeader('champion')
