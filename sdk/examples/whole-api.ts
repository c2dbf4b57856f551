// The README's whole-API walk, the same text but for the import path (test/examples.test.ts compares them):
// type-checked under `strict` and run against the live service by test/examples.test.ts, and the README's copy in a
// fresh strict project by test/package.test.ts.
import { ApiError, createClient, signTestWebhook, verifyWebhook } from '../src/index.js'

export async function wholeApi (baseUrl: string, adminApiKey: string) {
  // The operator (admin key): the service, a product, a merchant, its key.
  const admin = createClient({ baseUrl, apiKey: adminApiKey, apiVersion: '2026-11-25' })
  const index = await admin.service.index()
  await admin.service.live()
  await admin.service.ready()
  const product = await admin.products.replace('sku-walk', { name: 'Walking shoes', price: 59.9 })
  const sameProduct = await admin.products.retrieve('sku-walk')
  const merchant = await admin.merchants.create({ name: 'Walk Shop', email: 'walk@example.com' }, { idempotencyKey: 'walk-merchant' })
  const renamed = await admin.merchants.update(merchant.id, { name: 'Walk Shop Ltd' })
  const key = await admin.apiKeys.create(merchant.id, { name: 'checkout' }, { idempotencyKey: 'walk-key' })
  const sameMerchant = await admin.merchants.retrieve(merchant.id)
  const merchantIds: string[] = []
  for await (const listed of admin.merchants.list()) merchantIds.push(listed.id)

  // The merchant (its key): a connector account, payments, refunds, capture, cancel, a shopper at checkout, disputes,
  // a summary, events.
  // apiVersion pins what the answers look like (default: the merchant's pinned version); the webhook endpoints this
  // client creates get it too.
  const shop = createClient({ baseUrl, apiKey: key.secret, apiVersion: '2026-11-25' })
  const connector = await shop.connectors.create(merchant.id, { type: 'simulated', description: 'test gateway' })
  await shop.connectors.update(merchant.id, connector.id, { priority: 5 })
  const connectors = await shop.connectors.list(merchant.id)
  await shop.connectors.retrieve(merchant.id, connector.id)

  // An automatic payment under your own Idempotency-Key (the SDK makes one otherwise): sent again, by you or by the
  // SDK's retries, it pays once and answers the first payment (lastResponse.idempotentReplayed).
  const paid = await shop.payments.create({ amount: 25, currency: 'USD', metadata: { orderId: 'A-1' } }, { idempotencyKey: 'walk-order-A-1' })
  const paidAgain = await shop.payments.create({ amount: 25, currency: 'USD', metadata: { orderId: 'A-1' } }, { idempotencyKey: 'walk-order-A-1' })
  // A partial refund.
  const refund = await shop.payments.refunds.create(paid.id, { amount: 5 })
  const sameRefund = await shop.payments.refunds.retrieve(paid.id, refund.id)
  const refundsOfPaid: string[] = []
  for await (const listed of shop.payments.refunds.list(paid.id)) refundsOfPaid.push(listed.id)
  // Manual capture: authorize now, capture (part of) it later, or cancel.
  const authorized = await shop.payments.create({ amount: 40, currency: 'USD', captureMethod: 'manual' })
  const captured = await shop.payments.capture(authorized.id, { amount: 30 })
  const toCancel = await shop.payments.create({ amount: 15, currency: 'USD', captureMethod: 'manual' })
  const canceled = await shop.payments.cancel(toCancel.id)
  // A shopper at checkout (customer-present, 3-D Secure): with returnUrl the PSP may need the shopper (the simulated
  // gateway does at 6001.00): 201 requires_action, and nextAction says where to send their browser (GET: redirect it to
  // nextAction.url; POST: have it submit a form of nextAction.data there). The shopper comes back through the service to
  // your returnUrl with paymentId and status added: read the payment then (the query's status is only a hint).
  const checkout = await shop.payments.create({ amount: 6001, currency: 'EUR', returnUrl: 'https://shop.example.com/done?order=A-2' })
  const backAt = checkout.nextAction === undefined ? undefined : await shopperConfirmsAtSimulatedBank(checkout.nextAction.url)
  const settled = await shop.payments.retrieve(backAt?.searchParams.get('paymentId') ?? checkout.id)
  // Disputes are reported by the PSP (Stripe's and Adyen's events; the simulated gateway reports none): read them, by
  // payment or status. None here, and an id that is not one of yours is a 404 ApiError.
  const disputes: string[] = []
  for await (const dispute of shop.disputes.list({ paymentId: paid.id })) disputes.push(dispute.id)
  let disputeNotFound: number | undefined
  try {
    await shop.disputes.retrieve('019aa9f2-3c41-7e2b-9d5a-4f0c6b2e8a17')
  } catch (error) {
    if (error instanceof ApiError) disputeNotFound = error.problem?.status // the RFC 9457 problem document, typed
    else throw error
  }
  // Conceding a dispute asks its PSP (the money stays with the cardholder): `accepted`, or 409 dispute-not-acceptable.
  let acceptNotFound: number | undefined
  try {
    await shop.disputes.accept('019aa9f2-3c41-7e2b-9d5a-4f0c6b2e8a17')
  } catch (error) {
    if (error instanceof ApiError) acceptNotFound = error.problem?.status
    else throw error
  }
  // Errors are ApiError; the problem document narrows on its type.
  let declineCode: string | undefined
  try {
    await shop.payments.create({ amount: 2000, currency: 'USD' })
  } catch (error) {
    if (error instanceof ApiError && error.problem?.type === 'urn:problem-type:payment-declined') declineCode = error.problem.declineCode
    else throw error
  }
  const summary = await shop.payments.summary()
  // Per connector account: its charge calls by outcome, success rate and p50/p95 latency (default: the last 30 days).
  const connectorStats = await shop.connectors.stats(merchant.id)
  const paymentsCsv = await shop.payments.export()
  const refundsCsv = await shop.payments.refunds.export()
  // Lists are async iterators: each page is fetched when the previous one is used up.
  // Filtered: the captured payment and the shopper's (the first one is partially_refunded now), one per page here.
  const succeeded: string[] = []
  for await (const listed of shop.payments.list({ status: 'succeeded', limit: 1 })) succeeded.push(listed.id)
  const allRefunds: string[] = []
  for await (const refund of shop.payments.refunds.listAll({ limit: 5 })) allRefunds.push(refund.id)
  const eventTypes: string[] = []
  for await (const event of shop.events.list({ limit: 5 })) eventTypes.push(event.type)
  const firstEvent = await shop.events.retrieve((await shop.api.GET('/api/events', { params: { query: { limit: 1 } } })).data?.data[0]?.id ?? '')

  // Webhook endpoints: create (its secret), change, rotate, send a test, deliveries, retry, replay, delete.
  const endpoint = await shop.webhookEndpoints.create(merchant.id, { url: 'https://127.0.0.1:9/walk', enabledEvents: ['payment.succeeded'] })
  await shop.webhookEndpoints.update(merchant.id, endpoint.id, { description: 'orders' })
  const rotated = await shop.webhookEndpoints.rotateSecret(merchant.id, endpoint.id, { overlapSeconds: 0 })
  // A test event now, whatever enabledEvents says: `failed` here (nothing listens on port 9), its error in attemptLog[0].
  const tested = await shop.webhookEndpoints.sendTest(merchant.id, endpoint.id)
  const replay = await shop.webhookEndpoints.replay(merchant.id, endpoint.id, { from: '2020-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' })
  const endpoints = await shop.webhookEndpoints.list(merchant.id)
  await shop.webhookEndpoints.retrieve(merchant.id, endpoint.id)
  // A delivery being sent right now is 409 webhook-delivery-in-flight with Retry-After: the client waits and retries it.
  const [delivery] = (await shop.api.GET('/merchants/{id}/webhook-endpoints/{endpointId}/deliveries', {
    params: { path: { id: merchant.id, endpointId: endpoint.id }, query: { limit: 1 } }
  })).data?.data ?? []
  const deliveries: string[] = []
  for await (const listed of shop.webhookEndpoints.deliveries(merchant.id, endpoint.id)) deliveries.push(listed.id)
  const retried = delivery === undefined ? undefined : (await shop.webhookEndpoints.retryDelivery(merchant.id, endpoint.id, delivery.id)).id
  await shop.webhookEndpoints.delete(merchant.id, endpoint.id)

  // A receiver's test: a payload signed as the service signs it, verified with the endpoint's secret. The delivery names
  // its API version (webhook-api-version, the endpoint's): narrow on it for the body of that version.
  const body = JSON.stringify(firstEvent)
  const verified = verifyWebhook(body, signTestWebhook(body, rotated.secret), rotated.secret)

  // People: the operator invites a person (the invite link is shown once), changes their role, removes them; the audit
  // log says who did what (the merchant reads its own, the operator any merchant's).
  const invited = await admin.users.invite(merchant.id, { email: 'ana@walk.example', role: 'support' }, { idempotencyKey: 'walk-invite' })
  const team = await admin.users.list(merchant.id)
  await admin.users.retrieve(merchant.id, invited.user.id)
  const demoted = await admin.users.update(merchant.id, invited.user.id, { role: 'viewer' })
  await admin.users.remove(merchant.id, invited.user.id)
  const audited: string[] = []
  for await (const entry of shop.auditLog.list({ action: 'payment.refund' })) audited.push(`${entry.action} by ${entry.actor.type}`)
  for await (const entry of admin.auditLog.listForMerchant(merchant.id, { resourceType: 'user' })) audited.push(`${entry.action} by ${entry.actor.type}`)

  // Keys rotate: the old key is revoked once the new one is deployed.
  const keys = await admin.apiKeys.list(merchant.id)
  await admin.apiKeys.revoke(merchant.id, key.id)
  await admin.connectors.delete(merchant.id, connector.id)

  return {
    index: index.name,
    product: product.name === sameProduct.name,
    merchant: renamed.name,
    merchantRead: sameMerchant.name,
    merchantListed: merchantIds.includes(merchant.id),
    connectors: connectors.data.length,
    paid: paid.status,
    replayed: paidAgain.lastResponse.idempotentReplayed && paidAgain.id === paid.id,
    refund: sameRefund.amount,
    refundsOfPaid: refundsOfPaid.length === 1 && refundsOfPaid[0] === refund.id,
    captured: captured.amountCaptured,
    canceled: canceled.status,
    checkout: checkout.status,
    returnedTo: backAt === undefined ? undefined : `${backAt.origin}${backAt.pathname}?order=${backAt.searchParams.get('order')}&status=${backAt.searchParams.get('status')}`,
    settled: settled.id === checkout.id ? settled.status : undefined,
    disputes: disputes.length,
    disputeNotFound,
    acceptNotFound,
    declineCode,
    summary: typeof summary === 'object',
    connectorStats: connectorStats.data.some((entry) => entry.id === connector.id && entry.attempts > 0 && entry.successRate !== null),
    succeeded: succeeded.length === 2 && succeeded.includes(captured.id) && succeeded.includes(settled.id),
    exports: paymentsCsv.includes(paid.id) && refundsCsv.includes(sameRefund.id),
    allRefunds: allRefunds.includes(sameRefund.id),
    eventTypes: eventTypes.length > 0,
    endpoints: endpoints.data.length,
    replayed202: replay.replayed >= 0,
    tested: tested.status,
    retried: retried !== undefined && deliveries.includes(retried),
    verified: verified.apiVersion === '2026-11-25' && verified.id === firstEvent.id,
    keys: keys.data.length,
    team: team.data.length,
    demoted: demoted.role,
    audited
  }
}

