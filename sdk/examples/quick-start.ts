// The README's quick start: type-checked under `strict` (npm run typecheck) and run against the live
// service by test/examples.test.ts. Outside this package, import from '@product-payment-service/sdk'.
import { ApiError, createClient, verifyWebhook } from '../src/index.js'

export async function quickStart (baseUrl: string, adminApiKey: string) {
  // 1. the operator creates a merchant and an API key for it (the secret is in this answer only)
  const admin = createClient({ baseUrl, apiKey: adminApiKey })
  const merchant = await admin.merchants.create({ name: 'Acme', email: 'billing@acme.example' })
  const { secret } = await admin.apiKeys.create(merchant.id, { name: 'checkout' })

  // 2. the merchant pays: an Idempotency-Key is generated and reused by the SDK's own retries
  const acme = createClient({ baseUrl, apiKey: secret })
  const payment = await acme.payments.create({ amount: 10.1, currency: 'USD' })

  // 3. a decline is an ApiError whose problem narrows on its type
  let declineCode: string | undefined
  try {
    await acme.payments.create({ amount: 2000, currency: 'USD' })
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    if (error.problem?.type === 'urn:problem-type:payment-declined') declineCode = error.problem.declineCode
  }

  // 4. every payment, page by page
  const amounts: number[] = []
  for await (const listed of acme.payments.list({ limit: 50 })) amounts.push(listed.amount)

  return { merchant, payment, declineCode, amounts }
}

/**
 * A webhook receiver's core: `rawBody` exactly as received, the endpoint's secret from its creation. The event is typed
 * by the API version the delivery names; `data` is the resource in either, narrow on `apiVersion` for the rest.
 */
export function onWebhook (rawBody: string, headers: Headers, endpointSecret: string): string {
  const event = verifyWebhook(rawBody, headers, endpointSecret)
  switch (event.type) {
    case 'payment.succeeded':
      return `paid ${event.data.amount} ${event.data.currency}`
    case 'refund.succeeded':
      return `refunded ${event.data.amount}`
    default:
      return `ignored ${event.type}`
  }
}
