// A Markdown rendering of a whole project, for people and language models to read
// (Operately's `projects/get?include_markdown=true`), in Operately's section order:
// overview, description, people, timeframe, (key resources,) milestones, check-in,
// retrospective. Empty sections are left out.
//
// Rich text (descriptions, check-ins, retrospectives) is a TipTap/ProseMirror JSON
// document kept exactly as the client sent it, so it may be anything. It is first
// rebuilt into a valid document of the schema below: unknown nodes give their text,
// unknown marks and ill-typed attributes are dropped, anything nested past MAX_DEPTH
// is flattened to text. prosemirror-markdown then serializes it. It was chosen over
// @tiptap/static-renderer because its serializer escapes text (a paragraph reading
// `# Heading` or `1. item` stays a paragraph), while the static renderer writes text
// verbatim, throws on unknown node and mark types, and renders mentions as HTML.
//
// The serializer's escaping has gaps, closed here: text after a hard break is escaped
// as the start of a line, as are indented markers (` - x`, `1) x`, `===`); `<` is
// escaped so no HTML passes through, and `&` where it could start an entity; an
// underscore is left bare only between ASCII letters or digits (`__a__` is not bold);
// where emphasis meets punctuation, the character outside it is written as a
// character reference so that the emphasis still opens and closes; link targets
// lose whitespace, and schemes other than http, https and mailto; code fences
// are longer than any backtick run inside them. Headings inside a section are pushed
// below the section's own level, so no rich text can open a section of the project.
import { MarkdownSerializer, type MarkdownSerializerState } from 'prosemirror-markdown'
import { Mark, Schema, type Node } from 'prosemirror-model'
import type { Person, Project } from './schemas.js'

const schema = new Schema({
  nodes: {
    doc: { content: 'block+' },
    paragraph: { group: 'block', content: 'inline*' },
    heading: { group: 'block', content: 'inline*', attrs: { level: { default: 1 } } },
    blockquote: { group: 'block', content: 'block+' },
    codeBlock: { group: 'block', content: 'text*', marks: '', code: true, attrs: { language: { default: '' } } },
    horizontalRule: { group: 'block' },
    bulletList: { group: 'block', content: 'listItem+' },
    orderedList: { group: 'block', content: 'listItem+', attrs: { start: { default: 1 } } },
    taskList: { group: 'block', content: 'listItem+' },
    listItem: { content: 'block+', attrs: { checked: { default: false } } },
    text: { group: 'inline' },
    hardBreak: { group: 'inline', inline: true },
    mention: { group: 'inline', inline: true, attrs: { label: { default: 'someone' } } }
  },
  // In the serializer's order: code innermost, so its text is written raw.
  marks: {
    italic: {},
    bold: {},
    strike: {},
    link: { attrs: { href: {}, title: { default: null } }, inclusive: false },
    code: {}
  }
})

/** Past this many levels of nodes, what is inside is rendered as plain text. */
const MAX_DEPTH = 64

type Json = unknown
type Fields = Record<string, unknown>

const isFields = (value: Json): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value)

// ---------------------------------------------------------------------------------
// Any JSON value → a valid document

const EXPELS_WHITESPACE = new Set(['bold', 'italic', 'strike'])

/**
 * Text nodes, with each line break a hardBreak (a raw newline could start a block).
 * In bold, italic or struck text a run of spaces becomes one: the serializer moves
 * such text's outer spaces out of the mark with a regular expression whose time grows
 * with the square of a run's length.
 */
function textNodes (text: string, marks: readonly Mark[] = []): Node[] {
  const nodes: Node[] = []
  const collapse = marks.some((m) => EXPELS_WHITESPACE.has(m.type.name))
  text.split(/\r\n|\r|\n/).forEach((line, i) => {
    if (i > 0) nodes.push(schema.nodes.hardBreak.create())
    if (collapse) line = line.replace(/\s{2,}/g, (run) => run.charAt(0))
    if (line !== '') nodes.push(schema.text(line, marks))
  })
  return nodes
}

