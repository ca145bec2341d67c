// Generated hostile requests against the whole Fastify pipeline (body parsing
// included): random JSON and wrong types, huge and deeply nested values, lone
// surrogates, NUL and control characters, invalid UTF-8, duplicate keys,
// prototype-pollution keys, every kind of Authorization (one or two headers),
// Content-Type and Content-Encoding header, conditional headers (If-Match on the
// mutations, If-None-Match on get: the current tag, weak, with .md, *, stale, in
// lists, empty, random text), aimed at editable, read-only, invisible, archived, foreign and unknown
// projects. A model written from the contract predicts each answer; after every
// request the database shows that only the addressed project changed, only on a
// 200, and exactly as asked. projects/create and the lifecycle operations of issue
// 64 get the same headers and bodies built from their own (see their section).
//
// FUZZ_RUNS=k runs every property k times as often (a long run); FUZZ_SEED=n
// replays a run (the seed is printed at the start and on failure); FUZZ_SHRINK=1
// shrinks a failure to a small counterexample instead of stopping at the first.
import { STATUS_CODES } from 'node:http'
import { createHash, randomUUID } from 'node:crypto'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import type { Test } from 'tap'
import t from '../tap.js'
import { revokeToken } from '../../src/auth/tokens.js'
import { shortId } from '../../src/ids.js'
import { addContributor, build, createCompany, createPerson, createProject, createSpace, tokenFor, VALIDATOR_JARGON } from '../helper.js'

const BASE = '/api/external/v1/projects'
const BODY_LIMIT = 1024 * 1024
const FACTOR = Math.max(1, Number(process.env.FUZZ_RUNS ?? 1))
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))
const SHRINK = process.env.FUZZ_SHRINK === '1'
// 2,600 requests in a normal run, and 50 for each of the 14 lifecycle operations (LIFECYCLE_RUNS).
const RUNS = { update_name: 700, update_description: 700, get: 600, queries: 600 }

t.comment(`fast-check seed ${SEED} (FUZZ_SEED=${SEED} replays this run), runs x${FACTOR}`)

const { app, db } = await build(t)

// The fixture: a person with every kind of token, and one project per way the
// person can stand towards it.
const company = await createCompany(db)
const me = await createPerson(db, company.id)
const suspended = await createPerson(db, company.id, { suspended: true })
const mySpace = await createSpace(db, company.id, [me.id, suspended.id])
const otherSpace = await createSpace(db, company.id)
const elsewhere = await createCompany(db)
const elsewhereSpace = await createSpace(db, elsewhere.id)

const projects = {
  editable: await createProject(db, mySpace, { access: { space: 70 }, description: '{"type":"doc","content":[]}' }),
  closed: await createProject(db, mySpace, { access: { space: 70 }, state: 'closed' }),
  readonly: await createProject(db, otherSpace, { access: { company: 40 } }),
  invisible: await createProject(db, otherSpace, { access: { public: 0, company: 0, space: 0 } }),
  archived: await createProject(db, mySpace, { access: { space: 70 }, archived: true }),
  foreign: await createProject(db, elsewhereSpace, { access: { company: 70, space: 70 } })
}
await addContributor(db, projects.closed.id, me.id, 'champion')
type Known = keyof typeof projects
type Target = Known | 'unknown'
const UNKNOWN_ID = randomUUID()
const uuidOf = (target: Target) => target === 'unknown' ? UNKNOWN_ID : projects[target].id
const VISIBLE: Record<Target, boolean> = { editable: true, closed: true, readonly: true, archived: true, invisible: false, foreign: false, unknown: false }
/** What a valid mutation of an addressed project answers, per the contract. */
const MUTATION: Record<Target, [number, string]> = {
  editable: [200, ''],
  closed: [200, ''],
  readonly: [403, 'forbidden'],
  invisible: [404, 'not_found'],
  archived: [404, 'not_found'],
  foreign: [404, 'not_found'],
  unknown: [404, 'not_found']
}

const write = (await tokenFor(db, me.email)).token
const readOnly = (await tokenFor(db, me.email, { readOnly: true })).token
const revoked = await tokenFor(db, me.email)
await revokeToken(db, revoked.id)
const expired = await tokenFor(db, me.email, { expiresInDays: 1 })
await db.updateTable('api_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', expired.id).execute()
const ofSuspended = (await tokenFor(db, suspended.email)).token

// --- generators -------------------------------------------------------------

type AuthKind = 'write' | 'readonly' | 'invalid' | 'twice'
interface Auth { header: string | string[] | undefined, kind: AuthKind }

/** A valid header for the token: any case of the scheme, one or more spaces, surrounding whitespace. */
const bearerFor = (token: string) => fc.record({
  scheme: fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR'),
  gap: fc.constantFrom(' ', '  ', '    '),
  before: fc.constantFrom('', ' ', '\t', ' \t '),
  after: fc.constantFrom('', ' ', '\t', '  \t')
}).map(({ scheme, gap, before, after }) => `${before}${scheme}${gap}${token}${after}`)

const authArb: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 12, arbitrary: bearerFor(write).map((header) => ({ header, kind: 'write' as const })) },
  { weight: 2, arbitrary: bearerFor(readOnly).map((header) => ({ header, kind: 'readonly' as const })) },
  {
    weight: 4,
    arbitrary: fc.oneof(
      fc.constant(undefined),
      fc.constantFrom(
        '', 'Bearer', 'Bearer ', 'Bearer    ', `Basic ${Buffer.from(`me:${write}`).toString('base64')}`, `Token ${write}`, write,
        `Bearer${write}`, `Bearer ${write}x`, `Bearer ${write.slice(0, -1)}`, `Bearer ${write.toUpperCase()}`, `Bearer ${write} ${write}`,
        `Bearer "${write}"`, `Bearer ${write},Bearer ${write}`, `Bearer ${revoked.token}`, `Bearer ${expired.token}`,
        `Bearer ${ofSuspended}`, 'Bearer pat_', `Bearer pat_${'A'.repeat(43)}`, `Bearer ${write.slice(4)}`,
        `Bearer ${'x'.repeat(10_000)}`, `Bearer ${write}\u0000`, `Bearer \u0000${write}`
      ),
      fc.string({ unit: 'binary', maxLength: 60 }).map((s) => `Bearer ${s}`),
      fc.string({ unit: 'binary', maxLength: 60 })
    ).map((header) => ({ header, kind: 'invalid' as const }))
  },
  // Two Authorization headers, whatever they hold: ambiguous, so 400 before anything about either.
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.oneof(bearerFor(write), bearerFor(readOnly), fc.constantFrom('', 'Bearer', `Bearer ${revoked.token}`, `Basic ${write}`)),
      fc.oneof(bearerFor(write), bearerFor(readOnly), fc.constantFrom('', 'Bearer', `Bearer ${revoked.token}`, `Basic ${write}`))
    ).map((pair) => ({ header: pair, kind: 'twice' as const }))
  }
)

/** Content-Encoding: mostly absent; identity in any case; any other coding, alone or listed with identity. */
const encodingArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 16, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom('identity', 'IDENTITY', ' identity', 'identity, identity', '') },
  { weight: 2, arbitrary: fc.constantFrom('gzip', 'x-gzip', 'deflate', 'br', 'zstd', 'compress', 'GZIP', 'gzip, identity', 'identity, br', 'foo') }
)
// A body in any coding but identity is refused, never decoded or taken as it is.
const foreignEncoding = (encoding: string | undefined) => encoding !== undefined &&
  encoding.split(',').some((c) => c.trim() !== '' && c.trim().toLowerCase() !== 'identity')

/** Expect: mostly absent; 100-continue in any case and spacing; any other expectation, alone or listed with it. */
const expectArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 16, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom('100-continue', '100-Continue', ' 100-CONTINUE ', '\t100-continue') },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom('', 'foo', '200-ok', '100', 'continue', '100-continue-please', '100-continue, foo', 'foo, 100-continue', '100-continue;x=1'),
      fc.string({ unit: fc.constantFrom(...'abc019-=;, '), maxLength: 20 })
    )
  }
)
// The one expectation HTTP defines (RFC 9110 §10.1.1); any other is 417, before anything else.
const unmetExpectation = (expect: string | undefined) => expect !== undefined && !/^\s*100-continue\s*$/i.test(expect)

interface ContentType { value: string | undefined, json: boolean }
const contentTypeArb: fc.Arbitrary<ContentType> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.constantFrom(
      'application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8', 'Application/JSON',
      'application/json;charset="utf-8"', 'application/json ; charset=utf-8', 'application/json; foo=bar'
    ).map((value) => ({ value, json: true }))
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined, '', 'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
      'application/jsonx', 'application/vnd.api+json', 'application/json, text/plain', 'application/json; charset=latin1',
      'application/json; charset=utf-16', 'application/json; charset=iso-8859-1', 'application/json; charset=utf-8; charset=ascii'
    ).map((value) => ({ value, json: false }))
  }
)

