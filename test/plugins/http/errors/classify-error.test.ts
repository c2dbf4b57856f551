import t from 'tap'
import { bearerChallenge, classifyError, headersOf, statusOf } from '../../../../plugins/http/errors/classify-error'
import {
  AUTH_REALM, ConflictError, DomainError, ForbiddenError, GatewayUnavailableError, IdempotencyKeyInUseError, IdempotencyKeyReusedError,
  MethodNotAllowedError, NotFoundError, PaymentDeclinedError, PreconditionFailedError, RateLimitedError, StoreUnavailableError,
  UnauthenticatedError, UnsupportedMediaTypeError, ValidationError
} from '../../../../src/domain/errors'
import { PaymentFailedError, PaymentNotCancelableError, PaymentNotRefundableError, RefundExceedsRemainingError } from '../../../../src/domain/payments'
import { RefundFailedError } from '../../../../src/domain/refunds'
import { EmailTakenError } from '../../../../src/domain/merchants'
import { UnknownCursorError } from '../../../../src/domain/pagination'

const paymentId = '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f'
const at = '2026-01-01T00:00:00.000Z'
const refund = { id: '7a1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f', paymentId, amountMinor: 500, currency: 'EUR', status: 'failed' as const, reason: null, failureCode: 'refund_declined', metadata: {}, createdAt: at, updatedAt: at }

// Every domain error the service throws, with the status and headers it answered with when the
// errors still carried them (the behaviour this table must keep).
const cases: Array<[DomainError, number, Record<string, string>]> = [
  [new ValidationError({ amount: ['bad'] }), 400, {}],
  [new UnknownCursorError('startingAfter', 'x'), 400, {}],
  [new UnauthenticatedError('no key', false), 401, { 'www-authenticate': `Bearer realm="${AUTH_REALM}"` }],
  [new UnauthenticatedError('bad key', true), 401, {
    'www-authenticate': `Bearer realm="${AUTH_REALM}", error="invalid_token", error_description="The API key is unknown, revoked or expired."`
  }],
  [new PaymentDeclinedError(paymentId, 'insufficient_funds'), 402, {}],
  [new PaymentFailedError(paymentId, 'pending_expired'), 402, {}],
  [new RefundFailedError(refund), 402, {}],
  [new ForbiddenError('admin only'), 403, {}],
  [new NotFoundError('no such thing'), 404, {}],
  [new MethodNotAllowedError(['GET', 'PUT', 'DELETE']), 405, { allow: 'GET, PUT, DELETE' }],
  [new ConflictError('conflict'), 409, {}],
  [new EmailTakenError(), 409, {}],
  [new IdempotencyKeyReusedError('reused'), 409, {}],
  [new IdempotencyKeyInUseError('in use', 1), 409, { 'retry-after': '1' }],
  [new PaymentNotRefundableError(paymentId, 'pending'), 409, {}],
  [new PaymentNotCancelableError(paymentId, 'succeeded'), 409, {}],
  [new RefundExceedsRemainingError(paymentId, 2000, 1000, 'EUR'), 409, {}],
  [new PreconditionFailedError('stale'), 412, {}],
  [new UnsupportedMediaTypeError('send JSON'), 415, {}],
  [new UnsupportedMediaTypeError('send a merge patch', 'application/merge-patch+json'), 415, { 'accept-patch': 'application/merge-patch+json' }],
  [new RateLimitedError(7), 429, { 'retry-after': '7' }],
  [new GatewayUnavailableError('down', paymentId, 5), 503, { 'retry-after': '5' }],
  [new GatewayUnavailableError('down', undefined, 5), 503, { 'retry-after': '5' }],
  [new StoreUnavailableError('away', 'unreachable', 2), 503, { 'retry-after': '2' }]
]

t.test('one table maps every kind of domain error to its HTTP status and headers', async (t) => {
  for (const [error, status, headers] of cases) {
    t.equal(statusOf(error), status, `${error.code} (${error.kind}) → ${status}`)
    t.same(headersOf(error), headers, `${error.code} headers`)
    const classified = classifyError(error)
    t.equal(classified.statusCode, status)
    t.same(classified.headers, headers)
    t.equal(classified.code, error.code)
    t.equal(classified.domain, error)
    t.equal(classified.internal, false)
  }
  t.same(Object.keys(headersOf(new MethodNotAllowedError(['GET']))), ['allow'], 'a fresh object per error (no header leaks between kinds)')
})

t.test('the domain errors themselves carry facts, not HTTP', async (t) => {
  for (const [error] of cases) {
    t.notOk('statusCode' in error, `${error.code} has no statusCode`)
    t.notOk('headers' in error, `${error.code} has no headers`)
  }
  t.same(new MethodNotAllowedError(['GET', 'HEAD']).allowed, ['GET', 'HEAD'])
  t.equal(new UnsupportedMediaTypeError('x', 'application/merge-patch+json').acceptPatch, 'application/merge-patch+json')
  t.equal(new UnauthenticatedError('x', true).tokenSent, true)
  t.equal(new RateLimitedError(3).retryAfterSeconds, 3)
  t.equal(new NotFoundError('x').retryAfterSeconds, undefined)
})

t.test('the bearer challenge says invalid_token only when a credential was sent', async (t) => {
  t.equal(bearerChallenge(false), `Bearer realm="${AUTH_REALM}"`)
  t.match(bearerChallenge(true), /^Bearer realm="[^"]+", error="invalid_token"/)
})
