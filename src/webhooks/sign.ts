// Standard Webhooks signatures (https://www.standardwebhooks.com), made by the
// reference implementation that receivers verify with: `v1,` and the base64
// HMAC-SHA256 of `id.timestamp.body` under the secret's bytes (after `whsec_`).
import { Webhook } from 'standardwebhooks'

/**
 * The three headers of one attempt. Each secret signs (the current one, then a
 * rotated one still in its grace period); the signatures are space-separated, and
 * a receiver accepts the request when any one of them verifies.
 */
export function signatureHeaders (messageId: string, body: string, secrets: readonly string[], at: Date): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' ')
  }
}