/** An id addressing a project in each accepted form, or a hostile string addressing none. */
interface IdChoice { id: string, target: Target | null }
const idArb: fc.Arbitrary<IdChoice> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      target: fc.constantFrom<Target>('editable', 'editable', 'editable', 'closed', 'closed', 'readonly', 'invisible', 'archived', 'foreign', 'unknown'),
      form: fc.constantFrom('slugged', 'short', 'uuid', 'UUID', 'any-slug'),
      slug: fc.stringMatching(/^[a-z0-9-]{0,24}$/)
    }).map(({ target, form, slug }) => {
      const uuid = uuidOf(target)
      const id = form === 'slugged' && target !== 'unknown' ? projects[target].publicId
        : form === 'uuid' ? uuid
          : form === 'UUID' ? uuid.toUpperCase()
            : form === 'any-slug' ? `${slug}-${shortId(uuid)}`
              : shortId(uuid)
      return { id, target }
    })
  },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u0000', '\u001f', '-', '\ud800', '\udfff', 'a', 'Z', '9', '😀'), maxLength: 30 }),
      fc.constantFrom('', ' ', '\n\t', 'null', 'undefined', '0', '-', '--', 'x-', shortId(me.id), me.id, '0'.repeat(22), 'z'.repeat(22),
        '00000000-0000-0000-0000-000000000000', `${'x'.repeat(70_000)}-${'y'.repeat(22)}`, '{"$ne":null}', "' OR 1=1 --")
    ).map((id) => ({ id, target: null }))
  }
)

/** Strings of exactly n code points, of one to four UTF-8 bytes each, combining marks included. */
const codePoints = (min: number, max: number) => fc.integer({ min, max }).chain((n) =>
  fc.array(fc.constantFrom('a', 'é', '中', '😀', '\u0301'), { minLength: n, maxLength: n }).map((cs) => cs.join('')))

const nameArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\ufeff', '\u0000', '\u0007', '\u001b', '\u001f', '\u007f', '\u0085', '\u2028', 'a', 'é', '😀', '\ud800', '\udc00'), maxLength: 20 }),
  codePoints(250, 258),
  fc.tuple(fc.constantFrom(' ', '\n', '\t \r\n', '\u00a0'), codePoints(253, 253)).map(([pad, core]) => `${pad}${core}${pad}`),
  fc.constantFrom('x'.repeat(100_000), '\u0000', 'null', '"', '\\', '<script>alert(1)</script>', "Robert'); DROP TABLE projects;--", '${7*7}', '%s%n')
)

/** The deepest nesting of arrays and objects in a parsed JSON value, without recursion. */
function depthOf (value: unknown): number {
  let max = 0
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (v !== null && typeof v === 'object') {
      max = Math.max(max, d + 1)
      for (const child of Object.values(v)) stack.push([child, d + 1])
    }
  }
  return max
}

const nested = (depth: number, open: string[], close: string[]) => {
  let text = '1'
  for (let i = 0; i < depth; i++) text = `${open[i % open.length]}${text}${close[i % close.length]}`
  return text
}

// Documents that mention people: the author, a colleague, a suspended colleague, someone of
// another company, unknown and undecodable ids, ids of the wrong type and malformed nodes,
// anywhere in the tree. None of them is ever an error.
const colleague = await createPerson(db, company.id)
const outsider = await createPerson(db, elsewhere.id)
const mentionIdArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(shortId(me.id), shortId(colleague.id), colleague.id, shortId(suspended.id), shortId(outsider.id), shortId(randomUUID()), 'zzzzzzzzzzzzzzzzzzzzzz', '', ' '),
  fc.jsonValue()
)
const mentionNodeArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: mentionIdArb.map((id) => ({ type: 'mention', attrs: { id, label: 'Someone' } })) },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'mention' }, { type: 'mention', attrs: null }, { type: 'mention', attrs: [] }, { type: 'mention', content: 'x' }) },
  { weight: 2, arbitrary: fc.string().map((text) => ({ type: 'text', text })) }
)
const mentionDocArb: fc.Arbitrary<string> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    mentionNodeArb,
    fc.record({ type: fc.constantFrom('paragraph', 'bulletList', 'listItem', 'blockquote', 'unknown'), content: fc.array(tie('node'), { maxLength: 4 }) })
  )
})).node.chain((node) => fc.constantFrom(
  JSON.stringify({ type: 'doc', content: [node] }),
  JSON.stringify({ type: 'doc', content: node }),
  JSON.stringify({ type: 'paragraph', content: [node] })
))

const descriptionArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.json() },
  { weight: 3, arbitrary: mentionDocArb },
  { weight: 3, arbitrary: fc.tuple(fc.jsonValue(), fc.constantFrom(undefined, 0, 2, '\t')).map(([v, indent]) => JSON.stringify(v, null, indent)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.integer({ min: 1, max: 80 }), fc.boolean()).map(([depth, objects]) =>
      objects ? nested(depth, ['{"a":', '['], ['}', ']']) : nested(depth, ['['], [']']))
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'null', ' null ', '', ' ', '{', '[1,]', '{"a":1,}', "{'a':1}", 'NaN', 'Infinity', 'undefined', '01', '1e999', '-0', '"\\x41"',
      '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '[{"__proto__":null}]',
      '"\ud800"', '"\\ud800"', '"a\u0000b"', '"\\u0000"', '1\u0000', '"\u2028\u2029"', '\ufeff{}', '{"a":1,"a":2}',
      `"${'[['.repeat(1000)}"`, '["\\"[[[[[[[["]', '[' + '"x",'.repeat(50_000) + '"x"]',
      '['.repeat(100_000) + ']'.repeat(100_000), '['.repeat(100_000), `"${'x'.repeat(512 * 1024 - 2)}"`, `"${'x'.repeat(512 * 1024 - 1)}"`,
      `"${'é'.repeat(262_143)}"`, `"${'é'.repeat(262_144)}"`
    )
  }
)

// Invalid UTF-8: a lone continuation byte, an overlong NUL and slash, a CESU-8
// surrogate, a code point past U+10FFFF, truncated sequences, bytes never used.
const BAD_UTF8 = [[0x80], [0xbf], [0xc0, 0x80], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xff], [0xfe], [0xc3]]

interface Body {
  payload: Buffer
  /** The id the body carries and the project it addresses, when it is one of ours. */
  id: IdChoice | null
  /** A byte-order mark: the contract is silent, so a 400 is allowed too. */
  lenient: boolean
  /** A key repeated within an object: always 400. */
  duplicate: boolean
  label: string
}

/** Bodies for a mutation whose value field is `field`. */
function bodyArb (field: 'name' | 'description', valueArb: fc.Arbitrary<string>): fc.Arbitrary<Body> {
  const text = (label: string, id: IdChoice | null, payload: string | Buffer, { lenient = false, duplicate = false } = {}): Body =>
    ({ payload: Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8'), id, lenient, duplicate, label })
  const value = fc.oneof({ weight: 8, arbitrary: valueArb }, { weight: 1, arbitrary: fc.jsonValue() as fc.Arbitrary<unknown> })
  const idValue = fc.oneof({ weight: 8, arbitrary: idArb }, { weight: 1, arbitrary: fc.jsonValue().map((v) => ({ id: v as unknown as string, target: null })) })
  return fc.oneof(
    // The expected shape, with wrong types sometimes.
    { weight: 20, arbitrary: fc.tuple(idValue, value).map(([id, v]) => text('fields', id, JSON.stringify({ project_id: id.id, [field]: v }))) },
    // Missing, extra and prototype-polluting keys, in any order.
    {
      weight: 3,
      arbitrary: fc.tuple(idArb, valueArb, fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'extra', 'name', 'description', 'Project_Id', ''),
        fc.jsonValue(), fc.boolean(), fc.boolean()).map(([id, v, key, extra, drop, first]) => {
        const fields = drop ? [`"project_id":${JSON.stringify(id.id)}`] : [`"project_id":${JSON.stringify(id.id)}`, `"${field}":${JSON.stringify(v)}`]
        const odd = key === 'constructor' && typeof extra === 'object' ? `"constructor":{"prototype":${JSON.stringify(extra)}}` : `${JSON.stringify(key)}:${JSON.stringify(extra)}`
        return text(`key ${key}`, id, `{${(first ? [odd, ...fields] : [...fields, odd]).join(',')}}`, { duplicate: key === field && !drop })
      })
    },
    // Duplicate keys, hand-built (JSON.parse would keep the last), spelled alike or with escapes, at the top or nested.
    {
      weight: 2,
      arbitrary: fc.tuple(idArb, idArb, valueArb, valueArb, fc.constantFrom('project_id', field, 'escaped', 'nested')).map(([id1, id2, v1, v2, which]) =>
        which === 'project_id'
          ? text('duplicate project_id', id2, `{"project_id":${JSON.stringify(id1.id)},"${field}":${JSON.stringify(v1)},"project_id":${JSON.stringify(id2.id)}}`, { duplicate: true })
          : which === 'escaped'
            ? text(`duplicate ${field}, escaped`, id1, `{"project_id":${JSON.stringify(id1.id)},"${field}":${JSON.stringify(v1)},"\\u${field.charCodeAt(0).toString(16).padStart(4, '0')}${field.slice(1)}":${JSON.stringify(v2)}}`, { duplicate: true })
            : which === 'nested'
              ? text('duplicate nested key', id1, `{"project_id":${JSON.stringify(id1.id)},"${field}":${JSON.stringify(v1)},"x":[{"k":1},{"k":1,"k":2}]}`, { duplicate: true })
              : text(`duplicate ${field}`, id1, `{"project_id":${JSON.stringify(id1.id)},"${field}":${JSON.stringify(v1)},"${field}":${JSON.stringify(v2)}}`, { duplicate: true }))
    },
    // Random JSON and random bytes.
    { weight: 2, arbitrary: fc.json().map((json) => text('random JSON', null, json)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => text('random bytes', null, Buffer.from(bytes))) },
    // Invalid UTF-8 inside the value string; a byte-order mark before a valid body.
    {
      weight: 2,
      arbitrary: fc.tuple(idArb, fc.constantFrom(...BAD_UTF8), fc.string({ maxLength: 8 })).map(([id, bad, around]) => {
        const [head, tail] = JSON.stringify({ project_id: id.id, [field]: `${around}\u0001${around}` }).split('\\u0001') as [string, string]
        return text('invalid UTF-8', id, Buffer.concat([Buffer.from(head), Buffer.from(bad), Buffer.from(tail)]))
      })
    },
    { weight: 1, arbitrary: fc.tuple(idArb, valueArb).map(([id, v]) => text('BOM', id, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ project_id: id.id, [field]: v }))]), { lenient: true })) },
    // Deep nesting in place of the value, and bodies at and past the size limit.
    {
      weight: 1,
      arbitrary: fc.tuple(idArb, fc.integer({ min: 1, max: 200_000 })).map(([id, depth]) =>
        text('deep value', id, `{"project_id":${JSON.stringify(id.id)},"${field}":${'['.repeat(depth)}${']'.repeat(depth)}}`))
    },
    {
      weight: 1,
      arbitrary: fc.tuple(idArb, fc.integer({ min: -2, max: 2 })).map(([id, delta]) => {
        const head = `{"project_id":${JSON.stringify(id.id)},"${field}":"`
        return text(`body of limit${delta >= 0 ? '+' : ''}${delta} bytes`, id, `${head}${'x'.repeat(Math.max(0, BODY_LIMIT + delta - Buffer.byteLength(head) - 2))}"}`)
      })
    }
  )
}

