import t from 'tap'
import Fastify from 'fastify'
import { lazySchemaCompilers } from '../../../plugins/http/lazy-schemas'

t.test('schemas are compiled on first use and behave as Fastify\'s own compilers', async (t) => {
  const app = Fastify({ schemaController: { compilersFactory: lazySchemaCompilers() } })
  t.teardown(async () => { await app.close() })
  app.post('/echo', {
    schema: {
      body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } }, additionalProperties: false },
      response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } }
    }
  }, async (request) => ({ ...(request.body as { n: number }), dropped: 'not in the response schema' }))
  // Ajv rejects this schema (an unknown format under strict mode): reported on first use, not at start-up.
  app.post('/broken', { schema: { body: { type: 'string', format: 'no-such-format' } } }, async () => 'never')
  await app.ready()

  const ok = await app.inject({ method: 'POST', url: '/echo', payload: { n: 3 } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { n: 3 }, 'the response serializer drops what its schema does not name')
  const bad = await app.inject({ method: 'POST', url: '/echo', payload: { n: 'x' } })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, /body\/n must be integer/, 'the validation errors reach Fastify')
  const again = await app.inject({ method: 'POST', url: '/echo', payload: {} })
  t.equal(again.statusCode, 400, 'the compiled validator is reused')
  t.match(again.json().message, /must have required property 'n'/, 'with the errors of this call')
  const broken = await app.inject({ method: 'POST', url: '/broken', payload: '"x"', headers: { 'content-type': 'application/json' } })
  t.equal(broken.statusCode, 500, 'a schema Ajv rejects fails its route when first used')
})
