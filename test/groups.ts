// Which folders (or files) of test/ run as one process each (test/group.ts says why), by the
// name of the group's file in test/groups/. Every other test file is a process of
// its own: the files that start servers and command lines as child processes, that
// set up the process's tracing, or that take minutes alone. package.json's
// `tap.exclude` names the same folders, so that tap does not run their files a
// second time; test/architecture.test.ts checks the two agree.
export const GROUPS: Readonly<Record<string, readonly string[]>> = {
  'routes-projects': ['routes/projects'],
  routes: ['routes/companies', 'routes/notifications', 'routes/people', 'routes/webhooks', 'routes/health.test.ts', 'routes/pages-compression.test.ts'],
  http: ['http', 'auth', 'security'],
  db: ['db'],
  webhooks: ['webhooks'],
  modules: ['mcp', 'metrics', 'projects', 'schemas', 'bench'],
  stress: ['properties', 'load', 'faults']
}
