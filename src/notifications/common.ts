// Shared by the notifications operations.
import { ApiError } from '../errors.js'
import { nothingToFind } from '../http/responses.js'

export const NOTIFICATION_NOT_FOUND = 'notification not found'
export const notFound = () => new ApiError(404, 'not_found', NOTIFICATION_NOT_FOUND)
/** Operations on the person's whole inbox name nothing that could be missing. */
export const WHOLE_INBOX = nothingToFind('it is about the token\'s person\'s own notifications, whichever there are.')
