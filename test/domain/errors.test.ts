import t from 'tap'
import {
  ConflictError, GatewayUnavailableError, isRefusal, IdempotencyKeyInUseError, NotFoundError, PaymentDeclinedError, RateLimitedError,
  StoreUnavailableError, ValidationError
} from '../../src/domain/errors'

t.test('isRefusal: a domain error that is the final answer, not a passing unavailability', async (t) => {
  for (const refusal of [
    new ValidationError({ amount: ['bad'] }), new NotFoundError('x'), new ConflictError('x'),
    new PaymentDeclinedError('p', 'insufficient_funds'), new RateLimitedError(1), new IdempotencyKeyInUseError('x', 1)
  ]) t.ok(isRefusal(refusal), `${refusal.code} is a refusal`)
  t.notOk(isRefusal(new GatewayUnavailableError('down', undefined, 5)), 'the gateway may answer later')
  t.notOk(isRefusal(new StoreUnavailableError('away', 'busy', 1)), 'the database may answer later')
  t.notOk(isRefusal(new Error('bug')), 'a bug is not a domain answer')
  t.notOk(isRefusal(undefined))
})