/**
 * A conditional header (If-Match on a mutation, If-None-Match on get) as a template:
 * `{current}` is the addressed project's tag as the person reads it just before the
 * request, `{stale}` one it had before. Mostly absent; the tags a client sends;
 * and random text, which must be `*` or a list of entity tags or else a 400.
 */
const conditionArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  {
    weight: 6,
    arbitrary: fc.constantFrom('"{current}"', 'W/"{current}"', '"{current}.md"', '*', ' * ', '"{stale}"', '"{stale}", "{current}"',
      '"x",W/"{current}"', ' , "{current}" ,, ', ' , ', '', '"{current}x"', 'W/"{stale}", W/"{current}"')
  },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom('{current}', '"{current}', 'W/ "{current}"', 'w/"{current}"', '*, "{current}"', '"{current}" "{stale}"', '"a"b', 'W/W/"x"', '**'),
      fc.string({ unit: fc.constantFrom('"', 'W', '/', ',', ' ', '\t', '*', 'a', 'Z', '0', '-', '_', '.', '\u00e9', '\u00ff', '{'), maxLength: 16 }),
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 24 })
    )
  }
)

interface MutationRequest { op: 'update_name' | 'update_description', auth: Auth, expect: string | undefined, encoding: string | undefined, contentType: ContentType, body: Body, condition: string | undefined }
interface GetRequest { op: 'get', auth: Auth, expect: string | undefined, encoding: string | undefined, params: Array<[string, string]>, ids: IdChoice[], condition: string | undefined }

const shorten = (s: string) => s.length > 200 ? `${s.slice(0, 200)}… (${s.length} chars)` : s
function printable<T extends MutationRequest | GetRequest> (request: T): T {
  return Object.assign(request, {
    [fc.toStringMethod]: () => request.op === 'get'
      ? `get ${JSON.stringify({ auth: request.auth, expect: request.expect, encoding: request.encoding, condition: request.condition, params: request.params.map(([k, v]) => [shorten(k), shorten(v)]) })}`
      : `${request.op} ${JSON.stringify({ auth: request.auth, expect: request.expect, encoding: request.encoding, condition: request.condition, contentType: request.contentType, body: request.body.label, id: request.body.id && { id: shorten(String(request.body.id.id)), target: request.body.id.target } })} payload ${JSON.stringify(shorten(request.body.payload.toString('latin1')))}`
  })
}

const mutationArb = (op: MutationRequest['op']) => fc.record({
  auth: authArb,
  expect: expectArb,
  encoding: encodingArb,
  contentType: contentTypeArb,
  body: op === 'update_name' ? bodyArb('name', nameArb) : bodyArb('description', descriptionArb),
  condition: conditionArb
}).map((r) => printable({ op, ...r }))

const queryKeyArb = fc.oneof(
  fc.constantFrom('id', 'ID', 'Id', 'include_milestones', 'include_contributors', 'include_x_1', 'include_', 'include_A', 'include-x',
    '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'access_token', 'token', 'id[]', ''),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
)
const queryValueArb = fc.oneof(fc.constantFrom('true', 'false', 'TRUE', '1', ''), fc.string({ unit: 'grapheme', maxLength: 12 }))

const getArb: fc.Arbitrary<GetRequest> = fc.record({
  auth: authArb,
  expect: expectArb,
  encoding: encodingArb,
  id: fc.option(idArb, { freq: 8 }),
  extra: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 2, arbitrary: fc.array(fc.tuple(queryKeyArb, queryValueArb), { minLength: 1, maxLength: 3 }) }),
  second: fc.oneof({ weight: 9, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: idArb }),
  condition: conditionArb
}).map(({ auth, expect, encoding, id, extra, second, condition }) => {
  const params: Array<[string, string]> = []
  if (id) params.push(['id', id.id])
  params.push(...extra)
  if (second) params.push(['id', second.id])
  return printable({ op: 'get' as const, auth, expect, encoding, params, ids: [id, second].filter((i) => i !== null), condition })
})

// --- the model ----------------------------------------------------------------

