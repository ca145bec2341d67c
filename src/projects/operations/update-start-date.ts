// POST /api/external/v1/projects/update_start_date: set or clear a project's start date.
import { dateOperation } from '../contextual-dates.js'

export default dateOperation({
  edge: 'start',
  route: '/update_start_date',
  operationId: 'updateProjectStartDate',
  summary: "Set a project's start date",
  field: 'start_date',
  action: 'project_start_date_updating',
  event: 'project.start_date_changed',
  notify: false
})
