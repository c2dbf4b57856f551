import t from 'tap'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parse } from 'yaml'
import { closed } from './helpers/openapi-validator'

/*
 * Issue 42, item 11: the versioning policy adds response members without a new version, so the published document
 * must not forbid them; request bodies stay closed, and the service's tests still validate answers strictly.
 */

const document = parse(readFileSync(resolve(__dirname, '..', 'openapi.yaml'), 'utf8')) as {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> }, responses?: Record<string, { content?: Record<string, { schema: unknown }> }> }>>
  components: { schemas: Record<string, unknown> }
}
const schemas = document.components.schemas

function closes (node: unknown, within = schemas, seen = new Set<string>()): boolean {
  if (Array.isArray(node)) return node.some((item) => closes(item, within, seen))
  if (node === null || typeof node !== 'object') return false
  const record = node as Record<string, unknown>
  if (record.additionalProperties === false) return true
  const target = record.$ref
  if (typeof target === 'string' && target.startsWith('#/components/schemas/')) {
    const name = target.slice('#/components/schemas/'.length)
    if (seen.has(name)) return false
    seen.add(name)
    return closes(within[name], within, seen)
  }
  return Object.values(record).some((value) => closes(value, within, seen))
}

t.test('no response schema of the published document forbids new members; request bodies do', async (t) => {
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item))
  const responseSchemas = operations.flatMap((op) => Object.values(op.responses ?? {}).flatMap((response) => Object.values(response.content ?? {}).map((media) => media.schema)))
  t.ok(responseSchemas.length > 100, `${responseSchemas.length} response schemas`)
  t.equal(responseSchemas.filter((schema) => closes(schema)).length, 0, 'responses are open')
  const webhookBodies = Object.values((document as unknown as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }> }).webhooks)
    .flatMap((item) => Object.values(item.post.requestBody.content).map((media) => media.schema))
  t.equal(webhookBodies.filter((schema) => closes(schema)).length, 0, 'webhook bodies are open')
  t.ok(closes(schemas.CreatePaymentRequest), 'a request body is closed (unknown members are 400)')
  t.ok(closes(schemas.CreateMerchantRequest))
})

t.test('the tests\' copy closes every object again', async (t) => {
  const strict = closed(document) as typeof document
  t.ok(closes(strict.components.schemas.Payment, strict.components.schemas), 'Payment is validated strictly by the service\'s tests')
  t.ok(closes(strict.components.schemas.Event, strict.components.schemas), 'and each event')
})
