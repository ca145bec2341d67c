// The MCP tools, one entry each: Operately's tool name, the HTTP operation it runs
// and how it behaves. Its arguments are the operation's inputs (the route's body
// or query schema, read from the registered route: catalog.ts) and its result the
// operation's 200 answer, so a new operation becomes a tool by one entry here:
//
//   { name: 'pause_project', title: 'Pause Project', description: '…', hints: WRITE,
//     operation: 'POST /api/external/v1/projects/pause', markdown: ['message'] }
//
// Where Operately's tool takes its arguments otherwise than the API (an ISO day for a
// contextual date, an argument left out to clear), `days` and `clearable` say so.
//
// search and fetch answer in the shape ChatGPT's connectors call (ids, titles and
// URLs; one document as text), built from projects/list and projects/get.
import Type, { type TSchema } from 'typebox'
import { ApiError, invalidInput } from '../errors.js'
import type { Project } from '../projects/schemas.js'

/** The MCP tool annotations: what a client may assume before calling. */
export interface Hints {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

export const READ: Hints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
/** A change that calling twice leaves as calling once (set a name, mark as read). */
export const WRITE: Hints = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
/** A change that each call makes anew (create). */
export const CREATE: Hints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
/** A change that removes or ends something (close, delete). */
export const DESTRUCTIVE: Hints = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }

/** An HTTP operation of the API: method and path. */
export type Operation = `${'GET' | 'POST'} /api/external/v1/${string}`

/** What a custom tool may do: run an operation as the caller (its 200 body, or throws its ApiError). */
export interface ToolContext {
  run: (operation: Operation, input: Record<string, unknown>) => Promise<Record<string, unknown>>
  /** The origin the client called, for URLs in answers. */
  origin: string
}

export interface ToolSpec {
  name: string
  title: string
  description: string
  hints: Hints
  operation: Operation
  /** The operation's inputs the tool takes; all of them when absent. */
  inputs?: string[]
  /** Arguments named otherwise than the operation's inputs: argument → input. */
  renamed?: Record<string, string>
  /** Arguments taken as Markdown and sent as the rich-text document (JSON text) the operation stores. */
  markdown?: string[]
  /** Arguments taken as a day (YYYY-MM-DD) and sent as that day's contextual date (`{date, date_type: 'day', value}`). */
  days?: string[]
  /** Arguments that may be left out, the operation then being sent null (Operately's "omit it to clear"). */
  clearable?: string[]
  /** A tool whose arguments and answer are its own, made from the operation's answers. */
  custom?: { input: TSchema, output: TSchema, call: (args: Record<string, unknown>, context: ToolContext) => Promise<Record<string, unknown>> }
}

const projectUrl = (origin: string, id: string) => `${origin}/api/external/v1/projects/get?id=${encodeURIComponent(id)}`

/** At most this many projects are looked through by one search (pages of 100 of projects/list). */
const SEARCH_PAGES = 10

const SearchInput = Type.Object({
  query: Type.String({ description: 'Words of the project name to look for (case-insensitive)' })
}, { additionalProperties: false })

const SearchOutput = Type.Object({
  results: Type.Array(Type.Object({
    id: Type.String({ description: 'Project id, for fetch' }),
    title: Type.String(),
    url: Type.String({ description: 'The project in the API' })
  }, { additionalProperties: false }), { description: 'By name; only projects the person can see' })
}, { additionalProperties: false })

async function search (args: Record<string, unknown>, { run, origin }: ToolContext): Promise<Record<string, unknown>> {
  const query = String(args.query).trim().toLowerCase()
  if (query === '') throw invalidInput('/query', 'must not be blank')
  const words = query.split(/\s+/)
  const results: Array<{ id: string, title: string, url: string }> = []
  let cursor: string | null = null
  for (let page = 0; page < SEARCH_PAGES && (page === 0 || cursor !== null); page++) {
    const answer = await run('GET /api/external/v1/projects/list', { limit: '100', ...(cursor === null ? {} : { cursor }) })
    for (const project of answer.projects as Project[]) {
      const name = project.name.toLowerCase()
      if (words.every((word) => name.includes(word))) results.push({ id: project.id, title: project.name, url: projectUrl(origin, project.id) })
    }
    cursor = answer.next_cursor as string | null
  }
  return { results }
}

const FetchInput = Type.Object({
  id: Type.String({ description: 'A project id, as search returns it' })
}, { additionalProperties: false })

const FetchOutput = Type.Object({
  id: Type.String(),
  title: Type.String(),
  text: Type.String({ description: 'The whole project as Markdown' }),
  url: Type.String(),
  metadata: Type.Object({
    space: Type.String(),
    state: Type.String(),
    status: Type.String(),
    privacy: Type.String(),
    updated_at: Type.String()
  }, { additionalProperties: false })
}, { additionalProperties: false })

async function fetchProject (args: Record<string, unknown>, { run, origin }: ToolContext): Promise<Record<string, unknown>> {
  const answer = await run('GET /api/external/v1/projects/get', { id: args.id, include_markdown: 'true' })
  const project = answer.project as Project
  if (typeof answer.markdown !== 'string') throw new ApiError(500, 'internal', 'internal error')
  return {
    id: project.id,
    title: project.name,
    text: answer.markdown,
    url: projectUrl(origin, project.id),
    metadata: { space: project.space.name, state: project.state, status: project.status, privacy: project.privacy, updated_at: project.updated_at }
  }
}

const NOTIFY = { notify_person_ids: 'subscriber_ids', notify_everyone: 'send_notifications_to_everyone' }

