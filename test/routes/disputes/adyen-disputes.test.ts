import t, { type Test } from 'tap'
import { buildTestApp, merchantWithKey, type MerchantCredentials } from '../../helpers/app'
import { spyGateway, type SpyGateway } from '../../helpers/gateway'
import { adyenAccount, notificationBody, notificationItem } from '../../helpers/adyen-notifications'
import type { App } from '../../../app/app'
import type { ConnectorFactory } from '../../../src/gateway/connectors'
import type { AcceptDisputeRequest } from '../../../src/gateway/types'
import type { AdyenNotificationItem } from '../../../src/gateway/adyen/notifications'

const NO_KEY = { authorization: undefined }

interface Setup {
  gateway: SpyGateway
  app: App
  merchant: MerchantCredentials
  connectorId: string
  url: string
}

const pspOf = (paymentId: string): string => `PSP-${paymentId}`

/**
 * An app whose adyen account authorises (reference PSP-{paymentId}) and answers refunds `received`, as Adyen does;
 * with `acceptDispute` its connector can accept disputes.
 */
async function setup (t: Test, acceptDispute?: SpyGateway['acceptDispute']): Promise<Setup> {
  const gateway = spyGateway(
    async (request) => ({ outcome: request.captureMethod === 'manual' ? 'authorized' : 'succeeded', chargeId: pspOf(request.paymentId) }),
    (request) => ({ outcome: 'received', gatewayRefundId: `REF-${request.idempotencyKey}` }),
    () => ({ outcome: 'received' })
  )
  if (acceptDispute !== undefined) gateway.acceptDispute = acceptDispute
  const factory: ConnectorFactory = () => ({ gateway, verify: async () => {} })
  const app = await buildTestApp(t, {}, { connectorFactory: factory })
  const merchant = await merchantWithKey(app)
  const connectorId = await adyenAccount(app, merchant.merchantId)
  return { gateway, app, merchant, connectorId, url: `/connectors/${connectorId}/adyen-notifications` }
}

async function deliver (s: Setup, ...items: AdyenNotificationItem[]) {
  const res = await s.app.inject({ method: 'POST', url: s.url, headers: { ...NO_KEY, 'content-type': 'application/json' }, payload: notificationBody(...items) as object })
  t.equal(res.statusCode, 200, 'accepted')
  return res
}

async function succeeded (s: Setup): Promise<string> {
  const created = await s.app.inject({ method: 'POST', url: '/api/payments', headers: s.merchant.auth, payload: { amount: 10, currency: 'USD', paymentMethod: 'stored-1' } })
  t.equal(created.statusCode, 201)
  return created.json().id as string
}

/** A dispute notification of Adyen's (documented members: the dispute's pspReference, the payment's as originalReference). */
function disputeItem (paymentId: string, eventCode: string, extra: Record<string, string> = {}, dispute = 'DSP-1'): AdyenNotificationItem {
  return notificationItem({
    eventCode,
    pspReference: dispute,
    originalReference: pspOf(paymentId),
    merchantReference: paymentId,
    amount: { value: 1000, currency: 'USD' },
    additionalData: { chargebackReasonCode: '10.4', chargebackSchemeCode: 'visa', defensePeriodEndsAt: '2026-12-20T10:15:30+01:00', ...extra }
  })
}

async function state (s: Setup, paymentId: string) {
  const disputes = (await s.app.inject({ method: 'GET', url: `/api/disputes?paymentId=${paymentId}`, headers: s.merchant.auth })).json().data as Array<Record<string, unknown>>
  const payment = (await s.app.inject({ method: 'GET', url: `/api/payments/${paymentId}`, headers: s.merchant.auth })).json()
  return { disputes, payment }
}

