// Markdown in (projects/markdown-in.ts) and out (projects/markdown.ts): what the
// renderer writes reads back as the same document, so an agent can read a
// description as Markdown, edit it and send it back; mentions by id become mention
// nodes; nothing the reader cannot place becomes anything but text. And through
// the tools: update_project_description's Markdown is what get_project renders.
import t from '../tap.js'
import { markdownDocument, markdownToRichText } from '../../src/projects/markdown-in.js'
import { richTextMarkdown } from '../../src/projects/markdown.js'
import { loadDemo } from '../../src/demo/load.js'
import { build } from '../helper.js'
import { listen } from '../launch.js'
import { call, mcpClient } from './support.js'

const ROUND_TRIPS: Array<[string, string]> = [
  ['a paragraph', 'Launch the new site by January.'],
  ['headings', '# Goals\n\n## Steps\n\n###### Small'],
  ['marks', 'Ship **v2** by *March*, ~~not~~ with `code` and [the brief](https://acme.test/brief).'],
  ['bold italic', 'It is ***very*** late.'],
  ['a bullet list', '- Home page\n- Pricing page\n  - Plans\n  - FAQ'],
  ['a numbered list', '1. Design\n2. Build\n3. Ship'],
  ['a list starting later', '4. Four\n5. Five'],
  ['a quote', '> Quoted\n>\n> twice'],
  ['a code block', '```ts\nconst x = 1\n```'],
  ['a rule', 'Above\n\n---\n\nBelow'],
  ['a line break', 'First line\\\nsecond line'],
  ['escaped text', '\\# not a heading, 1. inside a line, \\*not emphasis\\*, snake_case']
]

t.test('Markdown -> document -> Markdown round-trips the common constructs', async (t) => {
  for (const [what, markdown] of ROUND_TRIPS) {
    t.equal(richTextMarkdown(markdownToRichText(markdown)), markdown, what)
  }
})

t.test('the document is the TipTap JSON Operately stores', async (t) => {
  t.same(markdownDocument(''), { type: 'doc', content: [{ type: 'paragraph' }] }, 'blank: the empty document')
  t.same(markdownDocument('## Plan'), { type: 'doc', content: [{ type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Plan' }] }] })
  t.same(markdownDocument('3. x'), {
    type: 'doc',
    content: [{ type: 'orderedList', attrs: { start: 3 }, content: [{ type: 'listItem', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x' }] }] }] }]
  })
  t.same(markdownDocument('[a](https://x.test)'), {
    type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', marks: [{ type: 'link', attrs: { href: 'https://x.test' } }], text: 'a' }] }]
  })
})

t.test('mentions by id become mention nodes; anything else stays text', async (t) => {
  t.same(markdownDocument('Ask @[Carol Diaz](1S9sHJdXziGMetRhKlyYI1).'), {
    type: 'doc',
    content: [{
      type: 'paragraph',
      content: [{ type: 'text', text: 'Ask ' }, { type: 'mention', attrs: { id: '1S9sHJdXziGMetRhKlyYI1', label: 'Carol Diaz' } }, { type: 'text', text: '.' }]
    }]
  })
  t.equal(richTextMarkdown(markdownToRichText('Ask @[Carol Diaz](1S9sHJdXziGMetRhKlyYI1).')), 'Ask @Carol Diaz.', 'rendered by name')
  t.same(markdownDocument('@Carol'), { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: '@Carol' }] }] }, 'a bare name')
  const undecodable = markdownDocument('@[Carol](not_an_id!)') as { content: Array<{ content: Array<{ type: string }> }> }
  t.notOk(JSON.stringify(undecodable).includes('"mention"'), 'an id that does not decode is no mention')
  t.same(markdownDocument('<b>x</b> ![img](https://x.test/i.png)'), {
    type: 'doc',
    content: [{
      type: 'paragraph',
      content: [{ type: 'text', text: '<b>x</b> !' }, { type: 'text', marks: [{ type: 'link', attrs: { href: 'https://x.test/i.png' } }], text: 'img' }]
    }]
  }, 'no HTML, no images')
  t.doesNotThrow(() => markdownDocument('| a | b |\n|---|---|\n| 1 | 2 |'), 'a table is text')
})

t.test('through the tools: the Markdown sent is the Markdown get_project renders', async (t) => {
  const { app, db } = await build(t)
  const demo = await loadDemo(db)
  const { url } = await listen(app)
  const client = await mcpClient(t, url, demo.tokens['alice@acme.test']!.write)
  const id = demo.projects['Website Redesign']!.id
  const description = ['marks', 'a bullet list', 'a quote', 'a code block', 'a line break']
    .map((what) => ROUND_TRIPS.find(([name]) => name === what)![1]).join('\n\n')
  t.notOk((await call(client, 'update_project_description', { project_id: id, description })).isError)
  const read = await call(client, 'get_project', { project_id: id, include_markdown: true })
  const section = /## Description\n\n([\s\S]*?)\n\n## Contributors/.exec(read.body.markdown as string)?.[1]
  t.equal(section, description, 'the description section is the Markdown sent')
})
