// Markdown, as agents and people write it, to the rich-text document a project
// stores: the TipTap/ProseMirror JSON of Operately's editor (what its CLI makes of
// Markdown with marked and TipTap's StarterKit, and its MCP server with its own
// reader): paragraphs, headings, bold, italic, strike, inline code, links, bullet
// and numbered lists, quotes, code blocks, rules and line breaks. Read with
// markdown-it (CommonMark, no HTML, no images, GitHub's ~~strike~~) and
// prosemirror-markdown's MarkdownParser, so that what markdown.ts writes reads back
// as the same document.
//
// A person is mentioned by id as `@[Alice Johnson](1S9sHJdXziGMetRhKlyYI1)`: a
// mention node `{"type":"mention","attrs":{"id","label"}}`, the one Operately's
// editor writes, so the mentioned people are subscribed and notified as when any
// client sends it. A plain `@Alice` stays text: a name is no id.
import MarkdownIt from 'markdown-it'
import type StateInline from 'markdown-it/lib/rules_inline/state_inline.mjs'
import { MarkdownParser } from 'prosemirror-markdown'
import { Schema } from 'prosemirror-model'
import { decodeId } from '../ids.js'

const schema = new Schema({
  nodes: {
    doc: { content: 'block+' },
    paragraph: { group: 'block', content: 'inline*' },
    heading: { group: 'block', content: 'inline*', attrs: { level: { default: 1 } } },
    blockquote: { group: 'block', content: 'block+' },
    codeBlock: { group: 'block', content: 'text*', marks: '', code: true, attrs: { language: { default: null } } },
    horizontalRule: { group: 'block' },
    bulletList: { group: 'block', content: 'listItem+' },
    orderedList: { group: 'block', content: 'listItem+', attrs: { start: { default: 1 } } },
    listItem: { content: 'block+' },
    text: { group: 'inline' },
    hardBreak: { group: 'inline', inline: true },
    mention: { group: 'inline', inline: true, attrs: { id: {}, label: {} } }
  },
  marks: {
    italic: {},
    bold: {},
    strike: {},
    link: { attrs: { href: {} }, inclusive: false },
    code: {}
  }
})

const MENTION = /^@\[([^\]\n]{1,200})\]\(([A-Za-z0-9-]{1,200})\)/

/** markdown-it's inline rule for `@[Label](person id)`: a mention token, when the id decodes. */
function mentionRule (state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */) return false
  const match = MENTION.exec(state.src.slice(state.pos))
  if (match === null || decodeId(match[2]!) === null) return false
  if (!silent) {
    const token = state.push('mention', '', 0)
    token.attrSet('id', match[2]!)
    token.attrSet('label', match[1]!.trim())
  }
  state.pos += match[0].length
  return true
}

const tokenizer = MarkdownIt('commonmark', { html: false }).enable('strikethrough').disable('image')
tokenizer.inline.ruler.before('link', 'mention', mentionRule)

const parser = new MarkdownParser(schema, tokenizer, {
  paragraph: { block: 'paragraph' },
  heading: { block: 'heading', getAttrs: (token) => ({ level: Number(token.tag.slice(1)) }) },
  blockquote: { block: 'blockquote' },
  code_block: { block: 'codeBlock', noCloseToken: true },
  fence: { block: 'codeBlock', getAttrs: (token) => ({ language: token.info.trim() || null }), noCloseToken: true },
  hr: { node: 'horizontalRule' },
  bullet_list: { block: 'bulletList' },
  ordered_list: { block: 'orderedList', getAttrs: (token) => ({ start: Number(token.attrGet('start') ?? 1) }) },
  list_item: { block: 'listItem' },
  hardbreak: { node: 'hardBreak' },
  mention: { node: 'mention', noCloseToken: true, getAttrs: (token) => ({ id: token.attrGet('id'), label: token.attrGet('label') }) },
  em: { mark: 'italic' },
  strong: { mark: 'bold' },
  s: { mark: 'strike' },
  link: { mark: 'link', getAttrs: (token) => ({ href: token.attrGet('href') }) },
  code_inline: { mark: 'code', noCloseToken: true }
})

/** The document (as JSON) that `markdown` writes; blank Markdown is Operately's empty document. */
export function markdownDocument (markdown: string): unknown {
  return parser.parse(markdown).toJSON()
}

/** The same, as the JSON text a description is sent as. */
export function markdownToRichText (markdown: string): string {
  return JSON.stringify(markdownDocument(markdown))
}
