// OpenTelemetry traces, off unless the standard OTEL_* variables ask for them:
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or
// OTEL_TRACES_EXPORTER=otlp; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none
// keeps them off. The spans leave over OTLP/HTTP (JSON) in batches; the exporter
// reads its own OTEL_EXPORTER_OTLP_* settings (endpoint, headers, timeout) and
// the provider OTEL_TRACES_SAMPLER(_ARG), OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES. A request is a span (@fastify/otel, registered on
// every Fastify instance as it is made), its statements child spans (pg).
//
// Imported first by the process's entry (server.ts, worker.ts), before `pg` and
// `fastify` are loaded, so that their instrumentations see them load.
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'

/** Whether the environment asks for traces. */
export function tracingWanted (env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return false
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase()
  if (exporter === 'none') return false
  return exporter === 'otlp' || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
}

export interface Tracing {
  /** Sends the spans buffered so far. */
  flush: () => Promise<void>
  /** Sends the spans still buffered and stops. */
  shutdown: () => Promise<void>
}

/** Starts tracing when the environment asks for it; null when it does not. `service`: the default service.name. */
export function startTracing (service: string, env: NodeJS.ProcessEnv = process.env): Tracing | null {
  if (!tracingWanted(env)) return null
  const resource = resourceFromAttributes({ 'service.name': service }).merge(detectResources({ detectors: [envDetector] }))
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] })
  // The global provider, W3C trace context propagation (traceparent), and async context.
  provider.register()
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
      // A statement's values never go into a span: they hold what users wrote, and tokens' digests.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true })
    ]
  })
  return {
    flush: async () => { await provider.forceFlush() },
    shutdown: async () => {
      unregister()
      await provider.shutdown()
    }
  }
}
