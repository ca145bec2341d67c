// A trace carried from one piece of work to a later one, as a W3C `traceparent`:
// a change's request hands its own to the deliveries it queues, and each attempt
// is then a span of that request's trace. With tracing off there is nothing to
// carry (null), and an attempt starts from whatever context is active.
import { context, propagation, type Context } from '@opentelemetry/api'

/** The active span's traceparent; null when nothing is traced. */
export function activeTraceParent (): string | null {
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  return carrier.traceparent ?? null
}

/** The context of a stored traceparent, to start a later span in; the active one when there is none. */
export function contextOf (traceParent: string | null | undefined): Context {
  if (traceParent === null || traceParent === undefined) return context.active()
  return propagation.extract(context.active(), { traceparent: traceParent })
}
