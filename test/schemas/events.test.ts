/**
 * Events are rendered at the edge (issue 39): the core stores a snapshot of the changed resource and renderEventData
 * shows it as the API does. The bytes a lister and a receiver see are those the old path stored (the representation,
 * JSON-copied at change time), for every kind of resource; rows written before snapshots render as stored; no
 * snapshot holds a secret.
 */
import t from 'tap'
import { eventFactory } from '../../src/domain/event-factory'
import type { DomainEvent, NewEvent } from '../../src/domain/events'
import { newPendingPayment, type Payment } from '../../src/domain/payments'
import type { Refund } from '../../src/domain/refunds'
import type { Dispute } from '../../src/domain/disputes'
import type { Merchant } from '../../src/domain/merchants'
import type { WebhookEndpoint } from '../../src/domain/webhooks'
import { API_VERSIONS } from '../../src/domain/api-versions'
import { deliveryBody } from '../../src/domain/webhooks'
import { renderEventData, toEventResource } from '../../schemas/events'
import { numberedEvent } from '../../src/store/webhook-rows'
import { toPublicPayment } from '../../schemas/payments'
import { toPublicRefund } from '../../schemas/refunds'
import { toPublicDispute } from '../../schemas/disputes'
import { toMerchantResource } from '../../schemas/merchants'
import { toEndpointResource } from '../../schemas/webhooks'

const AT = '2026-01-15T09:30:01.000Z'
const MERCHANT_ID = '019aa9e8-77d0-7b3f-a2c4-5e91d0f3b6c2'
const SECRET = 'whsec_c2VjcmV0LWN1cnJlbnQtc2lnbmluZy1rZXk='
const PREVIOUS_SECRET = 'enc:v1:old:c2VhbGVkLXByZXZpb3VzLXNlY3JldA'
const ACTION_TOKEN = 'tok_unguessable_return_address'
const ENCRYPTED_CARD = 'adyenjs_0_1_25$encrypted-card-number'

const factory = eventFactory({ clock: () => Date.parse(AT), newId: () => '019aa9f1-2b3c-7d4e-8f50-6172839a4b5c' })

/** A payment with every optional part the representation shows, and the parts it never shows. */
const payment: Payment = {
  ...newPendingPayment({
    id: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f',
    amountMinor: 12_345,
    currency: 'EUR',
    at: AT,
    merchantId: MERCHANT_ID,
    captureMethod: 'manual',
    metadata: { order: 'A-1' },
    paymentMethod: 'pm_card_visa',
    paymentMethods: { stripe: 'pm_card_visa', adyen: 'stored-1' },
    shopperReference: 'shopper-8812',
    customer: { email: 'ann@example.com', name: 'Ann' },
    returnUrl: 'https://shop.example.com/done',
    actionToken: ACTION_TOKEN,
    checkoutData: { paymentMethod: { type: 'scheme', encryptedCardNumber: ENCRYPTED_CARD }, origin: 'https://shop.example.com' }
  }),
  status: 'requires_action',
  connectorReference: 'pi_123',
  nextAction: { type: 'redirect', url: 'https://psp.example/3ds', method: 'POST', data: { PaReq: 'x' } },
  paymentMethodDetails: { type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } },
  attempts: [{ connectorId: null, connectorType: 'simulated', outcome: 'requires_action', code: null, at: AT }],
  amountDisputedMinor: 100,
  disputeOpen: true
}

const refund: Refund = {
  id: 'r-1',
  paymentId: payment.id,
  amountMinor: 250,
  currency: 'EUR',
  status: 'succeeded',
  reason: 'damaged',
  failureCode: null,
  metadata: {},
  origin: 'connector',
  connectorReference: 're_1',
  createdAt: AT,
  updatedAt: AT
}

const dispute: Dispute = {
  id: 'd-1',
  merchantId: MERCHANT_ID,
  paymentId: payment.id,
  amountMinor: 100,
  currency: 'EUR',
  reason: 'fraudulent',
  status: 'needs_response',
  fundsWithdrawn: true,
  evidenceDueBy: AT,
  connector: { id: 'c-1', type: 'stripe' },
  connectorReference: 'dp_1',
  stage: 1,
  fundsStage: 1,
  createdAt: AT,
  updatedAt: AT
}

const merchant: Merchant = {
  id: MERCHANT_ID,
  name: 'Shop',
  email: 'shop@example.com',
  country: 'DE',
  defaultCurrency: 'EUR',
  status: 'active',
  metadata: { tier: 'gold' },
  apiVersion: '2026-11-25',
  version: 3,
  createdAt: AT,
  updatedAt: AT
}

const endpoint: WebhookEndpoint = {
  id: 'e-1',
  merchantId: MERCHANT_ID,
  url: 'https://shop.example.com/hooks',
  description: 'orders',
  enabledEvents: ['payment.succeeded'],
  secret: SECRET,
  previousSecret: PREVIOUS_SECRET,
  previousSecretExpiresAt: AT,
  disabled: true,
  disabledReason: 'gone',
  lastSuccessAt: null,
  apiVersion: '2026-11-01',
  createdAt: AT,
  updatedAt: AT
}

