import type { FastifyHttpOptions, FastifyServerOptions } from 'fastify'
import type { Server } from 'node:http'
import { trustProxySetting, type Config } from '../../src/config'
import { requestIdFor } from '../request-id'
import { AccessLogController } from './access-log'
import { clientErrorHandler } from './errors/client-error'
import { frameworkErrorHandler, type AreaErrors } from './errors/framework-errors'
import { lazySchemaCompilers } from './lazy-schemas'
import { httpServerOptions, MAX_PARAM_LENGTH } from './server-limits'

export type { AreaErrors }

/**
 * Credentials never reach the logs, whatever logs a request's headers. Request bodies are never logged;
 * connector credentials (the one body member that is a secret) are redacted too, should one be.
 */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization', 'headers.authorization', 'request.headers.authorization', 'authorization',
  // The dashboard session: its cookie, its CSRF header, the key it is signed in with, the cookie it sets.
  'req.headers.cookie', 'headers.cookie', 'request.headers.cookie', 'req.headers["x-csrf-token"]', 'headers["x-csrf-token"]',
  'req.body.apiKey', 'body.apiKey', 'request.body.apiKey', 'res.headers["set-cookie"]',
  'req.body.credentials', 'body.credentials', 'request.body.credentials', 'credentials'
]

function withRedaction (logger: NonNullable<FastifyServerOptions['logger']>): NonNullable<FastifyServerOptions['logger']> {
  if (typeof logger !== 'object' || logger === null) return logger
  return { ...logger, redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' } }
}

/**
 * What only Fastify() itself takes: the logger and the access log, request ids, limits and
 * time-outs of the HTTP server, the answers to what Node's parser and the router refuse before any
 * hook runs (in the shape of the request's area), and the schema compilers. Everything else is a
 * plugin (app/app.ts).
 */
export function serverOptions (config: Config, areas: readonly AreaErrors[], logger?: FastifyServerOptions['logger']): FastifyHttpOptions<Server> {
  return {
    logger: withRedaction(logger ?? { level: config.LOG_LEVEL }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    logController: new AccessLogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: config.BODY_LIMIT,
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    // Never Node's socket inactivity time-out: it would cut long requests unanswered (closeIdleBeforeFirstRequest).
    connectionTimeout: 0,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    // Slow clients, oversized headers, unroutable URLs: answered in the area's shape, never in Fastify's own JSON.
    http: httpServerOptions(config),
    clientErrorHandler: clientErrorHandler(areas),
    frameworkErrors: frameworkErrorHandler(areas),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // allErrors: every failing field at once (bodies are bounded by BODY_LIMIT, strings and arrays by the schemas);
    // allowUnionTypes: amounts are `type: [number, string]` (a decimal string, schemas/amounts.ts).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true, allowUnionTypes: true } },
    // Schemas compiled on first use, not at start-up (lazy-schemas.ts).
    schemaController: { compilersFactory: lazySchemaCompilers() }
  }
}
