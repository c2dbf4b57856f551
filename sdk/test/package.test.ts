import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cp, lstat, mkdir, mkdtemp, readdir, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { readmeTsBlocks, readmeWalk } from './readme.js'
import { ADMIN_API_KEY, startService, type Service } from './service.js'

/*
 * Issue 42, items 2 and 7: the package as a registry would serve it (`npm pack`, which builds it through `prepare`),
 * and from its folder (`npm install /path/to/sdk`), each installed into a fresh application compiled with `strict` and
 * `exactOptionalPropertyTypes`, then run against the live service.
 */

const run = promisify(execFile)
/** sdk/dist/test/ → sdk/ */
const SDK = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TSC = join(SDK, 'node_modules', 'typescript', 'bin', 'tsc')

let service: Service
let work: string
before(async () => {
  service = await startService()
  work = await mkdtemp(join(tmpdir(), 'sdk-package-'))
})
after(async () => {
  await service?.stop()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

const consumer = `import { ApiError, createClient, signTestWebhook, verifyWebhook, type Event, type Payment, type WebhookEndpointWithSecret } from '@product-payment-service/sdk'

export async function main (baseUrl: string, adminKey: string, email: string): Promise<{ status: Payment['status'], replayed: boolean, declined: string | undefined }> {
  const admin = createClient({ baseUrl, apiKey: adminKey, apiVersion: '2026-11-25' })
  const merchant = await admin.merchants.create({ name: 'Strict App', email })
  const { secret } = await admin.apiKeys.create(merchant.id, { name: 'strict' })
  const client = createClient({ baseUrl, apiKey: secret })
  // TS2375 under exactOptionalPropertyTypes when the built .d.ts inlines the types with "| undefined" added.
  const payment: Payment = await client.payments.create({ amount: 10, currency: 'USD' }, { idempotencyKey: 'strict-1' })
  const again = await client.payments.create({ amount: 10, currency: 'USD' }, { idempotencyKey: 'strict-1' })
  const endpoint: WebhookEndpointWithSecret = await client.webhookEndpoints.create(merchant.id, { url: 'https://hooks.example.com/strict' })
  const events: Event[] = []
  for await (const event of client.events.list({ limit: 1 })) { events.push(event); break }
  // @ts-expect-error a version that is not in the document does not compile
  createClient({ baseUrl, apiKey: secret, apiVersion: '2026-13-01' })
  let declined: string | undefined
  try {
    await client.payments.create({ amount: 2500, currency: 'USD' })
  } catch (error) {
    if (error instanceof ApiError && error.problem?.type === 'urn:problem-type:payment-declined') declined = error.problem.declineCode
  }
  const body = JSON.stringify(events[0])
  const verified = verifyWebhook(body, signTestWebhook(body, endpoint.secret), endpoint.secret)
  if (verified.apiVersion !== '2026-11-25' || verified.id !== events[0]?.id) throw new Error('not narrowed to the delivery version')
  return { status: payment.status, replayed: again.lastResponse.idempotentReplayed, declined }
}
`

/** A fresh application compiled with `strict`, `exactOptionalPropertyTypes` and `noUncheckedIndexedAccess`. */
async function strictApp (name: string): Promise<string> {
  const app = join(work, name)
  await mkdir(join(app, 'src'), { recursive: true })
  await writeFile(join(app, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }))
  await writeFile(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023', 'DOM'],
      types: ['node'],
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
      outDir: 'dist'
    },
    include: ['src']
  }))
  await writeFile(join(app, 'src', 'main.ts'), consumer)
  // Every ts block of the README compiles as it is (the walk is run too, in the tarball's case).
  const blocks = await readmeTsBlocks()
  const walk = await readmeWalk()
  assert.ok(blocks.includes(walk) && blocks.length >= 2)
  for (const [index, block] of blocks.entries()) await writeFile(join(app, 'src', block === walk ? 'walk.ts' : `readme-${index}.ts`), block)
  return app
}

/** Installs `spec` (a tarball or a folder) with Node's types into `app`, from the npm cache (what `npm ci` filled). */
async function install (app: string, spec: string): Promise<void> {
  // A Node application has Node's types (standardwebhooks' declarations name Buffer): the SDK's own version of them.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', spec, '@types/node@20.19.25'], { cwd: app })
}

/** tsc over the application: '' when it compiles, else tsc's report. */
async function compile (app: string): Promise<string> {
  return await run(process.execPath, [TSC, '-p', app]).then(() => '', (error: { stdout?: string }) => error.stdout ?? String(error))
}