interface Expected {
  /** Allowed statuses with their codes; '' for a 200. */
  outcomes: Array<[number, string]>
  /** On a 200 of a mutation: the project, the column and the value it must then hold. */
  change?: { target: Target, field: 'name' | 'description', value: string }
  /** On a 200 of a get: the project answered. */
  read?: Target
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

/** Blank: nothing that shows, only whitespace, format characters and other default-ignorable code points. */
const blank = (value: string) => /^[\p{White_Space}\p{Cf}\p{Default_Ignorable_Code_Point}]*$/u.test(value)

/** The stored name for a requested one, or null when the contract refuses it. */
function expectedName (value: string): string | null {
  if (LONE_SURROGATE.test(value)) return null
  const name = value.trim()
  if (blank(name) || [...name].length > 255 || CONTROL.test(name)) return null
  return name
}

function expectedDescription (value: string): string | null {
  if (LONE_SURROGATE.test(value) || Buffer.byteLength(value, 'utf8') > 512 * 1024) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    return null
  }
  return parsed === null || depthOf(parsed) > 64 ? null : value
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** The request's headers, as every mutation sends them. */
type Sent = Pick<MutationRequest, 'auth' | 'expect' | 'encoding' | 'contentType'>

/**
 * SPEC's checks before a body's fields, in their order (Expect, the token, the body's
 * coding, its type, its size, JSON): what they refuse, or the parsed body.
 */
function beforeFields (request: Sent, payload: Buffer): { refused: Expected } | { body: unknown } {
  const reject = (status: number, code: string) => ({ refused: { outcomes: [[status, code]] } as Expected })
  if (unmetExpectation(request.expect)) return reject(417, 'expectation_failed')
  if (request.auth.kind === 'twice') return reject(400, 'invalid_input')
  if (request.auth.kind === 'invalid') return reject(401, 'unauthenticated')
  if (request.auth.kind === 'readonly') return reject(403, 'read_only_token')
  // An empty body has no coding to refuse.
  if (foreignEncoding(request.encoding) && payload.length > 0) return reject(415, 'unsupported_media_type')
  if (!request.contentType.json) {
    // No body at all: nothing that is "not JSON" was sent, so a 400 is as right as a 415.
    return payload.length === 0
      ? { refused: { outcomes: [[400, 'invalid_input'], [415, 'unsupported_media_type']] } }
      : reject(415, 'unsupported_media_type')
  }
  if (payload.length > BODY_LIMIT) return reject(413, 'payload_too_large')
  try {
    return { body: JSON.parse(strictUtf8.decode(payload)) }
  } catch {
    return reject(400, 'invalid_input')
  }
}

function expectMutation (request: MutationRequest): Expected {
  const field = request.op === 'update_name' ? 'name' : 'description'
  const { payload, id, lenient, duplicate } = request.body
  const checked = beforeFields(request, payload)
  if ('refused' in checked) return checked.refused
  const { body } = checked
  const invalid: Expected = { outcomes: [[400, 'invalid_input']] }
  if (duplicate) return invalid
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return invalid
  const keys = Object.keys(body)
  if (keys.length !== 2 || !keys.includes('project_id') || !keys.includes(field)) return invalid
  const projectId = (body as Record<string, unknown>).project_id
  const value = (body as Record<string, unknown>)[field]
  if (typeof projectId !== 'string' || typeof value !== 'string' || projectId.trim() === '') return invalid
  const stored = field === 'name' ? expectedName(value) : expectedDescription(value)
  if (stored === null) return invalid
  const target: Target = id !== null && id.target !== null && id.id === projectId ? id.target : 'unknown'
  const [status, code] = MUTATION[target]
  const expected: Expected = { outcomes: [[status, code]], ...(status === 200 ? { change: { target, field, value: stored } } : {}) }
  if (lenient) expected.outcomes.push([400, 'invalid_input'])
  return expected
}

/** The include_* flags of Operately's projects/get, and include_markdown: true or false, nothing else. */
const GET_FLAGS = new Set(['include_markdown', 'include_contributors', 'include_goal', 'include_last_check_in', 'include_milestones',
  'include_permissions', 'include_champion', 'include_reviewer', 'include_space', 'include_resource_hub', 'include_contributors_access_levels',
  'include_access_levels', 'include_privacy', 'include_retrospective', 'include_potential_subscribers', 'include_unread_notifications',
  'include_subscription_list'])

function expectGet (request: GetRequest): Expected {
  if (unmetExpectation(request.expect)) return { outcomes: [[417, 'expectation_failed']] }
  if (request.auth.kind === 'twice') return { outcomes: [[400, 'invalid_input']] }
  if (request.auth.kind === 'invalid') return { outcomes: [[401, 'unauthenticated']] }
  const invalid: Expected = { outcomes: [[400, 'invalid_input']] }
  const ids = request.params.filter(([k]) => k === 'id')
  if (ids.length !== 1) return invalid
  const counts = new Map<string, number>()
  for (const [key, value] of request.params) {
    counts.set(key, (counts.get(key) ?? 0) + 1)
    if (key !== 'id' && !(GET_FLAGS.has(key) && (value === 'true' || value === 'false'))) return invalid
  }
  if ([...counts.values()].some((n) => n > 1)) return invalid
  const id = ids[0]![1]
  if (id.trim() === '') return invalid
  const target: Target = request.ids.find((choice) => choice.id === id)?.target ?? 'unknown'
  return VISIBLE[target] ? { outcomes: [[200, '']], read: target } : { outcomes: [[404, 'not_found']] }
}

// --- conditional requests ---------------------------------------------------------
// RFC 9110: If-Match = "*" / #entity-tag, If-None-Match likewise; entity-tag =
// [ "W/" ] DQUOTE *etagc DQUOTE; a list's elements are separated by commas with
// optional spaces and tabs, and empty elements are allowed, but a list holds at
// least one tag (1#entity-tag: empty, or commas alone, is none). Anything else is a 400
// (contract: bad input is a 4xx). A mutation compares strongly (a weak tag never
// matches; a Markdown answer's tag, the project's with .md, stands for its
// project), get weakly and only with its own representation's tag.

const ENTITY_TAG = /(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"/g
const TAG_LIST = /^[ \t]*(?:(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*")?[ \t]*(?:,[ \t]*(?:(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*")?[ \t]*)*$/

function readTags (header: string): '*' | Array<{ weak: boolean, opaque: string }> | null {
  if (/^[ \t]*\*[ \t]*$/.test(header)) return '*'
  if (!TAG_LIST.test(header)) return null
  const tags = [...header.matchAll(ENTITY_TAG)].map((m) => ({ weak: m[1] !== undefined, opaque: m[2]! }))
  return tags.length === 0 ? null : tags
}

/** What a condition does to the answers the request would get without it. */
function withCondition (expected: Expected, op: 'get' | 'mutation', header: string | undefined, current: string | null, markdown: boolean): Expected {
  if (header === undefined) return expected
  const tags = readTags(header)
  const outcomes = expected.outcomes.map(([status, code]): [number, string] => {
    // Only a request that got as far as the project lookup meets the condition.
    if (!(status === 200 || code === 'not_found' || code === 'forbidden')) return [status, code]
    if (tags === null) return [400, 'invalid_input']
    if (status !== 200) return [status, code]
    if (op === 'get') {
      const own = markdown ? `${current}.md` : current
      return tags === '*' || tags.some((tag) => tag.opaque === own) ? [304, ''] : [200, '']
    }
    const matches = tags === '*' || tags.some((tag) => !tag.weak && (tag.opaque === current || tag.opaque === `${current}.md`))
    return matches ? [200, ''] : [412, 'precondition_failed']
  })
  return { ...expected, outcomes }
}

/** The tag of the project as the token's person reads it now; null when they cannot. */
async function currentTag (target: Target | null | undefined): Promise<string | null> {
  if (target === undefined || target === null || !VISIBLE[target]) return null
  const res = await app.inject({ method: 'GET', url: `${BASE}/get`, query: { id: uuidOf(target) }, headers: { authorization: `Bearer ${write}` } })
  const tag = String(res.headers.etag).slice(1, -1)
  const seen = staleTags.get(target) ?? []
  if (seen.at(-1) !== tag) staleTags.set(target, [...seen, tag])
  return tag
}
const staleTags = new Map<Target, string[]>()
const NEVER_TAG = 'A'.repeat(43)

// --- sending and checking ----------------------------------------------------------

/** Percent-encodes a query component; a lone surrogate goes as the bytes a careless client would send. */
function encode (text: string): string {
  return [...text].map((ch) => /^[\ud800-\udfff]$/.test(ch)
    ? [...Buffer.from([0xe0 | (ch.charCodeAt(0) >> 12), 0x80 | ((ch.charCodeAt(0) >> 6) & 0x3f), 0x80 | (ch.charCodeAt(0) & 0x3f)])].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
    : encodeURIComponent(ch)).join('')
}

function send (request: MutationRequest | GetRequest, condition: string | undefined): Promise<LightMyRequestResponse> {
  // Two Authorization headers go as two (light-my-request sends each value of an array).
  const headers: Record<string, string | string[]> = {}
  if (condition !== undefined) headers[request.op === 'get' ? 'if-none-match' : 'if-match'] = condition
  if (request.auth.header !== undefined) headers.authorization = request.auth.header
  if (request.expect !== undefined) headers.expect = request.expect
  if (request.encoding !== undefined) headers['content-encoding'] = request.encoding
  if (request.op === 'get') {
    const query = request.params.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')
    return app.inject({ method: 'GET', url: `${BASE}/get${query ? `?${query}` : ''}`, headers })
  }
  if (request.contentType.value !== undefined) headers['content-type'] = request.contentType.value
  return app.inject({ method: 'POST', url: `${BASE}/${request.op}`, headers, payload: request.body.payload })
}

interface Row { name: string, description: string | null, updated_at: string, rest: string }
interface Snapshot { activities: number, rows: Map<string, Row> }

/**
 * Every project row and the number of activities. A row is the digests of its name,
 * its description (up to 512 KiB, so it travels as md5 of its UTF-8 bytes, compared
 * with the digest of the value asked) and of all its other columns but updated_at.
 */
async function snapshot (): Promise<Snapshot> {
  const { rows } = await sql<Row & { id: string, activities: string }>`
    SELECT p.id, md5(p.name) AS name, md5(p.description) AS description, to_jsonb(p.updated_at)::text AS updated_at,
           md5((to_jsonb(p) - 'name' - 'description' - 'updated_at')::text) AS rest,
           (SELECT count(*) FROM activities) AS activities
    FROM projects p`.execute(db)
  return {
    activities: Number(rows[0]!.activities),
    rows: new Map(rows.map(({ id, name, description, updated_at, rest }) => [id, { name, description, updated_at, rest }]))
  }
}

// Requests run one at a time and nothing else writes, so the state after one
// request is the state before the next: one snapshot per request.
let latest: Snapshot | undefined

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex')

const LEAK = /\bat \S+ \(|\.ts:\d|\.js:\d|\bSELECT\b|\bUPDATE\b|\bINSERT\b|\bprojects\b|\bapi_tokens\b|\bactivities\b/

function check (condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message)
}

/** The error envelope, exactly as the contract words it. */
function checkEnvelope (res: LightMyRequestResponse): { code: string } {
  check(/^application\/json/.test(String(res.headers['content-type'])), `error with content-type ${res.headers['content-type']}`)
  const body = res.json()
  const keys = Object.keys(body).sort()
  check(['code', 'error', 'message', 'statusCode'].every((k) => keys.includes(k)) && keys.every((k) => ['code', 'details', 'error', 'message', 'statusCode'].includes(k)), `envelope keys ${keys.join(',')}`)
  check(body.statusCode === res.statusCode, `statusCode ${body.statusCode} in a ${res.statusCode}`)
  check(body.error === STATUS_CODES[res.statusCode], `error ${body.error} in a ${res.statusCode}`)
  check(typeof body.code === 'string' && typeof body.message === 'string' && body.message !== '', 'code and message are strings')
  if ('details' in body) {
    check(res.statusCode === 400 && body.code === 'invalid_input', `details on a ${res.statusCode} ${body.code}`)
    check(Array.isArray(body.details) && body.details.length > 0 && body.details.every((d: Record<string, unknown>) =>
      Object.keys(d).sort().join() === 'message,path' && typeof d.path === 'string' && typeof d.message === 'string'), 'details are {path, message}')
    check(!VALIDATOR_JARGON.test(body.message), `a detail in the validator's words: ${body.message}`)
  }
  check(!LEAK.test(res.body), `internals in an error: ${res.body.slice(0, 300)}`)
  return body
}

const pristine = Object.getOwnPropertyNames(Object.prototype).sort().join()

/** Sends one request and checks it against the model and the database; returns the status. */
async function exercise (request: MutationRequest | GetRequest): Promise<number> {
  const target = request.op === 'get' ? request.ids.find((choice) => choice.target !== null)?.target : request.body.id?.target
  const addressed = target ? uuidOf(target) : UNKNOWN_ID
  // The addressed project's tag just before the request, for the condition to name (or not).
  const current = request.condition === undefined ? null : await currentTag(target)
  const stale = (target && staleTags.get(target)?.filter((tag) => tag !== current).at(-1)) ?? NEVER_TAG
  const condition = request.condition?.replaceAll('{current}', current ?? NEVER_TAG).replaceAll('{stale}', stale)
  const markdown = request.op === 'get' && request.params.some(([k, v]) => k === 'include_markdown' && v === 'true')
  const expected = request.op === 'get'
    ? withCondition(expectGet(request), 'get', condition, current, markdown)
    : withCondition(expectMutation(request), 'mutation', condition, current, false)
  const all = latest ?? await snapshot()
  const res = await send(request, condition)
  const allAfter = latest = await snapshot()
  const before = { activities: all.activities, row: all.rows.get(addressed) ?? null }
  const after = { activities: allAfter.activities, row: allAfter.rows.get(addressed) ?? null }
  const others = (s: Snapshot) => JSON.stringify([...s.rows].filter(([id]) => id !== addressed).sort(([a], [b]) => a < b ? -1 : 1))

  check(res.statusCode < 500, `a ${res.statusCode}: ${res.body.slice(0, 300)}`)
  const code = res.statusCode === 200 || res.statusCode === 304 ? '' : checkEnvelope(res).code
  check(expected.outcomes.some(([s, c]) => s === res.statusCode && c === code),
    `expected ${expected.outcomes.map(([s, c]) => `${s} ${c}`).join(' or ')}, got ${res.statusCode} ${code}: ${res.body.slice(0, 300)}`)
  check(others(allAfter) === others(all), 'another project changed')
  // A tag on every answer that carries a project, on a 304 and a 412; on nothing else.
  const tagged = res.statusCode === 200 || res.statusCode === 304 || res.statusCode === 412
  check(tagged ? /^"[A-Za-z0-9_-]{43}(\.md)?"$/.test(String(res.headers.etag)) : res.headers.etag === undefined, `ETag ${res.headers.etag} on a ${res.statusCode}`)
  if (res.statusCode === 304) {
    check(res.body === '' && res.headers['content-type'] === undefined && res.headers['content-length'] === undefined, 'a 304 has no body nor its headers')
    check(res.headers.etag === `"${current}${markdown ? '.md' : ''}"`, 'a 304 carries the current tag')
  }
  if (res.statusCode === 412) check(res.headers.etag === `"${await currentTag(target)}"`, 'a 412 carries the current tag')
  check(Object.getOwnPropertyNames(Object.prototype).sort().join() === pristine && ({} as Record<string, unknown>).polluted === undefined, 'Object.prototype polluted')

  if (res.statusCode === 200 && expected.change) {
    const { target, field, value } = expected.change
    const project = res.json().project
    check(project[field] === value, `answered ${field} ${JSON.stringify(String(project[field]).slice(0, 100))}, asked ${JSON.stringify(value.slice(0, 100))}`)
    check(typeof project.id === 'string' && project.id.endsWith(shortId(uuidOf(target))), 'answered the addressed project')
    const row = after.row!
    check(row[field] === md5(value), `stored ${field} is not the ${JSON.stringify(value.slice(0, 100))} asked`)
    const changed = before.row![field] !== md5(value)
    check(after.activities === before.activities + (changed ? 1 : 0), `${after.activities - before.activities} activities for a ${changed ? 'change' : 'no-op'}`)
    const other = field === 'name' ? 'description' : 'name'
    check(row.rest === before.row!.rest && row[other] === before.row![other], `columns other than ${field} changed`)
    check(changed || row.updated_at === before.row!.updated_at, 'updated_at moved on a no-op')
  } else {
    check(JSON.stringify(after.row) === JSON.stringify(before.row), `the addressed project changed on a ${res.statusCode}`)
    check(after.activities === before.activities, `an activity was recorded on a ${res.statusCode}`)
  }
  if (res.statusCode === 200 && expected.read) {
    const project = res.json().project
    check(project.id.endsWith(shortId(uuidOf(expected.read))), 'get answered the addressed project')
    check(md5(project.name) === after.row?.name && (project.description === null ? after.row.description === null : md5(project.description) === after.row.description),
      'get answered the stored name and description')
  }
  return res.statusCode
}

async function property (t: Test, name: string, arb: fc.Arbitrary<MutationRequest | GetRequest>, runs: number) {
  const statuses = new Map<number, number>()
  try {
    await fc.assert(fc.asyncProperty(arb, async (request) => {
      const status = await exercise(request)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
    }), { numRuns: runs * FACTOR, seed: SEED, endOnFailure: !SHRINK })
    const total = [...statuses.values()].reduce((a, b) => a + b, 0)
    t.pass(`${name}: ${total} generated requests answered as the contract says`)
    t.comment(`${name} statuses: ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(', ')}`)
  } catch (error) {
    // fast-check's message carries the seed, the path and the counterexample; the cause says what broke.
    const cause = error instanceof Error && error.cause instanceof Error ? `\nCause: ${error.cause.message}` : ''
    t.fail(`${name}: ${error instanceof Error ? error.message : String(error)}${cause}`)
  }
}

// --- the lifecycle operations ----------------------------------------------------------
// projects/create and the fourteen operations of issue 64, each its own property with the
// same hostile headers (and If-Match, but on create), and bodies built from the
// operation's valid one: as it is, with fields set to hostile values, dropped or
// added, dressed with a BOM, a duplicate key or invalid UTF-8; or random JSON and
// bytes. Ids are filled in when the request is sent, so a project that a 200 changed
// (paused, closed, deleted…) is replaced by a fresh one before the next request.
// The model predicts exactly what does not depend on the values (headers, body
// syntax, unknown and missing keys, the target's 200/403/404), and for hostile
// values allows only a 400 or what the target would answer (a 404 of another thing
// too: a goal, a space, a contributor); a 200 changes only the addressed project (or
// adds the one created), anything else writes nothing at all.

type LifecycleOp = 'create' | 'update_start_date' | 'update_due_date' | 'update_parent_goal' | 'move_to_space' | 'delete' | 'pause' | 'resume' |
  'close' | 'update_champion' | 'update_reviewer' | 'create_contributor' | 'update_contributor' | 'delete_contributor'
type LifecycleTarget = Exclude<Target, 'closed'>
const LIFECYCLE_RUNS = 50
const CONTRIBUTOR_OPS = new Set<LifecycleOp>(['update_contributor', 'delete_contributor'])
/** A valid body's keys beside the id, as each operation's schema names them (the optional ones last). */
const LIFECYCLE_KEYS: Record<LifecycleOp, { required: string[], optional: string[] }> = {
  // The access levels are optional: left out, they take the space's defaults.
  create: { required: ['space_id', 'name'], optional: ['anonymous_access_level', 'company_access_level', 'space_access_level', 'champion_id', 'reviewer_id', 'goal_id', 'description'] },
  update_start_date: { required: ['project_id', 'start_date'], optional: [] },
  update_due_date: { required: ['project_id', 'due_date'], optional: [] },
  update_parent_goal: { required: ['project_id', 'goal_id'], optional: [] },
  move_to_space: { required: ['project_id', 'space_id'], optional: [] },
  delete: { required: ['project_id'], optional: [] },
  pause: { required: ['project_id', 'message'], optional: ['send_notifications_to_everyone', 'subscriber_ids'] },
  resume: { required: ['project_id', 'message'], optional: ['send_notifications_to_everyone', 'subscriber_ids'] },
  close: { required: ['project_id', 'retrospective', 'success_status'], optional: ['send_notifications_to_everyone', 'subscriber_ids'] },
  update_champion: { required: ['project_id', 'champion_id'], optional: [] },
  update_reviewer: { required: ['project_id', 'reviewer_id'], optional: [] },
  create_contributor: { required: ['project_id', 'person_id', 'responsibility', 'permissions'], optional: ['role'] },
  update_contributor: { required: ['contrib_id'], optional: ['responsibility', 'person_id', 'permissions', 'role'] },
  delete_contributor: { required: ['contrib_id'], optional: [] }
}
const UNKNOWN_KEYS = ['__proto__', 'constructor', 'prototype', 'extra', 'Project_Id', 'id', '']

const moveTarget = await createSpace(db, company.id, [me.id])
const viewableSpace = await createSpace(db, company.id)
await db.updateTable('spaces').set({ company_access: 40 }).where('id', '=', viewableSpace.id).execute()
const companyGoal = await db.insertInto('goals').values({
  company_id: company.id, space_id: mySpace.id, name: 'Grow', timeframe_start_type: null, timeframe_start_value: null, timeframe_start_date: null,
  timeframe_end_type: null, timeframe_end_value: null, timeframe_end_date: null
}).returning('id').executeTakeFirstOrThrow()
const doc = (text: string) => JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] })

