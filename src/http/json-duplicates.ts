// JSON.parse keeps the last of two equal keys in an object; a proxy or another
// parser may keep the first, and then the two disagree on what was asked (which
// project is changed, say). This finds the first repeated key, so that such a body
// is refused instead of guessed. One pass over text that already parsed as JSON.

/** The JSON Pointer of the first key repeated within one object, or null when there is none. */
export function firstDuplicateKey (text: string): string | null {
  if (!text.includes('{')) return null
  // One frame per open object or array: an object's keys so far, or an array's index.
  const keys: (Set<string> | null)[] = []
  const path: string[] = []
  let expectingKey = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // a string: a key when an object expects one, else a value
      const start = i
      i = closingQuote(text, i + 1)
      const frame = keys[keys.length - 1]
      if (expectingKey && frame) {
        const key = JSON.parse(text.slice(start, i + 1)) as string
        path[path.length - 1] = key
        if (frame.has(key)) return pointer(path)
        frame.add(key)
        expectingKey = false
      }
    } else if (c === 0x7b) { // {
      keys.push(new Set())
      path.push('')
      expectingKey = true
    } else if (c === 0x5b) { // [
      keys.push(null)
      path.push('0')
    } else if (c === 0x7d || c === 0x5d) { // } ]
      keys.pop()
      path.pop()
      expectingKey = false
    } else if (c === 0x2c) { // , : the next key, or the next element
      const top = keys.length - 1
      if (keys[top]) expectingKey = true
      else if (top >= 0) path[top] = String(Number(path[top]) + 1)
    }
  }
  return null
}

/** The index of the quote that closes a string whose text starts at `from`: the first not escaped by a backslash. */
function closingQuote (text: string, from: number): number {
  for (let at = from; ; at++) {
    at = text.indexOf('"', at)
    if (at === -1) return text.length
    let backslashes = 0
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++
    if (backslashes % 2 === 0) return at
  }
}

function pointer (segments: string[]): string {
  return segments.map((s) => `/${s.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')
}