/**
 * The shopper's browser at the simulated gateway's bank page (in a test: a real shopper meets their own bank). It opens
 * the page, presses Succeed (the page's form posts its key, returnUrl and account back with the choice), follows the
 * bank's 303 to the service's return address, which asks the PSP, records the outcome and answers 303 to your
 * returnUrl with paymentId and status added. Returns that address without opening it (your shop does not run here).
 */
async function shopperConfirmsAtSimulatedBank (bankPage: string): Promise<URL> {
  const page = await fetch(bankPage)
  if (page.status !== 200 || !(await page.text()).includes('value="succeed"')) throw new Error(`no simulated bank page at ${bankPage}`)
  const form = new URLSearchParams(new URL(bankPage).searchParams)
  form.set('outcome', 'succeed')
  const decided = await fetch(bankPage, { method: 'POST', body: form, redirect: 'manual' })
  const serviceReturn = decided.headers.get('location')
  if (decided.status !== 303 || serviceReturn === null) throw new Error(`the simulated bank answered ${decided.status}`)
  const returned = await fetch(new URL(serviceReturn, bankPage), { redirect: 'manual' })
  const shopReturn = returned.headers.get('location')
  if (returned.status !== 303 || shopReturn === null) throw new Error(`the service's return address answered ${returned.status}`)
  return new URL(shopReturn, bankPage)
}
