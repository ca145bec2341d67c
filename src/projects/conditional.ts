// Conditional requests on a project (RFC 9110 §13): the ETag of an answer,
// If-None-Match on projects/get and If-Match on the two mutations. The tag itself
// is the presenter's (presenter.ts, projectTag); here it is written as a header
// and the request's headers are read.
//
// One project has two representations: `{ project }` and, with include_markdown=true,
// `{ project, markdown }`. A strong tag is unique across the representations of what
// it tags, so the second's is the first's with `.md` appended. Both stand for the
// same state of the project: a mutation's If-Match accepts either.
import { ApiError } from '../errors.js'

/** How a mutation's OpenAPI description tells of If-Match. */
export const IF_MATCH = 'With `If-Match` (the `ETag` of a read, or `*`), the change is made only if the project is, as the ' +
  'person would read it right before the change, the version a listed tag names; otherwise the answer is 412 ' +
  '`precondition_failed` with the current `ETag`, and nothing is written. Weak tags never match. The check and ' +
  'the write are one transaction on the locked row: of two requests with the same tag, one succeeds. 404 and 403 come before 412.'

/** How a Markdown answer's tag differs from the plain one's (base64url never holds a dot). */
const MARKDOWN = '.md'

/** The ETag header of the answer built on the database's tag. */
export function entityTag (tag: string, markdown = false): string {
  return `"${tag}${markdown ? MARKDOWN : ''}"`
}

interface EntityTagValue { weak: boolean, opaque: string }

// etagc: any visible character but the double quote, and obs-text.
// eslint-disable-next-line no-control-regex
const OPAQUE = /^[\x21\x23-\x7e\x80-\xff]*$/

/**
 * A header of `*` or a list of entity tags (RFC 9110 §8.8.3 and §5.6.1: commas
 * between them, optional spaces and tabs, empty elements ignored; a comma may stand
 * inside the quotes), or null when it is neither. A list holds at least one tag
 * (`1#entity-tag`): an empty header, or one of commas alone, is no list.
 */
export function parseEntityTags (value: string): '*' | EntityTagValue[] | null {
  const text = value.replace(/^[ \t]+|[ \t]+$/g, '')
  if (text === '*') return '*'
  const tags: EntityTagValue[] = []
  let i = 0
  while (i < text.length) {
    if (text[i] === ',' || text[i] === ' ' || text[i] === '\t') { i++; continue }
    const weak = text.startsWith('W/', i)
    if (weak) i += 2
    if (text[i] !== '"') return null
    const end = text.indexOf('"', i + 1)
    if (end === -1) return null
    const opaque = text.slice(i + 1, end)
    if (!OPAQUE.test(opaque)) return null
    tags.push({ weak, opaque })
    i = end + 1
    while (text[i] === ' ' || text[i] === '\t') i++
    if (i < text.length && text[i] !== ',') return null
  }
  return tags.length === 0 ? null : tags
}

function malformed (header: string): ApiError {
  return new ApiError(400, 'invalid_input', `${header} must be * or a list of entity tags ("…" or W/"…")`)
}

/**
 * The tags If-Match asks for, as the database compares them: null when the header
 * is absent or `*` (any project the caller may edit: no precondition), else the
 * strong tags listed, a Markdown answer's as its project's. Weak tags never match
 * (strong comparison), so a list of only weak tags matches nothing.
 */
export function ifMatchTags (header: string | undefined): string[] | null {
  if (header === undefined) return null
  const tags = parseEntityTags(header)
  if (tags === null) throw malformed('If-Match')
  if (tags === '*') return null
  return [...new Set(tags.filter((tag) => !tag.weak).map((tag) => tag.opaque.endsWith(MARKDOWN) ? tag.opaque.slice(0, -MARKDOWN.length) : tag.opaque))]
}

/** If-None-Match, read before the project is looked up (a malformed one is a 400 like any bad input); null when absent. */
export function ifNoneMatch (header: string | undefined): '*' | EntityTagValue[] | null {
  if (header === undefined) return null
  const tags = parseEntityTags(header)
  if (tags === null) throw malformed('If-None-Match')
  return tags
}

/**
 * Whether the answer with this ETag is a 304: `*` matches any project the caller
 * can see; a listed tag matches by weak comparison (RFC 9110 §13.1.2: `W/"x"`
 * matches `"x"`). Never without the header.
 */
export function notModified (condition: '*' | EntityTagValue[] | null, etag: string): boolean {
  if (condition === null) return false
  return condition === '*' || condition.some((tag) => `"${tag.opaque}"` === etag)
}

/** The 412 of a mutation whose If-Match names no current tag, with the current one. */
export function preconditionFailed (tag: string): ApiError {
  return new ApiError(412, 'precondition_failed',
    'the project has changed since the version If-Match names: read it again (its current tag is in this answer\'s ETag)',
    undefined, { etag: entityTag(tag) })
}
