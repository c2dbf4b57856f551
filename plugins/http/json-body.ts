import { isUtf8 } from 'node:buffer'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ValidationError } from '../../src/domain/errors'

type Done = (err: Error | null, body?: unknown) => void

/**
 * Fastify's JSON parser (same limits, same proto-poisoning rules, same errors) on the body's bytes,
 * refusing bytes that are not UTF-8 (RFC 8259 §8.1) with a 400 instead of decoding them to U+FFFD:
 * `caf\xe9` must not be stored as `caf�`. `onParsed` sees the text as sent (the payments area reads
 * the digits of its numbers there) and the parsed value, before anything else does (it may normalise it).
 */
export function utf8JsonParser (app: FastifyInstance, onParsed?: (request: FastifyRequest, text: string, value: unknown) => void) {
  const parseJson = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error')
  return function parse (request: FastifyRequest, body: string | Buffer, done: Done): void {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body
    if (!isUtf8(bytes)) {
      done(new ValidationError({ $: ['The request body is not valid UTF-8; JSON must be sent in UTF-8.'] }))
      return
    }
    const text = bytes.toString('utf8')
    parseJson(request, text, (err, value) => {
      if ((err === null || err === undefined) && onParsed !== undefined) onParsed(request, text, value)
      done(err ?? null, value)
    })
  }
}
