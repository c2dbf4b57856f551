import t from 'tap'
import { HttpClientException } from '@adyen/api-library'
import { adyenGatewayError, validationAnswer } from '../../../src/gateway/adyen/errors'
import { AdyenConnectionError } from '../../../src/gateway/adyen/transport'
import { GatewayError } from '../../../src/gateway/types'

const answer = (statusCode: number, errorCode?: string) => new HttpClientException({ message: 'x', statusCode, ...(errorCode === undefined ? {} : { errorCode }) })

t.test('what each failure means for the money', async (t) => {
  const kept = new GatewayError('timeout', 'x')
  t.equal(adyenGatewayError(kept), kept)
  t.match(adyenGatewayError(new AdyenConnectionError('x', 'ECONNREFUSED')), { kind: 'not_processed', code: 'connection_refused' })
  t.match(adyenGatewayError(new AdyenConnectionError('x', 'CERT_HAS_EXPIRED')), { kind: 'not_processed', code: 'tls_failed' })
  t.match(adyenGatewayError(new AdyenConnectionError('x', 'ETIMEDOUT')), { kind: 'timeout', code: 'timeout' })
  t.match(adyenGatewayError(new AdyenConnectionError('x', 'ECONNRESET')), { kind: 'unavailable', code: 'connection_lost' })
  t.match(adyenGatewayError(new AdyenConnectionError('x', undefined)), { kind: 'unavailable', code: 'connection_lost' })
  t.match(adyenGatewayError(answer(401)), { kind: 'not_processed', code: 'authentication_failed' })
  t.match(adyenGatewayError(answer(403, '901')), { kind: 'not_processed', code: 'permission_denied' })
  t.match(adyenGatewayError(answer(429)), { kind: 'not_processed', code: 'rate_limited' })
  t.match(adyenGatewayError(answer(422, '704')), { kind: 'unavailable', code: 'request_in_progress' })
  t.match(adyenGatewayError(answer(503)), { kind: 'unavailable', code: 'server_error' })
  t.match(adyenGatewayError(answer(404)), { kind: 'unavailable', code: 'invalid_request' })
  t.match(adyenGatewayError(new Error('?')), { kind: 'unavailable', code: 'client_error' })
})

t.test('validation answers (400, 422 but 704) are outcomes for the callers', async (t) => {
  t.same(validationAnswer(answer(422, '803')), { status: 422, errorCode: '803' })
  t.same(validationAnswer(answer(400)), { status: 400, errorCode: 'invalid_request' })
  t.equal(validationAnswer(answer(422, '704')), undefined)
  t.equal(validationAnswer(answer(500)), undefined)
  t.equal(validationAnswer(new Error('x')), undefined)
})