/** The href of a link worth keeping: http, https, mailto or relative, with nothing that ends the target. */
function safeHref (href: unknown): string | null {
  if (typeof href !== 'string') return null
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(href.trim())?.[1]?.toLowerCase()
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https' && scheme !== 'mailto') return null
  // Only ASCII is encoded, so a lone surrogate cannot make this throw as encodeURI
  // would. An entity (`javascript&#58;`) would be decoded by a Markdown reader: its
  // `&` is escaped, which keeps the target as written.
  const encoded = href.trim()
    .replace(/[\u0000-\u0020\u007f<>()\\"'`]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'))
    .replace(/&(?=#?\w+;)/g, '\\&')
  return encoded === '' ? null : encoded
}

function marksOf (value: Json): readonly Mark[] {
  if (!Array.isArray(value)) return []
  let set: readonly Mark[] = Mark.none
  for (const m of value) {
    if (!isFields(m)) continue
    const attrs = isFields(m.attrs) ? m.attrs : {}
    switch (m.type) {
      case 'bold': case 'italic': case 'strike': case 'code':
        set = schema.marks[m.type].create().addToSet(set)
        break
      case 'link': {
        const href = safeHref(attrs.href)
        const title = typeof attrs.title === 'string' ? oneLine(attrs.title) : ''
        if (href !== null) set = schema.marks.link.create({ href, title: title === '' ? null : title }).addToSet(set)
      }
    }
  }
  return set
}

/** The text inside any value, without recursion, for what is nested too deep. */
function plainText (value: Json, separator: string): string {
  const parts: string[] = []
  const stack: Json[] = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item === 'string') parts.push(item)
    else if (Array.isArray(item)) for (let i = item.length - 1; i >= 0; i--) stack.push(item[i])
    else if (isFields(item)) {
      if (typeof item.text === 'string') parts.push(item.text)
      else if (item.type === 'mention') parts.push(mentionText(item.attrs))
      else if (item.content !== undefined) stack.push(item.content)
    }
  }
  return parts.join(separator)
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim()

function mentionText (attrs: Json): string {
  const label = isFields(attrs) && typeof attrs.label === 'string' ? oneLine(attrs.label) : ''
  return '@' + (label === '' ? 'someone' : label)
}

function integerIn (value: Json, min: number, max: number, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) ? Math.min(max, Math.max(min, value)) : fallback
}

const asList = (value: Json): Json[] => Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]

const KNOWN_TYPES = new Set(['doc', 'text', 'paragraph', 'heading', 'blockquote', 'codeBlock', 'horizontalRule', 'bulletList',
  'orderedList', 'taskList', 'listItem', 'taskItem', 'hardBreak', 'mention'])

class DocumentBuilder {
  constructor (private readonly headingOffset: number) {}

  /** Nodes for one JSON value: block or inline, as it comes; the caller puts them in place. */
  convert (value: Json, depth: number): Node[] {
    if (typeof value === 'string') return textNodes(value)
    if (Array.isArray(value)) return depth >= MAX_DEPTH ? textNodes(plainText(value, ' ')) : value.flatMap((v) => this.convert(v, depth + 1))
    if (!isFields(value)) return []
    if (depth >= MAX_DEPTH) return textNodes(plainText(value, ' '))
    const attrs = isFields(value.attrs) ? value.attrs : {}
    const content = value.content
    const next = depth + 1
    switch (value.type) {
      case 'doc':
        return this.blocks(content, next)
      case 'text':
        return typeof value.text === 'string' ? textNodes(value.text, marksOf(value.marks)) : []
      case 'paragraph':
        return [schema.nodes.paragraph.create(null, this.inlines(content, next))]
      case 'heading': {
        const level = Math.min(6, integerIn(attrs.level, 1, 6, 1) + this.headingOffset)
        // A line break would end the heading: it becomes a space.
        const inline = this.inlines(content, next).map((n) => n.type === schema.nodes.hardBreak ? schema.text(' ') : n)
        return [schema.nodes.heading.create({ level }, inline)]
      }
      case 'blockquote': {
        const blocks = this.blocks(content, next)
        return blocks.length > 0 ? [schema.nodes.blockquote.create(null, blocks)] : []
      }
      case 'codeBlock': {
        const code = plainText(content, '').replace(/\r\n?/g, '\n')
        const language = typeof attrs.language === 'string' && /^[\w+#.-]{1,32}$/.test(attrs.language) ? attrs.language : ''
        return code === '' ? [] : [schema.nodes.codeBlock.create({ language }, schema.text(code))]
      }
      case 'horizontalRule':
        return [schema.nodes.horizontalRule.create()]
      case 'bulletList': case 'orderedList': case 'taskList': {
        const items = this.listItems(content, next)
        if (items.length === 0) return []
        const list = schema.nodes[value.type]
        return [value.type === 'orderedList' ? list.create({ start: integerIn(attrs.start, 0, 99_999_999, 1) }, items) : list.create(null, items)]
      }
      case 'listItem': case 'taskItem':
        return this.blocks(content, next)
      case 'hardBreak':
        return [schema.nodes.hardBreak.create()]
      case 'mention':
        return [schema.nodes.mention.create({ label: mentionText(attrs).slice(1) })]
      default:
        // An unknown node: its text, else what it contains, in the place it stands.
        if (typeof value.text === 'string') return textNodes(value.text, marksOf(value.marks))
        return content === undefined ? [] : this.convert(asList(content), next)
    }
  }

  /** Block content: runs of inline nodes become paragraphs; empty paragraphs are dropped. */
  blocks (value: Json, depth: number): Node[] {
    const blocks: Node[] = []
    let run: Node[] = []
    const push = (block: Node) => {
      if (block.isTextblock && block.type !== schema.nodes.codeBlock) {
        const inline = trimLines(block)
        if (inline.length === 0) return
        block = block.type.create(block.attrs, inline)
      }
      blocks.push(block)
    }
    const flush = () => {
      if (run.length > 0) push(schema.nodes.paragraph.create(null, run))
      run = []
    }
    for (const item of asList(value)) {
      // A node of unknown type that holds content stands as a block of its own.
      const container = isFields(item) && !KNOWN_TYPES.has(String(item.type)) && typeof item.text !== 'string'
      if (container) flush()
      for (const node of this.convert(item, depth)) {
        if (node.isInline) run.push(node)
        else { flush(); push(node) }
      }
      if (container) flush()
    }
    flush()
    return blocks
  }

  /** Inline content: blocks found here give their inline content, separated by a space. */
  inlines (value: Json, depth: number): Node[] {
    const nodes: Node[] = []
    for (const item of asList(value)) {
      for (const node of this.convert(item, depth)) {
        if (node.isInline) { nodes.push(node); continue }
        const flat = flatten(node)
        if (flat.length > 0 && nodes.length > 0) nodes.push(schema.text(' '))
        for (const n of flat) nodes.push(n)
      }
    }
    return nodes
  }

  listItems (value: Json, depth: number): Node[] {
    const items: Node[] = []
    for (const item of asList(value)) {
      const isItem = isFields(item) && (item.type === 'listItem' || item.type === 'taskItem')
      const blocks = isItem ? this.blocks(item.content, depth + 1) : this.blocks([item], depth)
      // An empty item is a lone `-`, which under a line of text underlines it as a heading.
      if (blocks.length === 0) continue
      const checked = isItem && isFields(item.attrs) && item.attrs.checked === true
      items.push(schema.nodes.listItem.create({ checked }, blocks))
    }
    return items
  }
}

/** A block's inline content, for a block found where only inline content may stand. */
function flatten (block: Node): Node[] {
  if (block.type === schema.nodes.codeBlock) {
    const code = oneLine(block.textContent)
    return code === '' ? [] : [schema.text(code)]
  }
  if (block.isTextblock) return [...block.children]
  const nodes: Node[] = []
  block.forEach((child) => {
    const flat = flatten(child)
    if (flat.length > 0 && nodes.length > 0) nodes.push(schema.text(' '))
    for (const n of flat) nodes.push(n)
  })
  return nodes
}

/**
 * Markdown drops the spaces around a line, and four of them at its start would start
 * a code block: they are removed where a line starts and ends (the block's edges,
 * around a hard break). Line breaks at a block's start or end, or after another,
 * would make empty lines, which end a paragraph: they are dropped.
 */
function trimLines (block: Node): Node[] {
  const nodes: Node[] = []
  const endLine = () => {
    const last = nodes.at(-1)
    if (last === undefined || !last.isText) return
    const text = (last.text ?? '').replace(/[ \t]+$/, '')
    nodes.pop()
    if (text !== '') nodes.push(schema.text(text, last.marks))
  }
  let atLineStart = true
  block.forEach((node) => {
    if (node.type === schema.nodes.hardBreak) {
      endLine()
      if (nodes.length > 0 && nodes.at(-1)?.type !== schema.nodes.hardBreak) nodes.push(node)
      atLineStart = true
    } else if (atLineStart && node.isText) {
      const text = (node.text ?? '').replace(/^[ \t]+/, '')
      if (text === '') return
      nodes.push(schema.text(text, node.marks))
      atLineStart = false
    } else {
      nodes.push(node)
      atLineStart = false
    }
  })
  endLine()
  if (nodes.at(-1)?.type === schema.nodes.hardBreak) nodes.pop()
  return nodes
}

// ---------------------------------------------------------------------------------
// Document → Markdown

/** Escapes for a line's start, beyond the serializer's: indented markers, `)` lists, setext underlines. */
function escapeLineStart (escaped: string): string {
  return escaped.replace(/^[ \t]+/, '').replace(/^[#\-+=>]/, '\\$&').replace(/^(\d{1,9})([.)])/, '$1\\$2')
}

const ASCII_ALNUM = /^[A-Za-z0-9]$/

/**
 * Text escaped where it could be read as Markdown: the serializer's own `esc`, but
 * for underscores, with `<` and `&` where it could start an entity. An underscore
 * is left bare only between two ASCII letters or digits (`snake_case`), where
 * CommonMark cannot read it as emphasis: `esc` left it bare between any two word
 * characters, `_` among them, so `__a__` came out as `\__a_\_`, read as `_a_` in
 * italics.
 */
function escapeText (text: string): string {
  return text.replace(/[`*\\~[\]_<]|&(?=#?\w+;)/g, (c: string, at: number) =>
    c === '_' && ASCII_ALNUM.test(text.charAt(at - 1)) && ASCII_ALNUM.test(text.charAt(at + 1)) ? c : '\\' + c)
}

/** Text escaped and written; `edges` says which of its ends to write as character references (edgesOf). */
function writeText (state: MarkdownSerializerState, text: string, atLineStart: boolean, edges = NO_EDGES) {
  const first = edges.first ? firstCharacter(text) : ''
  const rest = text.slice(first.length)
  const last = edges.last ? lastCharacter(rest) : ''
  const middle = escapeText(rest.slice(0, rest.length - last.length))
  const start = first !== '' ? characterReference(first) + middle : atLineStart ? escapeLineStart(middle) : middle
  state.text(start + (last !== '' ? characterReference(last) : ''), false)
}

// Emphasis (`*`, `**`, `~~`) opens only where its delimiters follow a space or a
// punctuation mark or precede a character that is neither, and closes only where
// they follow one that is neither or precede a space or a punctuation mark
// (CommonMark's flanking rules): `*#*1` and `a*#*` read as text with asterisks.
// The character outside, next to the delimiters, is then written as a character
// reference (`*#*&#x31;`), which reads as that character but counts as punctuation
// where it stands.

const NO_EDGES = { first: false, last: false }
const EMPHASIS = new Set(['italic', 'bold', 'strike'])
const SPACE = /^[\t\n\f\r \p{Zs}]$/u
// Readers differ on which characters beyond ASCII are punctuation (CommonMark 0.31
// counts symbols, \p{S}; earlier versions and markdown-it do not), so each test
// takes the side that writes a reference whenever some reader needs one: a mark
// inside counts as punctuation if any reader counts it, a character outside only
// if it is ASCII punctuation, which every reader counts. A reference where none
// was needed reads the same.
const PUNCTUATION = /^[\p{P}\p{S}]$/u
const ASCII_PUNCTUATION = /^[!-\/:-@[-`{-~]$/

/** The first code point of `text` (a pair of surrogates whole), or '' when it is empty. */
const firstCharacter = (text: string) => text === '' ? '' : String.fromCodePoint(text.codePointAt(0)!)

/** The last code point of `text` (a pair of surrogates whole), or '' when it is empty. */
function lastCharacter (text: string): string {
  const low = text.charCodeAt(text.length - 1)
  const high = text.charCodeAt(text.length - 2)
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? text.slice(-2) : text.slice(-1)
}

/** `&#x31;` for `1`; a lone surrogate has none (a reader makes it U+FFFD) and stays as it is. */
function characterReference (c: string): string {
  const code = c.codePointAt(0)!
  return code >= 0xd800 && code <= 0xdfff ? c : `&#x${code.toString(16).toUpperCase()};`
}

/** Whether `c`, next to delimiters, keeps them from opening or closing when it is the one outside. */
const blocksDelimiters = (c: string) => c !== '' && !SPACE.test(c) && !ASCII_PUNCTUATION.test(c)

/**
 * Which edges of a text node to write as character references: its first character
 * when emphasis closes right before it after a punctuation mark, its last when
 * emphasis opens right after it before one. Only between two text nodes that
 * differ in nothing but emphasis: a link's brackets or a code span's backticks
 * between them are punctuation already.
 */
function edgesOf (text: string, parent: Node, index: number): { first: boolean, last: boolean } {
  const node = parent.child(index)
  const before = index > 0 ? parent.child(index - 1) : null
  const after = index + 1 < parent.childCount ? parent.child(index + 1) : null
  return {
    first: before?.isText === true && onlyEmphasisDiffers(before, node) && closes(before, node) &&
      PUNCTUATION.test(lastCharacter(before.text ?? '')) && blocksDelimiters(firstCharacter(text)),
    last: after?.isText === true && onlyEmphasisDiffers(node, after) && opens(node, after) &&
      PUNCTUATION.test(firstCharacter(after.text ?? '')) && blocksDelimiters(lastCharacter(text))
  }
}

const emphasis = (node: Node) => node.marks.filter((m) => EMPHASIS.has(m.type.name))
const closes = (a: Node, b: Node) => emphasis(a).some((m) => !m.isInSet(b.marks))
const opens = (a: Node, b: Node) => emphasis(b).some((m) => !m.isInSet(a.marks))
const otherMarks = (node: Node) => node.marks.filter((m) => !EMPHASIS.has(m.type.name))
const onlyEmphasisDiffers = (a: Node, b: Node) => Mark.sameSet(otherMarks(a), otherMarks(b))

function longestRun (text: string, min: number): number {
  let longest = min
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length)
  return longest
}

function backticks (node: Node | null, side: 'open' | 'close'): string {
  const longest = longestRun(node?.isText === true ? node.text ?? '' : '', 0)
  const fence = '`'.repeat(longest + 1)
  if (longest === 0) return fence
  return side === 'open' ? fence + ' ' : ' ' + fence
}

const serializer = new MarkdownSerializer({
  paragraph (state, node) {
    state.renderInline(node)
    state.closeBlock(node)
  },
  heading (state, node) {
    state.write('#'.repeat(node.attrs.level) + ' ')
    state.renderInline(node, false)
    state.closeBlock(node)
  },
  blockquote (state, node) {
    state.wrapBlock('> ', null, node, () => state.renderContent(node))
  },
  codeBlock (state, node) {
    const fence = '`'.repeat(longestRun(node.textContent, 2) + 1)
    state.write(fence + node.attrs.language + '\n')
    state.text(node.textContent, false)
    state.ensureNewLine()
    state.write(fence)
    state.closeBlock(node)
  },
  horizontalRule (state, node) {
    state.write('---')
    state.closeBlock(node)
  },
  bulletList (state, node) {
    state.renderList(node, '  ', () => '- ')
  },
  orderedList (state, node) {
    const start: number = node.attrs.start
    const width = String(start + node.childCount - 1).length
    state.renderList(node, ' '.repeat(width + 2), (i) => String(start + i).padStart(width, ' ') + '. ')
  },
  taskList (state, node) {
    state.renderList(node, '  ', (i) => {
      const item = node.child(i)
      return (item.attrs.checked === true ? '- [x]' : '- [ ]') + (opensWithParagraph(item) ? ' ' : '')
    })
  },
  listItem (state, node, parent) {
    // A task's box is read as the start of its first paragraph: any other first block
    // (a code fence, a heading, a list, a rule) would be read as text after it, so it
    // starts after an empty line, within the item. The line is written at once (the
    // serializer's own flushClose, not in its typings): a list would otherwise write
    // only a line break, and a list starting at 2 does not interrupt a paragraph.
    if (parent.type === schema.nodes.taskList && !opensWithParagraph(node)) {
      state.closeBlock(node)
      ;(state as unknown as { flushClose: (size: number) => void }).flushClose(2)
    }
    state.renderContent(node)
  },
  text (state, node, parent, index) {
    // Unmarked text opens its line when it comes first in a paragraph or after a hard
    // break; marked text is preceded by the mark's opening, and a heading by its #s.
    const atLineStart = parent.type !== schema.nodes.heading && node.marks.length === 0 &&
      (index === 0 || parent.child(index - 1).type === schema.nodes.hardBreak)
    const text = node.text ?? ''
    writeText(state, text, atLineStart, edgesOf(text, parent, index))
  },
  hardBreak (state) {
    // Never first, last or doubled in a block (trimLines).
    state.write('\\\n')
  },
  mention (state, node) {
    writeText(state, '@' + String(node.attrs.label), false)
  }
}, {
  italic: { open: '*', close: '*', mixable: true, expelEnclosingWhitespace: true },
  bold: { open: '**', close: '**', mixable: true, expelEnclosingWhitespace: true },
  strike: { open: '~~', close: '~~', mixable: true, expelEnclosingWhitespace: true },
  link: {
    open: '[',
    close (_state, mark) {
      const title = typeof mark.attrs.title === 'string' ? ` "${mark.attrs.title.replace(/["\\]/g, '\\$&')}"` : ''
      return `](${String(mark.attrs.href)}${title})`
    },
    mixable: true
  },
  code: {
    open: (_state, _mark, parent, index) => backticks(parent.child(index), 'open'),
    close: (_state, _mark, parent, index) => backticks(index > 0 ? parent.child(index - 1) : null, 'close'),
    escape: false
  }
}, { hardBreakNodeName: 'hardBreak' })

function opensWithParagraph (item: Node): boolean {
  return item.firstChild?.type === schema.nodes.paragraph
}

function serialize (blocks: Node[]): string {
  if (blocks.length === 0) return ''
  return serializer.serialize(schema.nodes.doc.create(null, blocks), { tightLists: true }).replace(/\s+$/, '')
}

function renderRichText (text: string | null, headingOffset: number): string {
  if (text === null) return ''
  let value: Json
  try {
    value = JSON.parse(text)
  } catch {
    // Not JSON: shown as the text it is.
    value = text
  }
  if (typeof value === 'number' || typeof value === 'boolean') value = String(value)
  return serialize(new DocumentBuilder(headingOffset).blocks(value, 0))
}

/**
 * Rich text (a TipTap/ProseMirror JSON document as text) as Markdown. Any input
 * renders: what is not a document shows its text, or nothing.
 */
export function richTextMarkdown (text: string | null): string {
  return renderRichText(text, 0)
}

// ---------------------------------------------------------------------------------
// The project

/** A plain value on one line, escaped as text. */
function inline (text: string): string {
  const line = oneLine(text)
  return line === '' ? '' : serialize([schema.nodes.paragraph.create(null, schema.text(line))])
}

const STATUS: Record<Project['status'], string> = {
  on_track: 'On track',
  caution: 'Caution',
  off_track: 'Off track',
  paused: 'Paused',
  outdated: 'Outdated (a check-in is overdue)',
  pending: 'Pending (no check-in yet)',
  achieved: 'Achieved',
  missed: 'Missed'
}
const CHECK_IN_STATUS: Record<NonNullable<Project['last_check_in']>['status'], string> = {
  on_track: 'On track', caution: 'Caution', off_track: 'Off track'
}
const STATE: Record<Project['state'], string> = { active: 'Active', paused: 'Paused', closed: 'Closed' }
const PRIVACY: Record<Project['privacy'], string> = {
  public: 'Public (anyone with the link)',
  internal: 'Internal (everyone in the company)',
  confidential: 'Confidential (members of the space)',
  secret: 'Secret (only people added to the project)'
}
const ROLE: Record<Project['contributors'][number]['role'], string> = {
  champion: 'Champion', reviewer: 'Reviewer', contributor: 'Contributor'
}
const RESULT: Record<NonNullable<Project['success_status']>, string> = { achieved: 'Achieved', missed: 'Missed' }

const day = (timestamp: string) => timestamp.slice(0, 10)

function person (p: Person | null): string {
  if (p === null) return 'Not assigned'
  const title = p.title === null ? '' : inline(p.title)
  return (inline(p.full_name) || 'Unnamed') + (title === '' ? '' : ` (${title})`)
}

function contextualDate (d: NonNullable<Project['timeframe']>['contextual_start_date']): string {
  if (d === null) return 'Not set'
  const value = inline(d.value)
  return value === '' || value === d.date ? d.date : `${value} (${d.date})`
}

const list = (items: string[]) => items.map((item) => '- ' + item).join('\n')

function overview (p: Project): string {
  const items = [
    `Status: ${STATUS[p.status]}`,
    `State: ${STATE[p.state]}`,
    `Privacy: ${PRIVACY[p.privacy]}`,
    `Space: ${inline(p.space.name)}`,
    `Goal: ${p.goal === null ? 'None (not part of a goal)' : inline(p.goal.name)}`,
    `Champion: ${person(p.champion)}`,
    `Reviewer: ${person(p.reviewer)}`,
    `Created: ${day(p.inserted_at)}`,
    `Last updated: ${day(p.updated_at)}`
  ]
  if (p.state !== 'closed' && p.next_check_in_scheduled_at !== null) items.push(`Next check-in due: ${day(p.next_check_in_scheduled_at)}`)
  if (p.closed_at !== null) items.push(`Closed: ${day(p.closed_at)}`)
  if (p.archived_at !== null) items.push(`Archived: ${day(p.archived_at)}`)
  return list(items)
}

function section (title: string, ...parts: string[]): string {
  return [`## ${title}`, ...parts.filter((part) => part !== '')].join('\n\n')
}

function contributors (p: Project): string {
  if (p.contributors.length === 0) return ''
  return section('Contributors', list(p.contributors.map((c) => {
    const responsibility = c.responsibility === null ? '' : inline(c.responsibility)
    return `${ROLE[c.role]}: ${person(c.person)}` + (responsibility === '' ? '' : ` — ${responsibility}`)
  })))
}

function timeframe (p: Project): string {
  if (p.timeframe === null) return ''
  return section('Timeframe', list([
    `Start: ${contextualDate(p.timeframe.contextual_start_date)}`,
    `Due: ${contextualDate(p.timeframe.contextual_end_date)}`
  ]))
}

function keyResources (p: Project): string {
  if (p.key_resources.length === 0) return ''
  return section('Key resources', list(p.key_resources.map((r) => {
    const title = inline(r.title) || 'Untitled'
    const href = safeHref(r.link)
    return (href === null ? `${title} (${inline(r.link)})` : `[${title}](${href})`) + (r.resource_type === '' ? '' : ` (${inline(r.resource_type)})`)
  })))
}

function milestones (p: Project): string {
  if (p.milestones.length === 0) return ''
  return section('Milestones', ...p.milestones.map((m) => [
    `### ${inline(m.title) || 'Untitled'}`,
    list([
      `Status: ${m.status === 'done' ? 'Done' : 'Pending'}`,
      `Due: ${m.due_date ?? 'Not set'}`,
      ...(m.completed_at === null ? [] : [`Completed: ${day(m.completed_at)}`])
    ]),
    renderRichText(m.description, 3)
  ].filter((part) => part !== '').join('\n\n')))
}

function lastCheckIn (p: Project): string {
  const c = p.last_check_in
  if (c === null) return ''
  const items = [`Status: ${CHECK_IN_STATUS[c.status]}`, `Author: ${person(c.author)}`, `Date: ${day(c.inserted_at)}`]
  if (c.acknowledged_at !== null) {
    items.push(`Acknowledged: ${day(c.acknowledged_at)}` + (c.acknowledged_by === null ? '' : ` by ${inline(c.acknowledged_by.full_name)}`))
  }
  return section('Last check-in', list(items), renderRichText(c.description, 2) || '_No description._')
}

function retrospective (p: Project): string {
  const r = p.retrospective
  if (r === null) return ''
  const result = r.success_status ?? p.success_status
  const items = [`Result: ${result === null ? 'Not recorded' : RESULT[result]}`, `Author: ${person(r.author)}`]
  if (r.closed_at !== null) items.push(`Closed: ${day(r.closed_at)}`)
  return section('Retrospective', list(items), renderRichText(r.content, 2) || '_No content._')
}

/** The whole project as one Markdown document. */
export function projectMarkdown (project: Project): string {
  return [
    `# ${inline(project.name) || 'Untitled project'}`,
    overview(project),
    section('Description', renderRichText(project.description, 2) || '_No description._'),
    contributors(project),
    timeframe(project),
    keyResources(project),
    milestones(project),
    lastCheckIn(project),
    retrospective(project)
  ].filter((part) => part !== '').join('\n\n') + '\n'
}