/** Runs the application's main against the live service, as a merchant of its own. */
async function runMain (app: string): Promise<unknown> {
  const { main } = await import(pathToFileURL(join(app, 'dist', 'main.js')).href) as { main: (baseUrl: string, key: string, email: string) => Promise<unknown> }
  return await main(service.baseUrl, ADMIN_API_KEY, `${basename(app)}@example.com`)
}

test('npm pack → install into a fresh strict project → compiles under exactOptionalPropertyTypes and runs, the README\'s walk too', async () => {
  const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: SDK, maxBuffer: 16 * 1024 * 1024 })
  const [manifest] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string, files: Array<{ path: string }> }>
  assert.ok(manifest)
  const files = manifest.files.map((file) => file.path)
  assert.ok(files.includes('dist/src/index.js') && files.includes('dist/src/index.d.ts'), 'built by prepare')
  assert.deepEqual(files.filter((file) => file.startsWith('test/') || file.startsWith('dist/test/') || file.startsWith('src/') || file.endsWith('.map')), [],
    'no tests, no TypeScript sources (the 1.1 MB generated schema ships as its .d.ts only), no source maps')

  const app = await strictApp('strict-app')
  await install(app, join(work, manifest.filename))
  assert.ok((await readdir(join(app, 'node_modules', '@product-payment-service', 'sdk', 'dist', 'src'))).includes('client.js'))
  assert.equal(await compile(app), '', 'the strict application compiles against the built .d.ts')
  assert.deepEqual(await runMain(app), { status: 'succeeded', replayed: true, declined: 'card_declined' })

  const { wholeApi } = await import(pathToFileURL(join(app, 'dist', 'walk.js')).href) as { wholeApi: (baseUrl: string, key: string) => Promise<Record<string, unknown>> }
  const walked = await wholeApi(service.baseUrl, ADMIN_API_KEY)
  const { paid, replayed, refund, captured, canceled, checkout, settled, disputes, disputeNotFound, declineCode, verified } = walked
  assert.deepEqual({ paid, replayed, refund, captured, canceled, checkout, settled, disputes, disputeNotFound, declineCode, verified }, {
    paid: 'succeeded',
    replayed: true,
    refund: 5,
    captured: 30,
    canceled: 'canceled',
    checkout: 'requires_action',
    settled: 'succeeded',
    disputes: 0,
    disputeNotFound: 404,
    declineCode: 'card_declined',
    verified: true
  }, 'the README\'s walk, copied as it is, compiles and runs')
})

/*
 * Item 7, from the folder: `npm install /path/to/repo/sdk` as the README's install steps say, into a fresh strict
 * project. The folder installed is a copy of the package as a fresh checkout has it (its package.json, lock file,
 * tsconfigs, README and src/: no dist/, no node_modules/), not this sdk/ itself, which is built already (installing it
 * would prove nothing about "before building") and whose dist/ the other test files are running from.
 *
 * npm links a folder dependency (a symlink: `install-links` is false by default) and runs the folder's `prepare` there,
 * but it never installs the folder's own devDependencies. In a fresh checkout, without sdk/node_modules, `prepare`
 * (tsc) therefore fails with `sh: 1: tsc: not found`, with `--install-links` as well (npm 11 tried): the folder needs
 * `npm ci` first, which installs TypeScript and builds the package through the same `prepare`. That is the README's
 * first install step, and what this test does, offline-friendly: `npm ci --prefer-offline` takes the packages from
 * the npm cache that this package's own `npm ci` filled, as the tarball case's install does.
 */
test('npm install <folder> (a fresh checkout\'s sdk/ after its npm ci) → a fresh strict project compiles and runs', async () => {
  const checkout = join(work, 'checkout', 'sdk')
  await mkdir(checkout, { recursive: true })
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md']) await cp(join(SDK, file), join(checkout, file))
  await cp(join(SDK, 'src'), join(checkout, 'src'), { recursive: true })
  await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: checkout, maxBuffer: 16 * 1024 * 1024 })
  assert.ok((await readdir(join(checkout, 'dist', 'src'))).includes('client.js'), 'npm ci built the package (prepare)')

  const app = await strictApp('strict-app-from-path')
  await install(app, checkout)
  const installed = join(app, 'node_modules', '@product-payment-service', 'sdk')
  assert.ok((await lstat(installed)).isSymbolicLink(), 'npm links a folder dependency')
  assert.equal(await realpath(installed), await realpath(checkout))
  assert.equal(await compile(app), '', 'the strict application compiles against the linked folder\'s .d.ts')
  assert.deepEqual(await runMain(app), { status: 'succeeded', replayed: true, declined: 'card_declined' })
})
