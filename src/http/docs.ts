// The API reference at /docs: Scalar's, served from this process (its bundled
// script, no CDN), reading the document at DOCUMENT_URL, under a
// Content-Security-Policy of its own: the API keeps helmet's strict default.
import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { lazily } from '../lazy.js'
import { DOCUMENT_URL } from './openapi.js'

const DOCS_PREFIX = '/docs'

// helmet's default policy, but everything from this origin (no https: fonts or
// styles), scripts from this origin plus the page's inline ones by their hash (Scalar
// configures itself in one inline script), inline styles (Scalar injects its
// stylesheet), and no upgrade-insecure-requests, which would make a page served over
// plain HTTP ask for its own script over HTTPS.
const DOCS_POLICY = [
  "default-src 'self'",
  "base-uri 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'"
]
const INLINE_SCRIPT = /<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi

function docsPolicy (html: string): string {
  const hashes = [...html.matchAll(INLINE_SCRIPT)].map((match) =>
    ` 'sha256-${createHash('sha256').update(match[1] ?? '').digest('base64')}'`)
  return [...DOCS_POLICY, `script-src 'self'${hashes.join('')}`].join('; ')
}

export default fp(async (fastify) => {
  await fastify.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, security: [] }
    })
    // helmet's other headers stay; its policy gives way to the page's, known once the page is.
    docs.addHook('onSend', async (_request, reply, payload) => {
      reply.header('content-security-policy', docsPolicy(typeof payload === 'string' ? payload : ''))
      return payload
    })
    // Typed by the package more narrowly than Scalar's page reads it (agent, MCP).
    const configuration = {
      url: DOCUMENT_URL,
      pageTitle: 'Projects API reference',
      // Everything from this process: no web fonts, telemetry or proxy elsewhere.
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      // Features that call Scalar's own services: nothing to offer offline.
      showDeveloperTools: 'never' as const,
      mcp: { disabled: true },
      agent: { disabled: true }
    }
    // Scalar's module carries its page script as a 4 MB string, some 40 MB of memory
    // once loaded: it is loaded on the first visit to the docs, into an instance of
    // its own whose answers are passed on, so a server nobody reads the docs of
    // never carries it.
    const reference = lazily(async () => {
      const { default: scalar } = await import('@scalar/fastify-api-reference')
      const instance = Fastify()
      await instance.register(scalar, { routePrefix: DOCS_PREFIX, configuration })
      await instance.ready()
      return instance
    })
    // A load that fails is the visit's 500, and tried again by the next (lazy.ts): nothing to close.
    fastify.addHook('onClose', async () => { await reference.started()?.then(async (instance) => { await instance.close() }, () => {}) })
    const pass = async (request: FastifyRequest, reply: FastifyReply) => {
      const answer = await (await reference.get()).inject({ method: 'GET', url: request.url })
      if (answer.statusCode === 404) throw new ApiError(404, 'route_not_found', `no route ${request.method} ${request.url.split('?', 1)[0]}`)
      for (const name of ['content-type', 'location', 'etag', 'last-modified']) {
        const value = answer.headers[name]
        if (value !== undefined) reply.header(name, value)
      }
      // Scalar's bundle (4 MB) changes only with the package: no need to fetch it on every visit.
      if (String(answer.headers['content-type']).startsWith('application/javascript')) reply.cacheControl('public').maxAge(3600)
      return reply.code(answer.statusCode).send(answer.payload)
    }
    docs.get(DOCS_PREFIX, { schema: { hide: true } }, pass)
    docs.get(`${DOCS_PREFIX}/*`, { schema: { hide: true } }, pass)
  })
}, { name: 'docs' })
