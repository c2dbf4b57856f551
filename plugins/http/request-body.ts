import fp from 'fastify-plugin'
import { rejectUnsafeBody } from './body-guard'
import { utf8JsonParser } from './json-body'
import { checkHook } from './checks'

/**
 * What a request body may be, in every area: JSON only (areas add their own media types), in UTF-8
 * (invalid bytes are a 400, not U+FFFD in the database), nested at most MAX_BODY_DEPTH levels and
 * free of text no store keeps (NUL, unpaired surrogates): a 400 in the area's shape (body-guard.ts).
 */
export default fp(async (app) => {
  app.removeContentTypeParser('text/plain')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, utf8JsonParser(app))
  app.addHook('preValidation', checkHook(rejectUnsafeBody))
}, { name: 'request-body', dependencies: ['errors'], fastify: '5.x' })
