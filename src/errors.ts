// The errors the API answers with on purpose. Each becomes the one JSON envelope
// in http/errors.ts.
import { STATUS_CODES } from 'node:http'
import type { ErrorBody, ErrorCode, ErrorDetail } from './schemas/common.js'

export class ApiError extends Error {
  constructor (
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {}
  ) {
    super(message)
    this.name = 'ApiError'
  }

  body (): ErrorBody {
    return envelope(this.statusCode, this.code, this.message, this.details)
  }
}

export function envelope (statusCode: number, code: ErrorCode, message: string, details?: ErrorDetail[]): ErrorBody {
  const body: ErrorBody = { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', code, message }
  if (details) body.details = details
  return body
}

/** A 400 for one field: `name must not be blank`. */
export function invalidInput (path: string, message: string): ApiError {
  const field = path.slice(1).replaceAll('/', '.')
  return new ApiError(400, 'invalid_input', field ? `${field} ${message}` : message, [{ path, message }])
}

/** Seconds a 503 asks the client to wait before trying again (Retry-After). */
const RETRY_AFTER_SECONDS = 1

/** A 503: the service cannot serve this request now, for a reason that passes; with Retry-After. */
export function unavailable (message: string): ApiError {
  return new ApiError(503, 'unavailable', message, undefined, { 'retry-after': String(RETRY_AFTER_SECONDS) })
}

/**
 * An error and its causes, one after the other, for an operator to read (`pg`
 * reports a refused connection to a host with several addresses as an
 * AggregateError without a message of its own).
 */
export function describeError (error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const own = error instanceof AggregateError && !error.message
    ? error.errors.map(describeError).join('; ')
    : error.message || error.name
  return error.cause === undefined ? own : `${own}: ${describeError(error.cause)}`
}
