import t from 'tap'
import { ESLint } from 'eslint'
import { join, relative } from 'node:path'
import { readdirSync, readFileSync } from 'node:fs'
import ts from 'typescript'

// The dependency rule lives in eslint.config.mjs and runs in `npm test` (npm run lint). These cases
// prove it fails on imports that go the wrong way and accepts the ones the layering allows.
const root = join(__dirname, '..')
const eslint = new ESLint({ cwd: root })

async function ruleViolations (file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) })
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'import/no-restricted-paths' || m.ruleId === 'no-restricted-imports')
    .map((m) => m.message)
}

const wrong: Array<[string, string, string]> = [
  ['a service importing schemas/', 'src/services/probe.ts', "import { Product } from '../../schemas/products'\nexport const x = Product\n"],
  ['the delivery code importing the edge\'s renderer', 'src/webhooks/probe.ts', "import { renderEventData } from '../../schemas/events'\nexport const x = renderEventData\n"],
  ['a service importing plugins/', 'src/services/probe.ts', "import { JSON_CONTENT_TYPE } from '../../plugins/http/errors/envelope'\nexport const x = JSON_CONTENT_TYPE\n"],
  ['the store importing routes/', 'src/store/probe.ts', "import paymentRoutes from '../../routes/payments'\nexport const x = paymentRoutes\n"],
  ['the core importing Fastify', 'src/domain/probe.ts', "import Fastify from 'fastify'\nexport const x = Fastify\n"],
  ['the core importing a Fastify plugin package', 'src/services/probe.ts', "import sensible from '@fastify/sensible'\nexport const x = sensible\n"],
  ['schemas importing a service', 'schemas/probe.ts', "import { productService } from '../src/services/products'\nexport const x = productService\n"],
  ['schemas importing plugins/', 'schemas/probe.ts', "import { areaOf } from '../plugins/http/errors/framework-errors'\nexport const x = areaOf\n"],
  ['schemas importing Fastify', 'schemas/probe.ts', "import Fastify from 'fastify'\nexport const x = Fastify\n"],
  ['a plugin importing routes/', 'plugins/probe.ts', "import paymentRoutes from '../routes/payments'\nexport const x = paymentRoutes\n"],
  ['a service importing routes/', 'src/services/probe.ts', "import paymentRoutes from '../../routes/payments'\nexport const x = paymentRoutes\n"],
  ['the core importing the composition root', 'src/services/probe.ts', "import { buildApp } from '../../app/app'\nexport const x = buildApp\n"],
  ['a plugin importing the composition root', 'plugins/probe.ts', "import { buildApp } from '../app/app'\nexport const x = buildApp\n"],
  ['a route importing the composition root', 'routes/payments/probe.ts', "import { buildApp } from '../../app/app'\nexport const x = buildApp\n"],
  ['a service test importing routes/', 'test/services/probe.test.ts', "import paymentRoutes from '../../routes/payments'\nexport const x = paymentRoutes\n"]
]

for (const [name, file, code] of wrong) {
  t.test(`the dependency rule refuses ${name}`, async (t) => {
    const violations = await ruleViolations(file, code)
    t.equal(violations.length, 1, violations.join('; ') || 'no violation reported')
  })
}

const allowed: Array<[string, string, string]> = [
  ['the composition root importing the core, plugins and routes', 'app/app.ts', "import a from '../plugins/services'\nimport b from '../routes/payments'\nimport { loadConfig } from '../src/load-config'\nexport const x = [a, b, loadConfig]\n"],
  ['schemas importing src/domain and TypeBox', 'schemas/probe.ts', "import { Type } from '@sinclair/typebox'\nimport { MAX_PAYMENT_AMOUNT } from '../src/domain/payments'\nexport const x = [Type, MAX_PAYMENT_AMOUNT]\n"],
  ['routes importing plugins, schemas and src', 'routes/payments/probe.ts', "import { problemErrorHandler } from '../../plugins/http/errors/problem'\nimport { Payment } from '../../schemas/payments'\nimport { paymentService } from '../../src/services/payments'\nexport const x = [problemErrorHandler, Payment, paymentService]\n"],
  ['a plugin importing src and schemas', 'plugins/probe.ts', "import { productService } from '../src/services/products'\nimport { componentSchemas } from '../schemas'\nexport const x = [productService, componentSchemas]\n"],
  ['a service test importing the service, plugins and schemas', 'test/services/probe.test.ts', "import { paymentService } from '../../src/services/payments'\nimport { paymentResponse } from '../../plugins/stored-responses'\nimport { renderEventData } from '../../schemas/events'\nexport const x = [paymentService, paymentResponse, renderEventData]\n"],
  ['a service test importing the domain\'s event factory', 'test/services/probe.test.ts', "import { eventFactory } from '../../src/domain/event-factory'\nexport const x = eventFactory\n"],
  ['the plugin that wires webhooks importing the edge\'s renderer', 'plugins/probe.ts', "import { renderEventData } from '../schemas/events'\nexport const x = renderEventData\n"]
]

