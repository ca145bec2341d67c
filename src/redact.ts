// What is logged or echoed of a request's own text (its URL, headers, field names)
// never carries a credential: API tokens are masked wherever they appear, however
// they were encoded, and URLs lose their passwords.
import { TOKEN_PREFIX, TOKEN_SECRET_LENGTH } from './token-format.js'

const MASK = `${TOKEN_PREFIX}[redacted]`

// A token is the prefix and TOKEN_SECRET_LENGTH base64url characters. Masked: the
// prefix in any case with whatever follows it, and a secret part sent without its
// prefix (that many base64url characters standing alone).
const TOKEN_SHAPED = new RegExp(`${TOKEN_PREFIX}[A-Za-z0-9_-]*|(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{${TOKEN_SECRET_LENGTH}}(?![A-Za-z0-9_-])`, 'gi')
const TOKEN_TEST = new RegExp(TOKEN_SHAPED.source, 'i')

/** Percent escapes decoded one by one (a malformed one is left as it is), until nothing changes. */
function percentDecoded (text: string): string {
  let current = text
  for (let round = 0; round < 4 && current.includes('%'); round++) {
    const next = current.replace(/%[0-9A-Fa-f]{2}/g, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)))
    if (next === current) break
    current = next
  }
  return current
}

/** Whether the text holds anything shaped like an API token, plainly or percent-encoded. */
export function hasToken (text: string): boolean {
  return TOKEN_TEST.test(text) || (text.includes('%') && TOKEN_TEST.test(percentDecoded(text)))
}

/**
 * Masks anything shaped like an API token, for text that is logged or echoed back.
 * Text that carries one once percent-decoded is given decoded, and masked.
 */
export function redactTokens (text: string): string {
  const decoded = text.includes('%') ? percentDecoded(text) : text
  if (decoded !== text && TOKEN_TEST.test(decoded)) return decoded.replace(TOKEN_SHAPED, MASK)
  return text.replace(TOKEN_SHAPED, MASK)
}

/** `postgres://app:secret@db/x` → `postgres://app:[redacted]@db/x`, wherever such a URL stands in the text. */
export function redactPasswords (text: string): string {
  return text.replace(/(\/\/[^/:@\s]*:)[^@\s]*@/g, '$1[redacted]@')
}
