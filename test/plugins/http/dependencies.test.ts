/**
 * The HTTP plugins keep their hook order through declared dependencies: each refuses to load before the
 * plugins whose hooks must run first, and buildApp registers every one of them.
 */
import t from 'tap'
import Fastify, { type FastifyPluginAsync } from 'fastify'
import { buildTestApp } from '../../helpers/app'
import errorsPlugin from '../../../plugins/http/errors'
import notFoundPlugin from '../../../plugins/http/errors/not-found'
import serverLimitsPlugin from '../../../plugins/http/server-limits'
import requestBodyPlugin from '../../../plugins/http/request-body'
import requestHygienePlugin from '../../../plugins/http/request-hygiene'
import allowedMethodsPlugin from '../../../plugins/http/allowed-methods'

const plugins: Array<[string, unknown, string[]]> = [
  ['errors', errorsPlugin, []],
  ['allowed-methods', allowedMethodsPlugin, []],
  ['server-limits', serverLimitsPlugin, ['config']],
  ['request-body', requestBodyPlugin, ['errors']],
  ['request-hygiene', requestHygienePlugin, ['errors', 'request-id', 'security']],
  ['not-found', notFoundPlugin, ['errors', 'allowed-methods', 'security']]
]

t.test('each HTTP plugin names the plugins it must follow, and refuses to load without them', async (t) => {
  for (const [name, plugin, dependencies] of plugins) {
    const meta = (plugin as unknown as Record<symbol, { name: string, dependencies?: string[] }>)[Symbol.for('plugin-meta')]
    t.equal(meta?.name, name)
    t.same(meta?.dependencies ?? [], dependencies, `${name} depends on ${dependencies.join(', ') || 'nothing'}`)
    if (dependencies.length === 0) continue
    const app = Fastify()
    await t.rejects(async () => { await app.register(plugin as FastifyPluginAsync) }, { code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED' }, `${name} alone does not load`)
    await app.close()
  }
})

t.test('buildApp registers every one of them', async (t) => {
  const app = await buildTestApp(t)
  for (const [name] of plugins) t.ok(app.hasPlugin(name), name)
})
