// Tracing for the webhook worker process, started when this module is evaluated: the
// entry imports it first, so that `pg` and `fastify` load after their
// instrumentations (start.ts). null when the OTEL_* variables ask for no traces.
import { startTracing } from './start.js'

export const tracing = startTracing('projects-api-worker')