for (const [name, file, code] of allowed) {
  t.test(`the dependency rule allows ${name}`, async (t) => {
    t.same(await ruleViolations(file, code), [])
  })
}

// The core speaks no HTTP: domain errors and services carry facts (kind, code, retryAfterSeconds,
// allowed methods, ...) and plugins/http/errors/classify-error.ts alone turns them into statuses and headers.
// Checked on the syntax tree, so comments and prose in messages do not count; an identifier
// `statusCode` or `headers`, or a header name used as a string or as a key, does.
const HEADER_NAMES = [
  'retry-after', 'www-authenticate', 'accept-patch', 'content-type', 'content-length', 'cache-control', 'if-match',
  'if-none-match', 'idempotency-key', 'idempotent-replayed', 'x-request-id', 'last-modified', 'accept-post',
  'allow', 'location', 'etag', 'vary', 'authorization', 'accept', 'link'
]
/** One-word header names are ordinary words too (`'allow'` is an access decision): they count only as keys. */
const KEY_ONLY = new Set(HEADER_NAMES.filter((name) => !name.includes('-')))
const HTTP_IDENTIFIERS = new Set(['statusCode', 'headers'])

function httpLeaks (fileName: string, code: string): string[] {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.ES2022, true)
  const leaks: string[] = []
  const where = (node: ts.Node): string => `${fileName}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
  const isKey = (node: ts.Node): boolean => {
    const parent = node.parent
    return (ts.isPropertyAssignment(parent) && parent.name === node) ||
      (ts.isElementAccessExpression(parent) && parent.argumentExpression === node) ||
      (ts.isPropertyAccessExpression(parent) && parent.name === node) ||
      ((ts.isPropertyDeclaration(parent) || ts.isPropertySignature(parent) || ts.isParameter(parent)) && parent.name === node)
  }
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      if (HTTP_IDENTIFIERS.has(node.text)) leaks.push(`${where(node)} ${node.text}`)
      else if (KEY_ONLY.has(node.text.toLowerCase()) && isKey(node)) leaks.push(`${where(node)} ${node.text} (a header name as a key)`)
    } else if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const text = node.text.toLowerCase()
      if (HEADER_NAMES.includes(text) && (!KEY_ONLY.has(text) || isKey(node))) leaks.push(`${where(node)} '${node.text}'`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return leaks
}

function tsFiles (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? tsFiles(path) : entry.name.endsWith('.ts') ? [path] : []
  })
}

t.test('src/domain and src/services hold no status code and no HTTP header name', async (t) => {
  const files = ['src/domain', 'src/services'].flatMap((dir) => tsFiles(join(root, dir)))
  t.ok(files.length >= 10, `${files.length} files checked`)
  const leaks = files.flatMap((file) => httpLeaks(relative(root, file), readFileSync(file, 'utf8')))
  t.same(leaks, [], leaks.join('\n'))
})

t.test('the HTTP check finds what the domain errors used to carry, and not the words of the domain', async (t) => {
  const old = `export class RateLimitedError extends DomainError {
  readonly statusCode = 429
  constructor (seconds: number) { super('x'); this.headers['retry-after'] = String(seconds) }
}
export class MethodNotAllowedError extends DomainError {
  constructor (allowed: string[]) { super('x'); this.headers.allow = allowed.join(', ') }
}
export const created = { status: 201, location: '/api/payments/1' }
setHeader('WWW-Authenticate', 'Bearer')
`
  t.same(httpLeaks('probe.ts', old).map((leak) => leak.replace(/^probe\.ts:\d+ /, '')), [
    'statusCode', 'headers', "'retry-after'", 'headers', 'allow (a header name as a key)', 'location (a header name as a key)', "'WWW-Authenticate'"
  ])
  const domain = `// a statusCode in a comment, 'retry-after' too
export type AccessDecision = 'allow' | 'forbidden'
export function decide (): AccessDecision { return 'allow' }
export const message = 'Retry with the same Idempotency-Key after Retry-After seconds.'
export class X { constructor (readonly retryAfterSeconds: number, readonly allowed: string[]) {} }
`
  t.same(httpLeaks('probe.ts', domain), [])
})
