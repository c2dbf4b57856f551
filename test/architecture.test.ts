import t from 'tap'
import { ESLint } from 'eslint'
import { join } from 'node:path'

// The dependency rule lives in eslint.config.mjs and runs in `npm test` (npm run lint). These cases
// prove it fails on imports that go the wrong way and accepts the ones the layering allows.
const root = join(__dirname, '..')
const eslint = new ESLint({ cwd: root })

async function ruleViolations (file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) })
  return result.messages
    .filter((m) => m.ruleId === 'import/no-restricted-paths' || m.ruleId === 'no-restricted-imports')
    .map((m) => m.message)
}

const wrong: Array<[string, string, string]> = [
  ['a service importing schemas/', 'src/services/probe.ts', "import { Product } from '../../schemas/products'\nexport const x = Product\n"],
  ['a service importing plugins/', 'src/services/probe.ts', "import { JSON_CONTENT_TYPE } from '../../plugins/http/envelope'\nexport const x = JSON_CONTENT_TYPE\n"],
  ['the store importing routes/', 'src/store/probe.ts', "import { renderSettled } from '../../routes/payments/responses'\nexport const x = renderSettled\n"],
  ['the core importing Fastify', 'src/domain/probe.ts', "import Fastify from 'fastify'\nexport const x = Fastify\n"],
  ['the core importing a Fastify plugin package', 'src/services/probe.ts', "import sensible from '@fastify/sensible'\nexport const x = sensible\n"],
  ['schemas importing a service', 'schemas/probe.ts', "import { productService } from '../src/services/products'\nexport const x = productService\n"],
  ['schemas importing plugins/', 'schemas/probe.ts', "import { areaOf } from '../plugins/http/framework-errors'\nexport const x = areaOf\n"],
  ['schemas importing Fastify', 'schemas/probe.ts', "import Fastify from 'fastify'\nexport const x = Fastify\n"],
  ['a plugin importing routes/', 'plugins/probe.ts', "import { renderSettled } from '../routes/payments/responses'\nexport const x = renderSettled\n"]
]

for (const [name, file, code] of wrong) {
  t.test(`the dependency rule refuses ${name}`, async (t) => {
    const violations = await ruleViolations(file, code)
    t.equal(violations.length, 1, violations.join('; ') || 'no violation reported')
  })
}

const allowed: Array<[string, string, string]> = [
  ['the composition root importing plugins and routes', 'src/app.ts', "import a from '../plugins/services'\nimport b from '../routes/payments'\nexport const x = [a, b]\n"],
  ['schemas importing src/domain and TypeBox', 'schemas/probe.ts', "import { Type } from '@sinclair/typebox'\nimport { MAX_PAYMENT_AMOUNT } from '../src/domain/payments'\nexport const x = [Type, MAX_PAYMENT_AMOUNT]\n"],
  ['routes importing plugins, schemas and src', 'routes/payments/probe.ts', "import { problemErrorHandler } from '../../plugins/http/problem'\nimport { Payment } from '../../schemas/payments'\nimport { paymentService } from '../../src/services/payments'\nexport const x = [problemErrorHandler, Payment, paymentService]\n"],
  ['a plugin importing src and schemas', 'plugins/probe.ts', "import { productService } from '../src/services/products'\nimport { componentSchemas } from '../schemas'\nexport const x = [productService, componentSchemas]\n"]
]

for (const [name, file, code] of allowed) {
  t.test(`the dependency rule allows ${name}`, async (t) => {
    t.same(await ruleViolations(file, code), [])
  })
}