export const TOOLS: ToolSpec[] = [
  {
    name: 'get_me',
    title: 'Get My Profile',
    description: 'Returns the person the token acts for.',
    hints: READ,
    operation: 'GET /api/external/v1/people/get_me',
    inputs: []
  },
  {
    name: 'get_current_company',
    title: 'Get Current Company',
    description: "Returns the person's company; include_admins and include_people add its administrators and people.",
    hints: READ,
    operation: 'GET /api/external/v1/companies/get',
    inputs: ['include_admins', 'include_people']
  },
  {
    name: 'list_projects',
    title: 'List Projects',
    description: 'Lists the projects the person can see, by name, a page at a time (pass next_cursor as cursor for the next), with optional filters.',
    hints: READ,
    operation: 'GET /api/external/v1/projects/list',
    inputs: ['space_id', 'goal_id', 'only_my_projects', 'only_reviewed_by_me', 'include_archived', 'limit', 'cursor']
  },
  {
    name: 'get_project',
    title: 'Get Project',
    description: 'Returns one project by id; with include_markdown, also the whole project as Markdown.',
    hints: READ,
    operation: 'GET /api/external/v1/projects/get',
    inputs: ['id', 'include_markdown'],
    renamed: { project_id: 'id' }
  },
  {
    name: 'update_project_name',
    title: 'Update Project Name',
    description: 'Renames one project the person may edit.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/update_name'
  },
  {
    name: 'update_project_description',
    title: 'Update Project Description',
    description: 'Replaces the description of one project the person may edit with Markdown (an empty string clears it). ' +
      'Mention a person by id as @[Full Name](person_id): they are subscribed to the project and notified.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/update_description',
    markdown: ['description']
  },
  {
    name: 'create_project',
    title: 'Create Project',
    description: 'Creates a project in a space where the person may edit, with an optional champion, reviewer, goal and ' +
      'Markdown description. Access levels left out are the space\'s defaults (nobody outside the company; the company ' +
      'as the space gives it access; the space\'s members at least comment).',
    hints: CREATE,
    operation: 'POST /api/external/v1/projects/create',
    markdown: ['description']
  },
  {
    name: 'update_project_champion',
    title: 'Update Project Champion',
    description: 'Sets the champion of one project the person has full access to; leave champion_id out to clear it.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/update_champion',
    clearable: ['champion_id']
  },
  {
    name: 'update_project_reviewer',
    title: 'Update Project Reviewer',
    description: 'Sets the reviewer of one project the person has full access to; leave reviewer_id out to clear it.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/update_reviewer',
    clearable: ['reviewer_id']
  },
  {
    name: 'update_project_start_date',
    title: 'Update Project Start Date',
    description: 'Sets the start date of one project the person may edit to a day (YYYY-MM-DD); leave start_date out to clear it.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/update_start_date',
    days: ['start_date'],
    clearable: ['start_date']
  },
  {
    name: 'update_project_due_date',
    title: 'Update Project Due Date',
    description: 'Sets the due date of one project the person may edit to a day (YYYY-MM-DD); leave due_date out to clear it.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/update_due_date',
    days: ['due_date'],
    clearable: ['due_date']
  },
  {
    name: 'update_project_goal',
    title: 'Update Project Goal',
    description: 'Connects one project the person may edit to a goal of the company; leave goal_id out to disconnect it.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/update_parent_goal',
    clearable: ['goal_id']
  },
  {
    name: 'move_project_to_space',
    title: 'Move Project To Space',
    description: 'Moves one project the person has full access to into another space of its company they can see.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/move_to_space'
  },
  {
    name: 'pause_project',
    title: 'Pause Project',
    description: 'Pauses one active project the person may edit, saying why in Markdown; notify_person_ids and ' +
      'notify_everyone choose who is told.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/pause',
    renamed: NOTIFY,
    markdown: ['message']
  },
  {
    name: 'resume_project',
    title: 'Resume Project',
    description: 'Resumes one paused project the person may edit, saying why in Markdown; notify_person_ids and ' +
      'notify_everyone choose who is told.',
    hints: WRITE,
    operation: 'POST /api/external/v1/projects/resume',
    renamed: NOTIFY,
    markdown: ['message']
  },
  {
    name: 'close_project',
    title: 'Close Project',
    description: 'Closes one project the person may edit as achieved or missed, with a Markdown retrospective; ' +
      'notify_person_ids and notify_everyone choose who is told.',
    hints: DESTRUCTIVE,
    operation: 'POST /api/external/v1/projects/close',
    renamed: NOTIFY,
    markdown: ['retrospective']
  },
  {
    name: 'delete_project',
    title: 'Delete Project',
    description: 'Deletes one project the person has full access to, for good, with everything it holds; answers it as it was.',
    hints: DESTRUCTIVE,
    operation: 'POST /api/external/v1/projects/delete'
  },
  {
    name: 'list_notifications',
    title: 'List Notifications',
    description: "Lists the person's notifications, newest first, read ones too, a page at a time.",
    hints: READ,
    operation: 'GET /api/external/v1/notifications/list'
  },
  {
    name: 'mark_notifications_read',
    title: 'Mark Notifications Read',
    description: "Marks the listed notifications of the person as read: all or none (an unknown id marks nothing).",
    hints: WRITE,
    operation: 'POST /api/external/v1/notifications/mark_many_as_read'
  },
  {
    name: 'search',
    title: 'Search Projects',
    description: 'Searches the projects the person can see by name; returns their ids, titles and URLs.',
    hints: READ,
    operation: 'GET /api/external/v1/projects/list',
    custom: { input: SearchInput, output: SearchOutput, call: search }
  },
  {
    name: 'fetch',
    title: 'Fetch Project',
    description: 'Fetches one project by the id search returned, as Markdown text with its URL and metadata.',
    hints: READ,
    operation: 'GET /api/external/v1/projects/get',
    custom: { input: FetchInput, output: FetchOutput, call: fetchProject }
  }
]