/** Where each target is made: me has full access to the editable one, views the read-only one, sees none of the others. */
const LIFECYCLE_PROJECTS: Record<Exclude<LifecycleTarget, 'unknown'>, { space: { id: string }, access: { public?: 0 | 10, company?: 0 | 40 | 70, space?: 0 | 70 | 100 }, archived?: boolean }> = {
  editable: { space: mySpace, access: { space: 100 } },
  readonly: { space: otherSpace, access: { company: 40 } },
  invisible: { space: otherSpace, access: { public: 0, company: 0, space: 0 } },
  archived: { space: mySpace, access: { space: 100 }, archived: true },
  foreign: { space: elsewhereSpace, access: { company: 70, space: 70 } }
}
/** create's spaces for the same targets: me may create in the first, view the second, see none of the others. */
const CREATE_SPACES: Record<LifecycleTarget, string> = {
  editable: mySpace.id, readonly: viewableSpace.id, invisible: otherSpace.id, archived: otherSpace.id, foreign: elsewhereSpace.id, unknown: randomUUID()
}
const LIFECYCLE_OUTCOME: Record<LifecycleTarget, [number, string]> = {
  editable: [200, ''], readonly: [403, 'forbidden'], invisible: [404, 'not_found'], archived: [404, 'not_found'], foreign: [404, 'not_found'], unknown: [404, 'not_found']
}