t.test('each Adyen dispute event code, in the documented order: status, money withdrawn and reinstated, events', async (t) => {
  const s = await setup(t)
  const paymentId = await succeeded(s)
  const steps: Array<[string, Record<string, string>, string, boolean, number]> = [
    ['REQUEST_FOR_INFORMATION', { rfiReasonCode: '28', chargebackReasonCode: '' }, 'needs_response', false, 0],
    ['NOTIFICATION_OF_CHARGEBACK', {}, 'needs_response', false, 0],
    ['CHARGEBACK', { disputeStatus: 'Undefended' }, 'needs_response', true, 10],
    ['CHARGEBACK_REVERSED', { disputeStatus: 'Won' }, 'won', false, 0],
    ['SECOND_CHARGEBACK', { disputeStatus: 'Lost' }, 'lost', true, 10],
    ['PREARBITRATION_WON', {}, 'won', false, 0]
  ]
  for (const [eventCode, extra, status, fundsWithdrawn, amountDisputed] of steps) {
    await deliver(s, disputeItem(paymentId, eventCode, extra))
    const { disputes, payment } = await state(s, paymentId)
    t.equal(disputes.length, 1, `${eventCode}: one dispute`)
    if (eventCode === 'REQUEST_FOR_INFORMATION') t.equal(disputes[0]?.reason, '28', 'the request for information\'s reason code')
    t.match(disputes[0], { status, fundsWithdrawn, amount: 10, currency: 'USD', connectorReference: 'DSP-1', connector: { id: s.connectorId, type: 'adyen' } }, eventCode)
    t.equal(payment.amountDisputed, amountDisputed, `${eventCode}: amountDisputed`)
  }
  const { disputes } = await state(s, paymentId)
  t.match(disputes[0], { reason: '10.4', evidenceDueBy: '2026-12-20T09:15:30.000Z' }, 'the chargeback\'s reason code replaces the request for information\'s; the defense period in UTC')
  const types = (await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100 })).data.filter((e) => e.resourceType === 'dispute').map((e) => e.type).reverse()
  t.same(types, ['dispute.created', 'dispute.updated', 'dispute.closed', 'dispute.closed', 'dispute.closed'], 'the notification of chargeback changed nothing the request for information had not said')
})

t.test('a CHARGEBACK that cannot be defended is lost; an accepted one is accepted', async (t) => {
  const s = await setup(t)
  const first = await succeeded(s)
  const second = await succeeded(s)
  await deliver(s, disputeItem(first, 'CHARGEBACK', { defendable: 'false' }, 'DSP-A'), disputeItem(second, 'CHARGEBACK', { disputeStatus: 'Accepted' }, 'DSP-B'))
  t.match((await state(s, first)).disputes[0], { status: 'lost', fundsWithdrawn: true })
  t.match((await state(s, second)).disputes[0], { status: 'accepted', fundsWithdrawn: true })
})

t.test('accept: asked of the connector under the dispute\'s key, accepted for good (a chargeback after it changes only the money); a connector that cannot is 409', async (t) => {
  const without = await setup(t)
  const elsewhere = await succeeded(without)
  await deliver(without, disputeItem(elsewhere, 'NOTIFICATION_OF_CHARGEBACK'))
  const unsupported = await without.app.inject({ method: 'POST', url: `/api/disputes/${String((await state(without, elsewhere)).disputes[0]?.id)}/accept`, headers: without.merchant.auth })
  t.equal(unsupported.statusCode, 409)
  t.match(unsupported.json(), { type: 'urn:problem-type:dispute-not-acceptable', disputeStatus: 'needs_response', detail: /cannot accept a dispute/ })

  const asked: AcceptDisputeRequest[] = []
  const s = await setup(t, async (request) => { asked.push(request); return { outcome: 'accepted' } })
  const paymentId = await succeeded(s)
  await deliver(s, disputeItem(paymentId, 'NOTIFICATION_OF_CHARGEBACK'))
  const id = String((await state(s, paymentId)).disputes[0]?.id)
  const url = `/api/disputes/${id}/accept`
  const accepted = await s.app.inject({ method: 'POST', url, headers: s.merchant.auth })
  t.equal(accepted.statusCode, 200)
  t.match(accepted.json(), { id, status: 'accepted', fundsWithdrawn: false })
  t.same(asked, [{ disputeReference: 'DSP-1', idempotencyKey: `dispute-${id}:accept` }])
  // Adyen debits the chargeback after the acceptance: the money moves, the status stays.
  await deliver(s, disputeItem(paymentId, 'CHARGEBACK', { disputeStatus: 'Undefended' }))
  const after = await state(s, paymentId)
  t.match(after.disputes[0], { status: 'accepted', fundsWithdrawn: true })
  t.equal(after.payment.amountDisputed, 10)
  const types = (await s.app.db.events.list({ merchantId: s.merchant.merchantId, limit: 100 })).data.filter((e) => e.resourceType === 'dispute').map((e) => e.type).reverse()
  t.same(types, ['dispute.created', 'dispute.closed', 'dispute.updated'])
})

