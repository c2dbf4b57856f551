import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient, verifyWebhook, type operations, type PaymentServiceClient } from '../src/index.js'

/*
 * Issue 42, item 3: every operation of the document has a typed helper. `HELPERS` is a record over the document's
 * operationIds (from the generated types): a new operation without an entry does not compile, so `npm test` fails.
 */

/**
 * Not for an API client: HEAD twins of GETs (the GET helper), the PSPs' notifications, the dashboard's cookie session
 * and a person's own account in it (invite acceptance, two-factor enrollment, password change),
 * and the shopper's browser pages of customer-present payments (the PSP's return, the simulated bank).
 */
type Exempt = `${string}Head` | 'receiveStripeEvent' | 'receiveAdyenNotification' | 'signInToDashboard' | 'getDashboardSession' | 'signOutOfDashboard' |
  'acceptInvite' | 'startTotpEnrollment' | 'confirmTotpEnrollment' | 'changePassword' |
  'returnFromAuthentication' | 'returnFromAuthenticationForm' | 'simulatedBankPage' | 'simulatedBankDecide'

const HELPERS: Record<Exclude<keyof operations, Exempt>, (client: PaymentServiceClient) => unknown> = {
  getServiceIndex: (c) => c.service.index,
  getLiveness: (c) => c.service.live,
  getReadiness: (c) => c.service.ready,
  getProduct: (c) => c.products.retrieve,
  putProduct: (c) => c.products.replace,
  listDisputes: (c) => c.disputes.list,
  getDispute: (c) => c.disputes.retrieve,
  acceptDispute: (c) => c.disputes.accept,
  listEvents: (c) => c.events.list,
  getEvent: (c) => c.events.retrieve,
  capturePayment: (c) => c.payments.capture,
  summarizePayments: (c) => c.payments.summary,
  exportPayments: (c) => c.payments.export,
  listAllRefunds: (c) => c.payments.refunds.listAll,
  exportRefunds: (c) => c.payments.refunds.export,
  createPayment: (c) => c.payments.create,
  listPayments: (c) => c.payments.list,
  cancelPayment: (c) => c.payments.cancel,
  createRefund: (c) => c.payments.refunds.create,
  listRefunds: (c) => c.payments.refunds.list,
  getRefund: (c) => c.payments.refunds.retrieve,
  getPayment: (c) => c.payments.retrieve,
  createApiKey: (c) => c.apiKeys.create,
  listApiKeys: (c) => c.apiKeys.list,
  revokeApiKey: (c) => c.apiKeys.revoke,
  createWebhookEndpoint: (c) => c.webhookEndpoints.create,
  listWebhookEndpoints: (c) => c.webhookEndpoints.list,
  getWebhookEndpoint: (c) => c.webhookEndpoints.retrieve,
  updateWebhookEndpoint: (c) => c.webhookEndpoints.update,
  deleteWebhookEndpoint: (c) => c.webhookEndpoints.delete,
  rotateWebhookSecret: (c) => c.webhookEndpoints.rotateSecret,
  listWebhookDeliveries: (c) => c.webhookEndpoints.deliveries,
  retryWebhookDelivery: (c) => c.webhookEndpoints.retryDelivery,
  replayWebhookEvents: (c) => c.webhookEndpoints.replay,
  sendWebhookTest: (c) => c.webhookEndpoints.sendTest,
  createConnector: (c) => c.connectors.create,
  listConnectors: (c) => c.connectors.list,
  getConnector: (c) => c.connectors.retrieve,
  updateConnector: (c) => c.connectors.update,
  deleteConnector: (c) => c.connectors.delete,
  getConnectorStats: (c) => c.connectors.stats,
  createMerchant: (c) => c.merchants.create,
  listMerchants: (c) => c.merchants.list,
  getMerchant: (c) => c.merchants.retrieve,
  patchMerchant: (c) => c.merchants.update,
  inviteUser: (c) => c.users.invite,
  listUsers: (c) => c.users.list,
  getUser: (c) => c.users.retrieve,
  updateUser: (c) => c.users.update,
  deleteUser: (c) => c.users.remove,
  listAuditLog: (c) => c.auditLog.list,
  listMerchantAuditLog: (c) => c.auditLog.listForMerchant,
  // The document's `webhooks:` (what the service sends to a merchant's endpoint): verified and typed by verifyWebhook.
  receivePaymentEvent: () => verifyWebhook,
  receiveRefundEvent: () => verifyWebhook,
  receiveDisputeEvent: () => verifyWebhook,
  receiveMerchantEvent: () => verifyWebhook,
  receiveWebhookEndpointEvent: () => verifyWebhook
}

test('every operation of openapi.yaml has a helper (HEAD twins and non-client operations aside)', () => {
  const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused' })
  for (const [operationId, helper] of Object.entries(HELPERS)) assert.equal(typeof helper(client), 'function', operationId)
  // The committed document, read as text: the generated types it was checked against are up to date (CI's drift check).
  const document = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'openapi.yaml'), 'utf8')
  const ids = [...document.matchAll(/^\s+operationId: (\w+)$/gm)].map((match) => match[1] ?? '')
  const exempt = /Head$|^receiveStripeEvent$|^receiveAdyenNotification$|^(signInToDashboard|getDashboardSession|signOutOfDashboard|acceptInvite|startTotpEnrollment|confirmTotpEnrollment|changePassword)$|^(returnFromAuthentication(Form)?|simulatedBank(Page|Decide))$/
  assert.deepEqual(ids.filter((id) => !exempt.test(id) && !(id in HELPERS)), [], 'operations without a helper')
  assert.ok(ids.length > 40)
})
