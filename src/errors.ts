// The errors the API answers with on purpose. Each becomes the one JSON envelope
// in plugins/errors.ts.
import { STATUS_CODES } from 'node:http'
import type { ErrorBody } from './schemas/common.js'

export type ErrorCode =
  | 'invalid_input' | 'unauthenticated' | 'read_only_token' | 'forbidden' | 'not_found'
  | 'route_not_found' | 'method_not_allowed' | 'request_timeout' | 'payload_too_large'
  | 'unsupported_media_type' | 'expectation_failed' | 'headers_too_large' | 'rate_limited'
  | 'internal' | 'unavailable'

export interface Detail { path: string, message: string }

export class ApiError extends Error {
  constructor (
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Detail[],
    readonly headers: Record<string, string> = {}
  ) {
    super(message)
    this.name = 'ApiError'
  }

  body (): ErrorBody {
    return envelope(this.statusCode, this.code, this.message, this.details)
  }
}

export function envelope (statusCode: number, code: string, message: string, details?: Detail[]): ErrorBody {
  const body: ErrorBody = { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', code, message }
  if (details) body.details = details
  return body
}

/** A 400 for one field: `name must not be blank`. */
export function invalidInput (path: string, message: string): ApiError {
  const field = path.slice(1).replaceAll('/', '.')
  return new ApiError(400, 'invalid_input', field ? `${field} ${message}` : message, [{ path, message }])
}

/** The same body whether the project is absent, archived or invisible: existence never leaks. */
export function projectNotFound (): ApiError {
  return new ApiError(404, 'not_found', 'project not found')
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
