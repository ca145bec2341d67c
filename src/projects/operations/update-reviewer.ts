// POST /api/external/v1/projects/update_reviewer: update-leader.ts, for the reviewer.
import { updateLeader } from './update-leader.js'

export default updateLeader('reviewer')
