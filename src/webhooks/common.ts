// Shared by the webhooks operations: the admins-only rule, this resource's errors and ids.
import { ApiError, invalidInput } from '../errors.js'
import { decodeId } from '../ids.js'
import { mutationErrors, notFoundExample, nothingToFind, queryErrors } from '../http/responses.js'
import { requireId } from '../http/input.js'
import { ErrorSchema, Shared } from '../schemas/common.js'
import { WEBHOOKS_PER_COMPANY, type Managed } from './query.js'

export const forbidden = () => new ApiError(403, 'forbidden', "only the company's admins manage webhooks")
export const notFound = () => new ApiError(404, 'not_found', 'webhook not found')

/** The value of a managed operation, or the error its outcome is. */
export function done<T> (result: Managed<T>): T {
  switch (result.outcome) {
    case 'forbidden': throw forbidden()
    case 'not_found': throw notFound()
    case 'full': throw invalidInput('', `the company has ${WEBHOOKS_PER_COMPANY} webhooks already; delete one first`)
    case 'done': return result.value
  }
}

// An id that cannot be decoded names no webhook: it goes to the statement as the
// nil UUID, which matches none, so that the admin check still comes first.
const NO_ID = '00000000-0000-0000-0000-000000000000'

/** A webhook's id as a UUID (the nil UUID when it cannot be decoded). */
export function webhookId (raw: string, path: string): string {
  return decodeId(requireId(raw, path)) ?? NO_ID
}

export const ADMINS_ONLY = 'Company admins only: anyone else gets 403 `forbidden`.'

// This resource's 403 and 404, in the envelope, for the document.
export const NOT_ADMIN = Shared(ErrorSchema, {
  description: "The person is not an admin of the company (`forbidden`), or a read-only token on a mutation (`read_only_token`).",
  examples: [forbidden().body()]
})
export const NO_WEBHOOK = notFoundExample('webhook not found', "The webhook is unknown, its id cannot be decoded, or it is another company's: one body for all.")
export const NOTHING = nothingToFind('it names no webhook')
export const mutation = { ...mutationErrors, 403: NOT_ADMIN, 404: NO_WEBHOOK }
export const query = { ...queryErrors, 403: NOT_ADMIN, 404: NO_WEBHOOK }
