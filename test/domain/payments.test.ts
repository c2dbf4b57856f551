import t from 'tap'
import { heldCaptureOf, moneyHeldBy, HELD_CAPTURED, type PaymentAttempt } from '../../src/domain/payments'

const at = '2026-01-01T00:00:00.000Z'
const adyen = { connectorId: 'acct-adyen', connectorType: 'adyen' as const }
const attempt = (fields: Partial<PaymentAttempt> & Pick<PaymentAttempt, 'outcome'>): PaymentAttempt => ({ ...adyen, code: null, at, ...fields })

t.test('money held: one entry per charge, until its last release outcome is released', async (t) => {
  const heldAuthorization = attempt({ outcome: 'held', code: 'authorized', connectorReference: 'A' })
  const capturedThere = attempt({ outcome: 'held', code: HELD_CAPTURED, connectorReference: 'A', amountMinor: 500 })
  const otherCharge = attempt({ outcome: 'held', code: 'succeeded', connectorReference: 'B' })
  t.same(moneyHeldBy([heldAuthorization, capturedThere, otherCharge]), [heldAuthorization, otherCharge], 'the capture recorded later is the same money')
  t.same(moneyHeldBy([heldAuthorization, capturedThere, attempt({ outcome: 'released', code: 'release_received', connectorReference: 'A' })]), [])
  t.same(moneyHeldBy([
    heldAuthorization, attempt({ outcome: 'released', code: 'release_received', connectorReference: 'A' }),
    attempt({ outcome: 'release_refused', code: 'cancel_refused', connectorReference: 'A' })
  ]), [heldAuthorization], 'a refusal after the release holds the money again')
  t.same(moneyHeldBy([heldAuthorization, { ...capturedThere, connectorId: 'acct-other' }]).length, 2, 'the same reference at another account is another charge')
})

t.test('what a capture at the connector took of a held authorization: the last report about that charge', async (t) => {
  const held = { ...adyen, connectorReference: 'A' }
  t.equal(heldCaptureOf([attempt({ outcome: 'held', code: 'authorized', connectorReference: 'A' })], held), undefined, 'none reported')
  t.equal(heldCaptureOf([
    attempt({ outcome: 'held', code: HELD_CAPTURED, connectorReference: 'A', amountMinor: 500 }),
    attempt({ outcome: 'held', code: HELD_CAPTURED, connectorReference: 'A', amountMinor: 700 }),
    attempt({ outcome: 'held', code: HELD_CAPTURED, connectorReference: 'B', amountMinor: 900 })
  ], held), 700)
  t.equal(heldCaptureOf([attempt({ outcome: 'held', code: HELD_CAPTURED, connectorReference: 'A', amountMinor: 500 })], { ...held, connectorId: 'acct-other' }), undefined)
})
