import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { HttpClientException, type Config } from '@adyen/api-library'
import type ClientInterface from '@adyen/api-library/lib/src/httpClient/clientInterface'
import type { IRequest } from '@adyen/api-library/lib/src/typings/requestOptions'
import { currentCall } from '../call'

/** A request that failed at the socket: `code` is Node's (ECONNREFUSED, ENOTFOUND, ECONNRESET, ETIMEDOUT…). */
export class AdyenConnectionError extends Error {
  override name = 'AdyenConnectionError'
  constructor (message: string, readonly code: string | undefined) {
    super(message)
  }
}

export interface AdyenTransportOptions {
  /** Base URL every request goes to (up to the API version, e.g. https://checkout-test.adyen.com): the library's path is kept. */
  baseUrl: string
  /** Socket inactivity bound of a request (GATEWAY_TIMEOUT_MS): then ETIMEDOUT. */
  timeoutMs: number
}

/** The library's endpoint (https://checkout-test.adyen.com/v72/payments) on `baseUrl`: only the versioned path is kept. */
export function rebase (endpoint: string, baseUrl: string): URL {
  const url = new URL(endpoint)
  const versioned = /\/v\d+(?:\/.*)?$/.exec(url.pathname)?.[0] ?? url.pathname
  return new URL(`${baseUrl.replace(/\/+$/, '')}${versioned}${url.search}`)
}

/**
 * The HTTP client the Adyen library sends through (its ClientInterface), in place of its own, which only
 * speaks https, follows redirects and reduces every socket failure to a message: this one goes to the
 * configured base URL (http too: a local fake), keeps Node's error code (so a connection that was never
 * made can be told from one lost after sending), and turns Adyen's error answers into the library's
 * HttpClientException with the HTTP status and Adyen's error object. It never retries, and a call's signal
 * (inCall) aborts its request.
 */
export function adyenTransport (options: AdyenTransportOptions): ClientInterface {
  return {
    async request (endpoint: string, json: string | Buffer, config: Config, _isApiKeyRequired: boolean, requestOptions: IRequest.Options = {}): Promise<string> {
      const url = rebase(endpoint, options.baseUrl)
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'X-API-Key': config.apiKey ?? ''
      }
      if (requestOptions.idempotencyKey !== undefined) headers['Idempotency-Key'] = requestOptions.idempotencyKey
      const send = url.protocol === 'http:' ? httpRequest : httpsRequest
      // The call's signal (our time-out, shutdown) ends the request: none outlives our giving up on it.
      const signal = currentCall()?.signal
      return await new Promise<string>((resolve, reject) => {
        const req = send(url, { method: requestOptions.method ?? 'POST', headers, ...(signal === undefined ? {} : { signal }) })
        req.setTimeout(options.timeoutMs, () => {
          req.destroy(Object.assign(new Error(`no answer from Adyen within ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' }))
        })
        req.on('error', (error: NodeJS.ErrnoException) => { reject(new AdyenConnectionError(error.message, error.code)) })
        req.on('response', (res) => { collect(res).then(resolve, reject) })
        req.end(json)
      })
    }
  }
}

async function collect (res: IncomingMessage): Promise<string> {
  let body = ''
  try {
    for await (const chunk of res) body += String(chunk)
  } catch (error) {
    throw new AdyenConnectionError('the connection to Adyen was lost while reading the answer', (error as NodeJS.ErrnoException).code ?? 'ECONNRESET')
  }
  if (!res.complete) throw new AdyenConnectionError('the connection to Adyen was lost while reading the answer', 'ECONNRESET')
  const status = res.statusCode ?? 0
  if (status >= 200 && status < 300) return body
  let apiError: Record<string, unknown> | undefined
  try {
    const parsed: unknown = JSON.parse(body)
    if (typeof parsed === 'object' && parsed !== null) apiError = parsed as Record<string, unknown>
  } catch {}
  const errorCode = typeof apiError?.errorCode === 'string' ? apiError.errorCode : undefined
  const message = typeof apiError?.message === 'string' ? apiError.message : (res.statusMessage ?? '')
  throw new HttpClientException({
    message: `HTTP Exception: ${status}. ${message}`,
    statusCode: status,
    ...(errorCode === undefined ? {} : { errorCode }),
    ...(apiError === undefined ? {} : { apiError }),
    responseHeaders: res.headers,
    responseBody: body
  })
}
