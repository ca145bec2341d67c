// Signing secrets in the Standard Webhooks form: `whsec_` and base64 of random bytes.
import { randomBytes } from 'node:crypto'

/** 32 random bytes: the HMAC-SHA256 key a receiver verifies with. */
export function newWebhookSecret (): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}