interface LifecycleFixture { id: string, publicId: string, binding: string }
const lifecycleFixtures = new Map<string, LifecycleFixture>()

/** The project (and contributor) an operation addresses as `target`: made on first use, and again after a 200. */
async function lifecycleFixture (op: LifecycleOp, target: LifecycleTarget): Promise<LifecycleFixture> {
  const key = `${op} ${target}`
  const found = lifecycleFixtures.get(key)
  if (found !== undefined) return found
  let made: LifecycleFixture = { id: randomUUID(), publicId: '', binding: randomUUID() }
  if (target !== 'unknown') {
    const { space, access, archived } = LIFECYCLE_PROJECTS[target]
    const project = await createProject(db, space, { access, archived, state: op === 'resume' ? 'paused' : 'active' })
    const binding = CONTRIBUTOR_OPS.has(op) ? (await addContributor(db, project.id, target === 'foreign' ? outsider.id : colleague.id, 'contributor', 10)).id : randomUUID()
    made = { id: project.id, publicId: project.publicId, binding }
  }
  made.publicId ||= shortId(made.id)
  lifecycleFixtures.set(key, made)
  return made
}

type IdForm = 'slugged' | 'short' | 'uuid' | 'UUID'
const formOf = (uuid: string, publicId: string, form: IdForm) =>
  form === 'slugged' ? publicId : form === 'short' ? shortId(uuid) : form === 'uuid' ? uuid : uuid.toUpperCase()

/** The operation's valid body for the target, its id in the form asked. */
async function validLifecycleBody (op: LifecycleOp, target: LifecycleTarget, form: IdForm): Promise<Record<string, unknown>> {
  if (op === 'create') {
    return { space_id: formOf(CREATE_SPACES[target], shortId(CREATE_SPACES[target]), form), name: `Fuzzed ${randomUUID()}`, anonymous_access_level: 0, company_access_level: 40, space_access_level: 70 }
  }
  const made = await lifecycleFixture(op, target)
  if (CONTRIBUTOR_OPS.has(op)) {
    const contribId = formOf(made.binding, shortId(made.binding), form === 'slugged' ? 'short' : form)
    return op === 'update_contributor' ? { contrib_id: contribId, responsibility: 'Runs it' } : { contrib_id: contribId }
  }
  const own: Record<string, unknown> = {
    update_start_date: { start_date: { date: '2026-03-02', date_type: 'day', value: 'Mar 2, 2026' } },
    update_due_date: { due_date: { date: '2026-12-31', date_type: 'quarter', value: 'Q4 2026' } },
    update_parent_goal: { goal_id: shortId(companyGoal.id) },
    move_to_space: { space_id: shortId(moveTarget.id) },
    delete: {},
    pause: { message: doc('Waiting') },
    resume: { message: doc('Going on') },
    close: { retrospective: doc('Done'), success_status: 'achieved' },
    update_champion: { champion_id: shortId(colleague.id) },
    update_reviewer: { reviewer_id: shortId(colleague.id) },
    create_contributor: { person_id: shortId(colleague.id), responsibility: 'Runs it', permissions: 'view_access' }
  }
  return { project_id: formOf(made.id, made.publicId, form), ...(own[op] as object) }
}

/** Hostile values for any field: wrong types, hostile strings, ids of nothing or of the wrong thing, dates that do not exist. */
const hostileValueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  nameArb,
  fc.constantFrom(null, '', ' ', 0, -1, 1.5, 70, 101, true, [], {}, '{}', 'null', '[]', '\u0000', 'x'.repeat(100_000), shortId(UNKNOWN_ID), 'z'.repeat(22),
    shortId(me.id), shortId(suspended.id), shortId(outsider.id), shortId(colleague.id), shortId(elsewhereSpace.id), shortId(otherSpace.id),
    'achieved', 'missed', 'full_access', 'edit_access', 'champion', 'reviewer', [shortId(colleague.id), shortId(outsider.id)], ['\ud800'],
    Array.from({ length: 1001 }, () => shortId(colleague.id)), { date: '2026-02-30', date_type: 'day', value: 'Feb 30, 2026' },
    { date: '2026-03-02', date_type: 'month', value: 'Mar 2026' }, { date: '2026-03-02', date_type: 'quarter', value: 'Q2 2026' },
    { date: '2026-03-02', date_type: 'week', value: 'x' }, { date: '2026-03-02', date_type: 'day' }, { date: '0000-01-01', date_type: 'year', value: '0' },
    { date: '2026-03-02', date_type: 'day', value: 'Mar 2, 2026', extra: 1 }, '{"type":"doc","content":"x"}', '['.repeat(200) + ']'.repeat(200))
)

interface Edit { key: string, value?: unknown, drop?: boolean }
interface LifecyclePlan { target: LifecycleTarget, form: IdForm, edits: Edit[], dress: 'plain' | 'bom' | 'duplicate' | 'bad_utf8', raw: Buffer | null }
interface LifecycleRequest { op: LifecycleOp, auth: Auth, expect: string | undefined, encoding: string | undefined, contentType: ContentType, condition: string | undefined, plan: LifecyclePlan }

const editArb = (op: LifecycleOp): fc.Arbitrary<Edit> => {
  const known = [...LIFECYCLE_KEYS[op].required, ...LIFECYCLE_KEYS[op].optional]
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ key: fc.constantFrom(...known), value: hostileValueArb }) },
    { weight: 1, arbitrary: fc.constantFrom(...known).map((key) => ({ key, drop: true })) },
    { weight: 1, arbitrary: fc.record({ key: fc.constantFrom(...UNKNOWN_KEYS), value: fc.jsonValue() }) }
  )
}

const lifecyclePlanArb = (op: LifecycleOp): fc.Arbitrary<LifecyclePlan> => fc.record({
  target: fc.constantFrom<LifecycleTarget>('editable', 'editable', 'editable', 'readonly', 'invisible', 'archived', 'foreign', 'unknown'),
  form: fc.constantFrom<IdForm>('slugged', 'short', 'uuid', 'UUID'),
  edits: fc.oneof({ weight: 3, arbitrary: fc.constant<Edit[]>([]) }, { weight: 4, arbitrary: fc.array(editArb(op), { minLength: 1, maxLength: 3 }) }),
  dress: fc.constantFrom<LifecyclePlan['dress']>('plain', 'plain', 'plain', 'plain', 'plain', 'plain', 'bom', 'duplicate', 'bad_utf8'),
  raw: fc.oneof(
    { weight: 12, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.json().map((json) => Buffer.from(json)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 100_000 }).map((depth) => Buffer.from(`{"project_id":${'['.repeat(depth)}${']'.repeat(depth)}}`)) },
    { weight: 1, arbitrary: fc.integer({ min: -2, max: 2 }).map((delta) => Buffer.from(`{"x":"${'x'.repeat(BODY_LIMIT + delta - 8)}"}`)) }
  )
})

// Half the requests carry hostile headers; the other half a write token and JSON, so that their bodies reach the operation.
const cleanHeadersArb = fc.record({
  auth: bearerFor(write).map((header): Auth => ({ header, kind: 'write' })),
  expect: fc.constant(undefined),
  encoding: fc.constant(undefined),
  contentType: fc.constant<ContentType>({ value: 'application/json', json: true })
})
const hostileHeadersArb = fc.record({ auth: authArb, expect: expectArb, encoding: encodingArb, contentType: contentTypeArb })
const lifecycleArb = (op: LifecycleOp): fc.Arbitrary<LifecycleRequest> => fc.record({
  headers: fc.oneof(cleanHeadersArb, hostileHeadersArb), condition: op === 'create' ? fc.constant(undefined) : conditionArb, plan: lifecyclePlanArb(op)
}).map(({ headers, ...r }) => ({ ...headers, ...r })).map((r) => Object.assign({ op, ...r }, {
  [fc.toStringMethod]: () => `${op} ${JSON.stringify({ ...r, plan: { ...r.plan, raw: r.plan.raw && shorten(r.plan.raw.toString('latin1')), edits: r.plan.edits.map((e) => ({ ...e, value: shorten(JSON.stringify(e.value) ?? '') })) } })}`
}))

