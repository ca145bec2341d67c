// Who a description mentions: the people of its TipTap/ProseMirror mention nodes,
// `{"type":"mention","attrs":{"id":"<person id>", ...}}`, anywhere in the document.
// Whatever else the text holds is never an error here: a description that is not a
// document, a malformed node or an id that does not decode mentions nobody. Whether
// an id names a person of the project's company is the database's to say.
import { decodeId } from '../ids.js'

type Json = unknown

const isObject = (value: Json): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The canonical UUIDs of the people `description` mentions, each once, in document order. */
export function mentionedPeople (description: string): string[] {
  let root: Json
  try {
    root = JSON.parse(description)
  } catch {
    return []
  }
  if (!isObject(root) || root.type !== 'doc') return []
  const found = new Set<string>()
  // Depth-first with a stack of its own: the depth of a description is bounded by
  // its rules, but this walk does not rely on it.
  const stack: Json[] = [root]
  while (stack.length > 0) {
    const node = stack.pop()
    if (!isObject(node)) continue
    if (node.type === 'mention' && isObject(node.attrs) && typeof node.attrs.id === 'string') {
      const id = decodeId(node.attrs.id.trim())
      if (id !== null) found.add(id)
    }
    if (Array.isArray(node.content)) {
      for (let i = node.content.length - 1; i >= 0; i--) stack.push(node.content[i])
    }
  }
  return [...found]
}
