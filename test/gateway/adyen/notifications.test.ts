import t from 'tap'
import { hmacValidator as HmacValidator } from '@adyen/api-library'
import {
  AdyenNotificationFormatError, effectOf, hasValidSignature, notificationIdOf, notificationItemsOf, reasonCodeOf
} from '../../../src/gateway/adyen/notifications'
import { HMAC_KEY, notificationBody, notificationItem } from '../../helpers/adyen-notifications'

t.test('items are read from the batch; what is not a batch is refused', async (t) => {
  const item = notificationItem({ eventCode: 'CAPTURE', merchantReference: 'ref', originalReference: 'PAY1', pspReference: 'CAP1' })
  t.same(notificationItemsOf(notificationBody(item)), [item])
  t.equal(notificationIdOf(item), 'CAP1:CAPTURE:true')
  for (const body of [null, {}, { notificationItems: {} }, { notificationItems: [{}] }, { notificationItems: [{ NotificationRequestItem: { ...item, amount: { value: 1.5, currency: 'EUR' } } }] },
    { notificationItems: [{ NotificationRequestItem: { ...item, originalReference: 7 } }] }, { notificationItems: [{ NotificationRequestItem: { ...item, success: true } }] }]) {
    t.throws(() => notificationItemsOf(body), AdyenNotificationFormatError)
  }
})

t.test('signatures: the library\'s calculation verifies; another key, a changed field, no signature or a key that is not hex do not', async (t) => {
  const item = notificationItem({ eventCode: 'REFUND', merchantReference: 'r1', originalReference: 'PAY1' })
  t.ok(hasValidSignature(item, HMAC_KEY))
  t.equal(item.additionalData?.hmacSignature, new HmacValidator().calculateHmac(`${item.pspReference}:PAY1:${item.merchantAccountCode}:r1:1000:USD:REFUND:true`, HMAC_KEY), 'Adyen\'s signed fields')
  t.notOk(hasValidSignature(item, 'AB'.repeat(32)))
  t.notOk(hasValidSignature({ ...item, amount: { value: 1001, currency: 'USD' } }, HMAC_KEY))
  t.notOk(hasValidSignature({ ...item, additionalData: {} }, HMAC_KEY))
  t.notOk(hasValidSignature(item, 'not-hex'))
})

t.test('effects by event code', async (t) => {
  const base = { merchantReference: 'ref', originalReference: 'PAY1', reason: 'Insufficient balance' }
  const { originalReference: _original, ...unreferenced } = base
  t.match(effectOf(notificationItem({ ...unreferenced, eventCode: 'AUTHORISATION', success: 'false' })), { kind: 'authorisation', paymentId: 'ref', success: false, amountMinor: 1000, currency: 'USD' })
  t.match(effectOf(notificationItem({ ...base, eventCode: 'CAPTURE_FAILED' })), { kind: 'capture', success: false, paymentReference: 'PAY1' }, 'CAPTURE_FAILED is a failure whatever its success')
  t.match(effectOf(notificationItem({ ...base, eventCode: 'REFUND_FAILED' })), { kind: 'refund', success: false, reference: 'ref' })
  t.match(effectOf(notificationItem({ ...base, eventCode: 'REFUND' })), { kind: 'refund', success: true })
  t.match(effectOf(notificationItem({ ...base, eventCode: 'CANCELLATION' })), { kind: 'cancellation', orRefund: false })
  t.match(effectOf(notificationItem({ ...base, eventCode: 'TECHNICAL_CANCEL', originalReference: '' })), { kind: 'cancellation', orRefund: false, paymentReference: undefined, reference: 'ref' },
    'issue 40: a cancel by merchant reference, found by our reference')
  t.match(effectOf(notificationItem({ ...base, eventCode: 'CANCEL_OR_REFUND', originalReference: '' })), { kind: 'cancellation', orRefund: true, paymentReference: undefined })
  t.same(effectOf(notificationItem({ ...base, eventCode: 'REPORT_AVAILABLE' })), { kind: 'none' }, 'other codes change nothing')
  t.match(effectOf(notificationItem({ ...base, eventCode: 'CHARGEBACK' })), { kind: 'dispute', paymentReference: 'PAY1', report: { status: 'needs_response', stage: 2, fundsStage: 1 } }, 'issue 40: a dispute')
  t.same(effectOf(notificationItem({ ...base, eventCode: 'CHARGEBACK', success: 'false' })), { kind: 'none' }, 'a dispute event that did not happen')
})

t.test('reason texts become codes', async (t) => {
  t.equal(reasonCodeOf('CVC Declined', 'refused'), 'cvc_declined')
  t.equal(reasonCodeOf(' Not enough balance! ', 'refused'), 'not_enough_balance')
  t.equal(reasonCodeOf(undefined, 'refused'), 'refused')
  t.equal(reasonCodeOf('***', 'capture_failed'), 'capture_failed')
})