/** The body's bytes, and what holds of them whatever the values: a key dropped or unknown, a dressing that is always a 400 (or allowed one). */
async function renderLifecycle (op: LifecycleOp, plan: LifecyclePlan) {
  const none = { exact: false, edited: false, lenient: false }
  if (plan.raw !== null) return { payload: plan.raw, ...none }
  const body = await validLifecycleBody(op, plan.target, plan.form)
  const extras: string[] = []
  for (const edit of plan.edits) {
    if (edit.drop === true) delete body[edit.key]
    else if (UNKNOWN_KEYS.includes(edit.key)) extras.push(`${JSON.stringify(edit.key)}:${JSON.stringify(edit.value ?? null)}`)
    else body[edit.key] = edit.value
  }
  const missing = LIFECYCLE_KEYS[op].required.some((key) => !(key in body))
  const [first] = Object.keys(body)
  if (plan.dress === 'duplicate' && first !== undefined) extras.push(`${JSON.stringify(first)}:${JSON.stringify(body[first])}`)
  const text = JSON.stringify(body)
  const joined = extras.length === 0 ? text : `${text.slice(0, -1)}${text === '{}' ? '' : ','}${extras.join(',')}}`
  let payload = Buffer.from(joined)
  if (plan.dress === 'bom') payload = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), payload])
  if (plan.dress === 'bad_utf8') payload = Buffer.concat([Buffer.from(joined.slice(0, -1)), Buffer.from(',"x":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])
  const exact = extras.length > 0 || missing || plan.dress === 'bad_utf8'
  return { payload, exact, edited: plan.edits.some((e) => e.drop !== true && !UNKNOWN_KEYS.includes(e.key)) || plan.edits.some((e) => e.drop === true), lenient: plan.dress === 'bom' }
}

/** What the contract gives for the request; `current` is the target's tag just before it. */
function expectLifecycle (request: LifecycleRequest, rendered: Awaited<ReturnType<typeof renderLifecycle>>, condition: string | undefined, current: string | null): Expected {
  const checked = beforeFields(request, rendered.payload)
  if ('refused' in checked) return checked.refused
  const { body } = checked
  const invalid: Expected = { outcomes: [[400, 'invalid_input']] }
  if (body === null || typeof body !== 'object' || Array.isArray(body) || rendered.exact) return invalid
  const outcome = LIFECYCLE_OUTCOME[request.plan.target]
  let expected: Expected
  if (request.plan.raw !== null) {
    expected = { outcomes: [[400, 'invalid_input'], [404, 'not_found']] }
  } else if (!rendered.edited) {
    expected = { outcomes: [outcome, ...(rendered.lenient ? [[400, 'invalid_input'] as [number, string]] : [])] }
  } else {
    // A hostile value may still be valid, or name nothing (a goal, a space, a person: 400 or 404).
    expected = { outcomes: [[400, 'invalid_input'], [404, 'not_found'], outcome] }
  }
  const conditioned = withCondition(expected, 'mutation', condition, current, false)
  // Checks of the values made once the project is locked come after If-Match's.
  if (rendered.edited && outcome[0] === 200 && condition !== undefined && readTags(condition) !== null) conditioned.outcomes.push([412, 'precondition_failed'])
  return conditioned
}

/** Every project's row with its contributors (digests), and how many rows the tables a change writes hold. */
async function lifecycleSnapshot () {
  const { rows } = await sql<{ id: string, digest: string }>`
    SELECT p.id, md5(to_jsonb(p)::text || coalesce((SELECT jsonb_agg(to_jsonb(c) ORDER BY c.id)::text FROM project_contributors c WHERE c.project_id = p.id), '')) AS digest
    FROM projects p`.execute(db)
  const { rows: [counts] } = await sql<{ counts: string }>`
    SELECT concat_ws(' ', (SELECT count(*) FROM activities), (SELECT count(*) FROM subscriptions), (SELECT count(*) FROM notifications),
      (SELECT count(*) FROM project_retrospectives), (SELECT count(*) FROM webhook_deliveries), (SELECT count(*) FROM project_contributors)) AS counts`.execute(db)
  return { projects: new Map(rows.map((r) => [r.id, r.digest])), counts: counts!.counts }
}

/** The target project's tag as me reads it now; null when me cannot. */
async function lifecycleTag (op: LifecycleOp, target: LifecycleTarget): Promise<string | null> {
  if (op === 'create' || !['editable', 'readonly'].includes(target)) return null
  const made = await lifecycleFixture(op, target)
  const res = await app.inject({ method: 'GET', url: `${BASE}/get`, query: { id: made.id }, headers: { authorization: `Bearer ${write}` } })
  return String(res.headers.etag).slice(1, -1)
}

async function exerciseLifecycle (request: LifecycleRequest): Promise<number> {
  const { op, plan } = request
  const rendered = await renderLifecycle(op, plan)
  const current = request.condition === undefined ? null : await lifecycleTag(op, plan.target)
  const condition = request.condition?.replaceAll('{current}', current ?? NEVER_TAG).replaceAll('{stale}', NEVER_TAG)
  const expected = expectLifecycle(request, rendered, condition, current)
  const headers: Record<string, string | string[]> = {}
  if (condition !== undefined) headers['if-match'] = condition
  if (request.auth.header !== undefined) headers.authorization = request.auth.header
  if (request.expect !== undefined) headers.expect = request.expect
  if (request.encoding !== undefined) headers['content-encoding'] = request.encoding
  if (request.contentType.value !== undefined) headers['content-type'] = request.contentType.value
  const before = await lifecycleSnapshot()
  const res = await app.inject({ method: 'POST', url: `${BASE}/${op}`, headers, payload: rendered.payload })
  const after = await lifecycleSnapshot()

  check(res.statusCode < 500, `a ${res.statusCode}: ${res.body.slice(0, 300)}`)
  const code = res.statusCode === 200 ? '' : checkEnvelope(res).code
  check(expected.outcomes.some(([s, c]) => s === res.statusCode && c === code),
    `expected ${expected.outcomes.map(([s, c]) => `${s} ${c}`).join(' or ')}, got ${res.statusCode} ${code}: ${res.body.slice(0, 300)}`)
  const tagged = res.statusCode === 200 || res.statusCode === 412
  check(tagged ? /^"[A-Za-z0-9_-]{43}"$/.test(String(res.headers.etag)) : res.headers.etag === undefined, `ETag ${res.headers.etag} on a ${res.statusCode}`)
  if (res.statusCode === 412) check(res.headers.etag === `"${await lifecycleTag(op, plan.target)}"`, 'a 412 carries the current tag')
  check(Object.getOwnPropertyNames(Object.prototype).sort().join() === pristine && ({} as Record<string, unknown>).polluted === undefined, 'Object.prototype polluted')
  if (res.statusCode !== 200) {
    check(after.counts === before.counts && JSON.stringify([...after.projects]) === JSON.stringify([...before.projects]), `written on a ${res.statusCode}`)
    return res.statusCode
  }
  const answered = String(res.json().project.id)
  const added = [...after.projects.keys()].filter((id) => !before.projects.has(id))
  if (op === 'create') {
    check(added.length === 1 && answered.endsWith(shortId(added[0]!)), `create answered ${answered}, added ${added.join()}`)
  } else {
    const made = await lifecycleFixture(op, plan.target)
    check(added.length === 0 && answered.endsWith(shortId(made.id)), `answered ${answered}, not the addressed project`)
    lifecycleFixtures.delete(`${op} ${plan.target}`)
  }
  const changed = [...before.projects].filter(([id, digest]) => after.projects.get(id) !== digest && !(op !== 'create' && answered.endsWith(shortId(id))))
  check(changed.length === 0, `other projects changed: ${changed.map(([id]) => id).join()}`)
  return res.statusCode
}

// --- the other queries ---------------------------------------------------------------
// people/get_me, companies/get and projects/list take only query parameters: their
// own, Operately's include_* flags of that operation, and nothing else. Each answer is predicted from
// the parameters alone; a 200 shows the token's person, its company, or a page of
// the projects it can see (the editable, closed, read-only-visible and, when asked,
// archived ones), and nothing is ever written.

interface QueryRequest { op: 'get_me' | 'get_company' | 'list', auth: Auth, params: Array<[string, string]> }

const QUERY_PATHS = { get_me: '/api/external/v1/people/get_me', get_company: '/api/external/v1/companies/get', list: `${BASE}/list` }
const OWN_FLAGS = { get_me: ['include_manager'], get_company: ['include_admins', 'include_people'], list: ['only_my_projects', 'only_reviewed_by_me', 'include_archived'] }
/** Operately's other flags of each operation: accepted as true or false, and changing nothing. */
const OPERATELY_FLAGS: Record<QueryRequest['op'], string[]> = {
  get_me: [],
  get_company: ['include_permissions', 'include_owners', 'include_general_space', 'include_members_access_levels'],
  list: ['include_space', 'include_milestones', 'include_contributors', 'include_last_check_in', 'include_champion', 'include_reviewer',
    'include_goal', 'include_privacy', 'include_retrospective']
}
const VISIBLE_ACTIVE: Known[] = ['closed', 'editable', 'readonly']

let issuedCursor = ''
const cursorArb = fc.oneof(
  fc.constant('issued'), // the cursor of a real first page, with its filters or not
  fc.constantFrom('', 'x', 'abc.def', shortId(me.id), projects.editable.publicId, `${'A'.repeat(30)}.${'B'.repeat(22)}`),
  fc.string({ unit: 'grapheme', maxLength: 40 })
)
const queryParamArb = (op: QueryRequest['op']) => fc.oneof(
  fc.tuple(fc.constantFrom(...OWN_FLAGS[op], 'include_milestones', 'include_x'), fc.constantFrom('true', 'false', 'TRUE', '1', '', 'yes')),
  ...(op === 'list'
    ? [
        fc.tuple(fc.constant('limit'), fc.oneof(fc.constantFrom('1', '2', '20', '100', '0', '101', '-1', '1.5', 'abc', '', '007', '1000'), fc.nat(200).map(String))),
        fc.tuple(fc.constantFrom('space_id', 'goal_id'), fc.oneof(
          fc.constantFrom(shortId(mySpace.id), mySpace.id, shortId(otherSpace.id), shortId(elsewhereSpace.id), shortId(randomUUID()), '', ' ', 'not-an-id!', 'z'.repeat(22))
        )),
        fc.tuple(fc.constant('cursor'), cursorArb)
      ]
    : []),
  fc.tuple(fc.constantFrom('id', 'token', 'access_token', '__proto__', 'constructor', ''), fc.string({ maxLength: 8 }))
)
const queryArb = fc.constantFrom<QueryRequest['op']>('get_me', 'get_company', 'list').chain((op) => fc.record({
  auth: authArb,
  params: fc.array(queryParamArb(op), { maxLength: 4 })
}).map(({ auth, params }) => Object.assign({ op, auth, params }, {
  [fc.toStringMethod]: () => `${op} ${JSON.stringify({ auth, params })}`
})))

const ID_SHAPE = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:.*-)?[0-9A-Za-z]{22})$/i
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** An id stands for a UUID: a canonical one, or 22 base62 digits (after any slug) worth less than 2^128. */
function standsForUuid (id: string): boolean {
  const value = id.trim()
  if (!ID_SHAPE.test(value)) return false
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return true
  let n = 0n
  for (const c of value.slice(-22)) n = n * 62n + BigInt(BASE62.indexOf(c))
  return n < 1n << 128n
}