/** As the store keeps it and reads it back: the data's JSON text (what the factory wrote), parsed, numbered. */
function stored (event: NewEvent | undefined): DomainEvent {
  if (event === undefined) throw new Error('no event made')
  const { dataJson, ...rest } = event
  return { ...rest, data: JSON.parse(dataJson ?? JSON.stringify(event.data)) as Record<string, unknown>, sequence: 1 }
}

/** The old path: the representation at change time, JSON-copied into the row, listed and delivered as stored. */
function renderedAtChange (event: DomainEvent, representation: object): DomainEvent {
  return { ...event, data: JSON.parse(JSON.stringify(representation)) as Record<string, unknown>, dataFormat: 'rendered' }
}

const cases: Array<[string, NewEvent | undefined, object]> = [
  ['payment', factory.payment(payment), toPublicPayment(payment)],
  ['capture failed', factory.captureFailed(payment), toPublicPayment(payment)],
  ['refund', factory.refund({ refund, payment }), toPublicRefund(refund)],
  ['dispute', factory.dispute({ dispute, previous: undefined }), toPublicDispute(dispute)],
  ['merchant', factory.merchant(merchant), toMerchantResource(merchant)],
  ['endpoint disabled', factory.endpointDisabled(endpoint), toEndpointResource(endpoint)],
  ['endpoint test', factory.endpointTest(endpoint), toEndpointResource(endpoint)]
]

for (const [name, made, representation] of cases) {
  t.test(`${name}: the snapshot renders the bytes the representation stored at change time gave, listed and delivered in every version`, async (t) => {
    const snapshot = stored(made)
    const old = renderedAtChange(snapshot, representation)
    t.equal(snapshot.dataFormat, 'snapshot')
    t.equal(JSON.stringify(renderEventData(snapshot)), JSON.stringify(old.data), 'the same data, member for member, in the same order')
    t.equal(JSON.stringify(toEventResource(snapshot)), JSON.stringify(toEventResource(old)), 'listed the same')
    // The event as made (its data the live snapshot, as a test delivery sends it before any read-back) renders the same bytes.
    const live = numberedEvent(made as NewEvent, 1)
    t.equal(made?.dataJson, JSON.stringify(made?.data), 'the JSON written is the snapshot\'s')
    t.equal(JSON.stringify(toEventResource(live)), JSON.stringify(toEventResource(snapshot)), 'the live snapshot renders as the stored one')
    for (const version of API_VERSIONS) {
      t.equal(deliveryBody(snapshot, version, renderEventData), deliveryBody(old, version, renderEventData), `delivered the same in ${version}`)
    }
  })
}

t.test('a row written before snapshots (rendered) is listed and delivered as it is stored', async (t) => {
  const data = { id: payment.id, status: 'succeeded', amount: 123.45, currency: 'EUR', legacyField: 'kept as stored' }
  const old: DomainEvent = {
    id: 'ev-old', merchantId: MERCHANT_ID, type: 'payment.succeeded', resourceType: 'payment', resourceId: payment.id, sequence: 2, data, dataFormat: 'rendered', createdAt: AT
  }
  t.equal(renderEventData(old), data, 'the stored representation itself, not rendered again')
  t.same(toEventResource(old), { id: 'ev-old', type: 'payment.succeeded', createdAt: AT, sequence: 2, resource: { type: 'payment', id: payment.id }, data })
  t.equal(deliveryBody(old, '2026-11-01', renderEventData), JSON.stringify({ type: 'payment.succeeded', timestamp: AT, data, sequence: 2 }))
  t.equal(deliveryBody(old, '2026-11-25', renderEventData), JSON.stringify(toEventResource(old)))
})

t.test('no snapshot holds a secret: neither an endpoint\'s signing secrets nor a payment\'s return token or checkout data', async (t) => {
  for (const [name, made] of cases) {
    const text = JSON.stringify(stored(made).data)
    for (const secret of [SECRET, PREVIOUS_SECRET, ACTION_TOKEN, ENCRYPTED_CARD]) t.notOk(text.includes(secret), `${name}: no ${secret.slice(0, 8)}…`)
  }
  const endpointData = stored(factory.endpointTest(endpoint)).data
  t.notOk('secret' in endpointData || 'previousSecret' in endpointData, 'the endpoint snapshot has no secret members')
  t.equal(endpointData.previousSecretExpiresAt, AT, 'when the rotation ends is kept: the representation shows it')
  const paymentData = stored(factory.payment(payment)).data
  t.notOk('actionToken' in paymentData || 'checkoutData' in paymentData, 'the payment snapshot has neither member')
})

t.test('the snapshot is the domain object, not its representation', async (t) => {
  const data = stored(factory.payment(payment)).data
  t.equal(data.amountMinor, 12_345, 'amounts in minor units, as stored')
  t.notOk('amount' in data)
  t.same(stored(factory.merchant(merchant)).data, JSON.parse(JSON.stringify(merchant)))
})