t.test('any order of arrival, and every notification twice, end in the state of the documented order', async (t) => {
  const s = await setup(t)
  const inOrder = await succeeded(s)
  const shuffled = await succeeded(s)
  const codes = ['NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK', 'PREARBITRATION_LOST']
  for (const code of codes) await deliver(s, disputeItem(inOrder, code, {}, 'DSP-ORDER'))
  const items = codes.map((code) => disputeItem(shuffled, code, {}, 'DSP-SHUFFLED'))
  for (const index of [4, 1, 3, 0, 2, 4, 1]) await deliver(s, items[index]!)
  await deliver(s, ...items)
  const expected = await state(s, inOrder)
  const actual = await state(s, shuffled)
  t.match(expected.disputes[0], { status: 'lost', fundsWithdrawn: true })
  const comparable = (d: Record<string, unknown>) => ({ ...d, id: undefined, paymentId: undefined, connectorReference: undefined, createdAt: undefined, updatedAt: undefined })
  t.same(comparable(actual.disputes[0]!), comparable(expected.disputes[0]!), 'the same dispute')
  t.equal(actual.payment.amountDisputed, 10)
  t.equal(expected.payment.amountDisputed, 10)
})

t.test('a refund racing a chargeback: never more out than captured, whichever wins', async (t) => {
  const s = await setup(t)
  for (let round = 0; round < 5; round++) {
    const paymentId = await succeeded(s)
    const chargeback = disputeItem(paymentId, 'CHARGEBACK', {}, `DSP-RACE-${round}`)
    const [refund, dispute] = await Promise.all([
      s.app.inject({ method: 'POST', url: `/api/payments/${paymentId}/refunds`, headers: s.merchant.auth, payload: {} }),
      s.app.inject({ method: 'POST', url: s.url, headers: { ...NO_KEY, 'content-type': 'application/json' }, payload: notificationBody(chargeback) as object })
    ])
    t.ok([202, 409].includes(refund.statusCode), `round ${round}: the refund was received or refused (${refund.statusCode})`)
    // A chargeback meeting a refund in flight waits for it (503 connector-event-not-matched: Adyen sends it again).
    t.ok([200, 503].includes(dispute.statusCode), `round ${round}: the chargeback was applied or is to be sent again (${dispute.statusCode})`)
    const stored = await s.app.db.payments.get(paymentId)
    const out = stored!.amountRefundedMinor + stored!.refundPendingMinor + (stored!.amountDisputedMinor ?? 0)
    t.ok(out <= stored!.amountCapturedMinor, `round ${round}: refunded + pending + disputed (${out}) ≤ captured`)
    if (refund.statusCode === 202) {
      await deliver(s, notificationItem({ eventCode: 'REFUND', originalReference: pspOf(paymentId), merchantReference: refund.json().id as string }))
      const after = await s.app.db.payments.get(paymentId)
      t.ok(after!.amountRefundedMinor + (after!.amountDisputedMinor ?? 0) <= after!.amountCapturedMinor, `round ${round}: after the refund succeeded too`)
    }
    if (dispute.statusCode === 503) {
      t.equal(dispute.json().type, 'urn:problem-type:connector-event-not-matched')
      await deliver(s, chargeback)
      const after = await s.app.db.payments.get(paymentId)
      t.ok(after!.amountRefundedMinor + (after!.amountDisputedMinor ?? 0) <= after!.amountCapturedMinor, `round ${round}: after the chargeback was sent again`)
    }
  }
})

t.test('a dispute of no payment of ours on this account is recorded in the inbox and ignored', async (t) => {
  const s = await setup(t)
  const item = notificationItem({ eventCode: 'CHARGEBACK', pspReference: 'DSP-STRANGER', originalReference: 'PSP-UNKNOWN', merchantReference: 'not-ours' })
  await deliver(s, item)
  t.same((await s.app.inject({ method: 'GET', url: '/api/disputes', headers: s.merchant.auth })).json(), { data: [], hasMore: false })
  t.match(await s.app.db.connectorEvents.get(s.connectorId, 'DSP-STRANGER:CHARGEBACK:true'), { processedAt: String })
})