/** The status and code the contract gives; for a 200 of a list, the projects the page may hold. */
function expectQuery (request: QueryRequest): { outcomes: Array<[number, string]> } {
  if (request.auth.kind === 'twice') return { outcomes: [[400, 'invalid_input']] }
  if (request.auth.kind === 'invalid') return { outcomes: [[401, 'unauthenticated']] }
  const invalid = { outcomes: [[400, 'invalid_input']] as Array<[number, string]> }
  const seen = new Set<string>()
  for (const [key, value] of request.params) {
    if (seen.has(key)) return invalid
    seen.add(key)
    const flag = OWN_FLAGS[request.op].includes(key) || OPERATELY_FLAGS[request.op].includes(key)
    if (flag) {
      if (value !== 'true' && value !== 'false') return invalid
      continue
    }
    if (request.op !== 'list') return invalid
    if (key === 'limit') {
      if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > 100) return invalid
    } else if (key === 'space_id' || key === 'goal_id') {
      // 22 base62 digits past 2^128 (`zzz…`) stand for nothing: 400, like any other non-id.
      if (value.trim() === '' || !standsForUuid(value)) return invalid
    } else if (key !== 'cursor') {
      return invalid
    }
  }
  const cursor = request.params.find(([k]) => k === 'cursor')?.[1]
  // Only a cursor issued for this very person and these filters is followed.
  if (cursor !== undefined && cursor !== issuedCursor) return invalid
  if (cursor !== undefined) {
    const filters = request.params.filter(([k]) => ['only_my_projects', 'only_reviewed_by_me', 'space_id', 'goal_id', 'include_archived'].includes(k))
    // The cursor was issued with no filters: any filter that narrows or widens the list makes it another list's.
    if (filters.some(([k, v]) => k === 'space_id' || k === 'goal_id' || v === 'true')) return invalid
  }
  return { outcomes: [[200, '']] }
}

async function exerciseQuery (request: QueryRequest): Promise<number> {
  const params = request.params.map(([k, v]): [string, string] => [k, k === 'cursor' && v === 'issued' ? issuedCursor : v])
  const resolved = { ...request, params }
  const expected = expectQuery(resolved)
  const before = latest ?? await snapshot()
  const headers: Record<string, string | string[]> = {}
  if (request.auth.header !== undefined) headers.authorization = request.auth.header
  const query = params.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')
  const res = await app.inject({ method: 'GET', url: `${QUERY_PATHS[request.op]}${query ? `?${query}` : ''}`, headers })
  const after = latest = await snapshot()
  check(res.statusCode < 500, `a ${res.statusCode}: ${res.body.slice(0, 300)}`)
  const code = res.statusCode === 200 ? '' : checkEnvelope(res).code
  check(expected.outcomes.some(([s, c]) => s === res.statusCode && c === code),
    `expected ${expected.outcomes.map(([s, c]) => `${s} ${c}`).join(' or ')}, got ${res.statusCode} ${code}: ${res.body.slice(0, 300)}`)
  check(JSON.stringify([...after.rows]) === JSON.stringify([...before.rows]) && after.activities === before.activities, 'a query wrote')
  if (res.statusCode === 200) {
    const body = res.json()
    if (request.op === 'get_me') check(body.me.id === shortId(me.id), 'get_me answered another person')
    if (request.op === 'get_company') check(body.company.id === shortId(company.id), 'companies/get answered another company')
    if (request.op === 'list') {
      const allowed = new Set([...VISIBLE_ACTIVE, 'archived'].map((k) => shortId(projects[k as Known].id)))
      for (const project of body.projects) check(allowed.has(project.id.split('-').at(-1)), `listed a project it cannot see: ${project.id}`)
      check(body.next_cursor === null || typeof body.next_cursor === 'string', 'next_cursor')
    }
  }
  return res.statusCode
}

t.test('get_me, companies/get, projects/list: hostile query strings and headers', async (t) => {
  const first = await app.inject({ method: 'GET', url: `${BASE}/list?limit=1`, headers: { authorization: `Bearer ${write}` } })
  issuedCursor = first.json().next_cursor
  t.type(issuedCursor, 'string', 'a first page of one has a next page')
  const statuses = new Map<number, number>()
  try {
    await fc.assert(fc.asyncProperty(queryArb, async (request) => {
      const status = await exerciseQuery(request)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
    }), { numRuns: RUNS.queries * FACTOR, seed: SEED, endOnFailure: !SHRINK })
    t.pass(`queries: ${[...statuses.values()].reduce((a, b) => a + b, 0)} generated requests answered as the contract says`)
    t.comment(`queries statuses: ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(', ')}`)
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `\nCause: ${error.cause.message}` : ''
    t.fail(`queries: ${error instanceof Error ? error.message : String(error)}${cause}`)
  }
})

t.test('update_name: hostile bodies, headers and ids', (t) => property(t, 'update_name', mutationArb('update_name'), RUNS.update_name))
t.test('update_description: hostile bodies, headers and ids', (t) => property(t, 'update_description', mutationArb('update_description'), RUNS.update_description))
t.test('after random mentions: subscriptions only of the project\'s company and never suspended; nobody notified of their own change, nor while suspended', async (t) => {
  const crossCompany = await db.selectFrom('subscriptions as s')
    .innerJoin('subscription_lists as l', 'l.id', 's.subscription_list_id')
    .innerJoin('projects as p', 'p.id', 'l.project_id')
    .innerJoin('people as pe', 'pe.id', 's.person_id')
    .where((eb) => eb.or([eb('pe.company_id', '<>', eb.ref('p.company_id')), eb('pe.suspended_at', 'is not', null)]))
    .select('s.id').execute()
  t.same(crossCompany, [], 'no subscription of another company\'s or a suspended person')
  const selfNotified = await db.selectFrom('notifications as n')
    .innerJoin('activities as a', 'a.id', 'n.activity_id')
    .innerJoin('people as pe', 'pe.id', 'n.person_id')
    .where((eb) => eb.or([eb('n.person_id', '=', eb.ref('a.author_id')), eb('pe.suspended_at', 'is not', null)]))
    .select('n.id').execute()
  t.same(selfNotified, [], 'no notification of the author or a suspended person')
  // And the invariants are not empty: a mention of the colleague does subscribe them.
  const description = JSON.stringify({ type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'mention', attrs: { id: shortId(colleague.id) } }, { type: 'text', text: ` ${randomUUID()}` }] }] })
  const res = await app.inject({
    method: 'POST', url: '/api/external/v1/projects/update_description',
    headers: { authorization: `Bearer ${write}`, 'content-type': 'application/json' },
    payload: { project_id: shortId(projects.editable.id), description }
  })
  t.equal(res.statusCode, 200)
  latest = undefined // the properties that follow take a new snapshot of the projects
  const mentioned = await db.selectFrom('subscriptions as s').innerJoin('subscription_lists as l', 'l.id', 's.subscription_list_id')
    .where('l.project_id', '=', projects.editable.id).where('s.person_id', '=', colleague.id).select('s.type').execute()
  t.equal(mentioned.length, 1, 'the mentioned colleague has one subscription on the project')
})
t.test('get: hostile query strings, headers and ids', (t) => property(t, 'get', getArb, RUNS.get))

const LIFECYCLE_OPS: LifecycleOp[] = ['create', 'update_start_date', 'update_due_date', 'update_parent_goal', 'move_to_space', 'delete', 'pause', 'resume', 'close',
  'update_champion', 'update_reviewer', 'create_contributor', 'update_contributor', 'delete_contributor']
for (const [i, op] of LIFECYCLE_OPS.entries()) {
  t.test(`${op}: hostile bodies, headers and ids`, async (t) => {
    const statuses = new Map<number, number>()
    try {
      await fc.assert(fc.asyncProperty(lifecycleArb(op), async (request) => {
        const status = await exerciseLifecycle(request)
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
      }), { numRuns: LIFECYCLE_RUNS * FACTOR, seed: SEED + i, endOnFailure: !SHRINK })
      t.pass(`${op}: ${[...statuses.values()].reduce((a, b) => a + b, 0)} generated requests answered as the contract says`)
      t.comment(`${op} statuses: ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(', ')}`)
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? `\nCause: ${error.cause.message}` : ''
      t.fail(`${op}: ${error instanceof Error ? error.message : String(error)}${cause}`)
    }
  })
}
