// What an API token looks like: a recognisable prefix and 32 random bytes in
// base64url (43 characters). Issued by auth/tokens.ts, masked by redact.ts.
export const TOKEN_PREFIX = 'pat_'
export const TOKEN_SECRET_BYTES = 32
/** The longest a token may be issued for, in days: a century, still a valid timestamp. */
export const MAX_EXPIRY_DAYS = 36_500
/** base64url of TOKEN_SECRET_BYTES, unpadded. */
export const TOKEN_SECRET_LENGTH = Math.ceil(TOKEN_SECRET_BYTES * 4 / 3)
