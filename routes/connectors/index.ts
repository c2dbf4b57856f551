import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { utf8JsonParser } from '../../plugins/http/json-body'
import { webhookOperation } from './webhook-operation'

/**
 * /connectors: the PSPs' own webhooks for connector accounts (problem documents), one route per connector module that
 * receives events, served and documented from its description (src/gateway/<psp>/webhook.ts). No API key: the PSP
 * signs each delivery, and the signature (over the raw body, or the items) is the authentication.
 */
const connectorEvents: FastifyPluginAsyncTypebox = async (app) => {
  // A PSP may sign the exact bytes it sent: they are kept beside the parsed body (which the schema and body guard still check).
  const rawBodies = new WeakMap<FastifyRequest, Buffer>()
  const parseJson = utf8JsonParser(app)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    rawBodies.set(request, typeof body === 'string' ? Buffer.from(body) : body)
    parseJson(request, body, done)
  })

  for (const { type, inbound } of app.connectorRegistry.modules) {
    const receiver = app.connectorEvents.get(type)
    if (inbound === undefined || receiver === undefined) continue
    const { webhook } = inbound
    app.post(`/:connectorId/${webhook.path}`, { config: { auth: 'public', audit: false }, schema: webhookOperation(webhook) }, async (request, reply) => {
      await receiver.receive(request.params.connectorId, { rawBody: rawBodies.get(request) ?? Buffer.alloc(0), body: request.body, headers: request.headers })
      if (webhook.answer.mediaType === 'application/json') return webhook.answer.body
      return await reply.type(`${webhook.answer.mediaType}; charset=utf-8`).send(webhook.answer.body)
    })
  }
}

export default connectorEvents
