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

const TOKEN_IN_TEXT = /pat_[A-Za-z0-9_-]+/g

/** Masks anything shaped like an API token, for text that is logged or echoed back. */
export function redactTokens (text: string): string {
  return text.replace(TOKEN_IN_TEXT, 'pat_[redacted]')
}
