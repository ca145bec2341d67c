// Traces, received as a collector receives them: an OTLP/HTTP (JSON) receiver in
// this process, tracing started from the OTEL_* variables as the server starts
// it (before pg and fastify load), then a request: its span, its statements as
// child spans, its trace id in its log lines, and a webhook delivery whose attempt
// is a span of the trace of the request that queued it, carrying its traceparent.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from '../tap.js'
import { startTracing, tracingWanted } from '../../src/tracing/start.js'

interface Attribute { key: string, value: { stringValue?: string, intValue?: number | string } }
interface Span { traceId: string, spanId: string, parentSpanId?: string, name: string, kind: number, attributes: Attribute[] }

const received: Span[] = []
const receiver = createServer((request, response) => {
  let body = ''
  request.setEncoding('utf8')
  request.on('data', (chunk: string) => { body += chunk })
  request.on('end', () => {
    if (request.url === '/v1/traces' && request.headers['content-type'] === 'application/json') {
      const payload = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }> }
      for (const resource of payload.resourceSpans) for (const scope of resource.scopeSpans) received.push(...scope.spans)
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => { receiver.closeAllConnections(); receiver.close(() => resolve()) }))

process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json'
const tracing = startTracing('projects-api-test')!
t.teardown(() => tracing.shutdown())

// Loaded only now, as the server's entry loads them after tracing/api.ts.
const { build, createCompany, createPerson, createProject, createSpace, addContributor, tokenFor } = await import('../helper.js')
const { shortId } = await import('../../src/ids.js')
const support = await import('../webhooks/support.js')

const attribute = (span: Span, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue))
}

t.test('tracing is on only when the OTEL_* variables ask for it', async (t) => {
  t.equal(tracingWanted({}), false)
  t.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true)
  t.equal(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true)
  t.equal(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' }), true)
  t.equal(tracingWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), false)
  t.equal(tracingWanted({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), false)
  t.equal(startTracing('x', {}), null)
})

t.test("a request's span, its statements as child spans, and its trace id in its log lines", async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const { app, db } = await build(t, {
    env: { LOG_LEVEL: 'info' },
    logStream: { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } }
  })
  const company = await createCompany(db)
  const person = await createPerson(db, company.id)
  const space = await createSpace(db, company.id, [person.id])
  const project = await createProject(db, space, { name: 'Traced', access: { space: 70 } })
  await addContributor(db, project.id, person.id, 'champion')
  const token = (await tokenFor(db, person.email)).token
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const answer = await fetch(`${base}/api/external/v1/projects/get?id=traced-${shortId(project.id)}`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(answer.status, 200)
  const requestId = answer.headers.get('x-request-id')
  await tracing.flush()

  const root = received.find((s) => s.kind === 2 && attribute(s, 'http.route') === '/api/external/v1/projects/get')
  t.ok(root, 'a server span for the request, named by its route template')
  if (root === undefined) return
  t.equal(root.parentSpanId ?? '', '', 'the request span is the root of its trace')
  t.equal(attribute(root, 'http.request.method'), 'GET')
  t.equal(attribute(root, 'http.response.status_code'), 200)
  const trace = received.filter((s) => s.traceId === root.traceId)
  const byId = new Map(trace.map((s) => [s.spanId, s]))
  const descends = (span: Span) => {
    for (let s: Span | undefined = span; s !== undefined; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) {
      if (s.spanId === root.spanId) return true
    }
    return false
  }
  const statements = trace.filter((s) => attribute(s, 'db.system') === 'postgresql' || attribute(s, 'db.system.name') === 'postgresql')
  if (process.env.DATABASE_URL !== undefined) {
    t.ok(statements.length >= 2, `the token lookup and the project's read are spans (${statements.length})`)
    t.ok(statements.every(descends), "every statement's span descends from the request's")
    t.ok(statements.every((s) => s.kind === 3), 'client spans')
    t.ok(statements.some((s) => /SELECT/i.test(String(attribute(s, 'db.statement') ?? attribute(s, 'db.query.text') ?? ''))), 'the statement text')
  }
  t.notOk(JSON.stringify(trace).includes(token), 'no token in any span')
  const own = lines.filter((line) => line.reqId === requestId)
  t.ok(own.length >= 2, 'the request wrote lines')
  t.ok(own.filter((line) => line.msg !== 'incoming request').every((line) => line.trace_id === root.traceId), "every line after its arrival carries the request's trace id")
})

t.test("a webhook delivery is a span of the trace of the request that queued it, and carries its traceparent", async (t) => {
  const fixture = await support.deliveryFixture(t)
  const receiverOfHooks = await support.startReceiver(t)
  const hook = await support.insertWebhook(fixture.db, fixture.company.id, receiverOfHooks.url, { events: ['project.renamed'] })
  await support.startWorker(t, fixture.db, fixture.config)
  t.equal((await fixture.api.updateName({ project_id: fixture.project.publicId, name: 'Traced hook' })).statusCode, 200)
  t.ok(await receiverOfHooks.waitForRequests(1))
  const traceparent = receiverOfHooks.requests[0]!.headers.traceparent ?? ''
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent)
  t.ok(match, `a W3C traceparent (${traceparent})`)
  // The attempt's span ends with its answer, before the outcome is recorded.
  t.ok(await support.waitForDeliveries(fixture.db, hook.id, (rows) => rows[0]?.status === 'delivered'))
  await tracing.flush()
  const span = received.find((s) => s.spanId === match?.[2])
  t.ok(span, 'the span it names was exported')
  t.equal(span?.traceId, match?.[1])
  t.equal(span?.name, 'webhook POST')
  t.equal(span?.kind, 3, 'a client span')
  t.equal(span === undefined ? undefined : attribute(span, 'http.response.status_code'), 200)

  // The rename's request span, and the delivery's stored trace, are those of the attempt.
  const rename = received.find((s) => s.kind === 2 && attribute(s, 'http.route') === '/api/external/v1/projects/update_name')
  t.ok(rename, "the rename's request span")
  t.equal(span?.traceId, rename?.traceId, "the attempt is in the rename's trace")
  const stored = await fixture.db.selectFrom('webhook_deliveries').where('webhook_id', '=', hook.id).select('trace_parent').executeTakeFirstOrThrow()
  const [, storedTrace, storedParent] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(stored.trace_parent ?? '') ?? []
  t.equal(storedTrace, rename?.traceId, "the delivery stores the rename's trace")
  t.equal(span?.parentSpanId, storedParent, 'the attempt descends from the span that queued it')
  const byId = new Map(received.map((s) => [s.spanId, s]))
  let ancestor: Span | undefined = span
  while (ancestor?.parentSpanId && ancestor.spanId !== rename?.spanId) ancestor = byId.get(ancestor.parentSpanId)
  t.equal(ancestor?.spanId, rename?.spanId, "the attempt descends from the rename's request span")
})

t.test('with tracing off, a delivery stores no trace and its attempt starts a trace of its own', async (t) => {
  const { contextOf, activeTraceParent } = await import('../../src/tracing/context.js')
  const { context, trace: api } = await import('@opentelemetry/api')
  t.equal(context.with(api.deleteSpan(context.active()), activeTraceParent), null, 'no active span: nothing to carry')
  t.equal(api.getSpanContext(contextOf(null)), undefined, 'no stored trace: no parent')
  const stored = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
  t.match(api.getSpanContext(contextOf(stored)), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', isRemote: true })
})
