// POST /api/external/v1/projects/update_due_date: set or clear a project's due date.
import { dateOperation } from '../contextual-dates.js'

export default dateOperation({
  edge: 'end',
  route: '/update_due_date',
  operationId: 'updateProjectDueDate',
  summary: "Set a project's due date",
  field: 'due_date',
  action: 'project_due_date_updating',
  event: 'project.due_date_changed',
  notify: true
})
