// Every status an operation may answer besides 200, each with the error envelope;
// plugins/swagger.ts describes them in the document. A query (GET) has no body
// (no 408, 413 or 415) and is open to read-only tokens (no 403 read_only_token).
import Type from 'typebox'
import { invalidInput } from '../errors.js'
import { ErrorRef } from '../schemas/common.js'

export const queryErrors = { 400: ErrorRef, 401: ErrorRef, 404: ErrorRef, 429: ErrorRef, 500: ErrorRef, 503: ErrorRef }

export const mutationErrors = {
  400: ErrorRef, 401: ErrorRef, 403: ErrorRef, 404: ErrorRef, 408: ErrorRef, 413: ErrorRef, 415: ErrorRef, 429: ErrorRef, 500: ErrorRef, 503: ErrorRef
}

/** The envelope with this operation's typical 400 as the document's example. */
export function invalidExample (path: string, message: string) {
  return Type.Ref('Error', { examples: [invalidInput(path, message).body()] })
}
