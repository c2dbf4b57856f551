import { Type } from '@sinclair/typebox'
import { problemResponse } from './common'

/** Where shoppers' browsers reach the service: the PSPs' return address and the simulated bank's page. */
export const CHECKOUT_PATH = '/checkout'
/** The return endpoint, below CHECKOUT_PATH, followed by the payment's action token. */
export const RETURN_SEGMENT = '/return/'
/** The simulated gateway's bank page, below CHECKOUT_PATH. */
export const SIMULATED_BANK_SEGMENT = '/simulated-bank'

/** The return address of a customer-present payment at `publicBaseUrl` (PUBLIC_BASE_URL). */
export function returnAddress (publicBaseUrl: string, actionToken: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${CHECKOUT_PATH}${RETURN_SEGMENT}${actionToken}`
}

/** The simulated bank's page for a charge waiting for its shopper (`account`: the simulated connector account, null for GATEWAY). */
export function simulatedBankAddress (publicBaseUrl: string, page: { key: string, returnUrl: string, account: string | null }): string {
  const url = new URL(`${publicBaseUrl.replace(/\/+$/, '')}${CHECKOUT_PATH}${SIMULATED_BANK_SEGMENT}`)
  url.searchParams.set('key', page.key)
  url.searchParams.set('returnUrl', page.returnUrl)
  if (page.account !== null) url.searchParams.set('account', page.account)
  return url.toString()
}

export const ReturnParams = Type.Object({
  token: Type.String({ maxLength: 128, description: 'The payment\'s unguessable return token (never its id), as given to the PSP.', examples: ['b3JkZXItQS0xMDQyLXJhbmRvbS0zMi1ieXRlcy1oZXJl'] })
})

/** What a PSP sends back with the shopper: only passed on to a PSP that needs it (Adyen's redirectResult), never trusted for the outcome. */
export const ReturnQuery = Type.Object({
  payment_intent: Type.Optional(Type.String({ maxLength: 255, description: 'Stripe: the PaymentIntent (never trusted: the PaymentIntent recorded for the payment is retrieved).', examples: ['pi_3QJk2bLkdIwHu7ix0f7V2x9A'] })),
  redirect_status: Type.Optional(Type.String({ maxLength: 64, description: 'Stripe: ignored (the outcome is asked of Stripe).' })),
  redirectResult: Type.Optional(Type.String({ maxLength: 8192, description: 'Adyen: passed on to /payments/details.' }))
}, {
  additionalProperties: Type.String({ maxLength: 8192 }),
  description: 'Whatever the PSP adds. Never trusted for the outcome.'
})

export const ReturnForm = Type.Object({
  redirectResult: Type.Optional(Type.String({ maxLength: 16384, description: 'Adyen: passed on to /payments/details.' }))
}, {
  $id: 'AuthenticationReturnForm',
  title: 'Authentication return form',
  additionalProperties: Type.String({ maxLength: 16384 }),
  description: 'A form some PSPs post with the shopper (Adyen: redirectResult, or MD and PaRes). Passed on to a PSP that needs it, never trusted for the outcome.',
  examples: [{ redirectResult: 'X6XtfGC3!Y…' }]
})

const html = (description: string, example: string) => ({
  description,
  content: { 'text/html': { schema: Type.String({ maxLength: 16384 }), example } }
})

export const returnResponses = {
  303: {
    type: 'null',
    description: 'To your `returnUrl`, with `paymentId` and `status` (the payment\'s status after the PSP was asked) added to its query. ' +
      'The same on a reload, a double submit or a late second return: nothing is settled twice.',
    headers: { location: { type: 'string', maxLength: 4096, description: 'Your returnUrl with paymentId and status.' } }
  },
  404: html('No payment has this return token (unknown or tampered): a plain page, nothing else.', '<!doctype html><title>Not found</title><p>This payment link is not valid.</p>'),
  429: problemResponse('Too many requests from this client; see Retry-After.'),
  500: problemResponse('Unexpected failure; the body carries only a generic title and the trace id.'),
  503: problemResponse('The database is unavailable; nothing was lost. Reload the page after Retry-After.')
}

export const SimulatedBankQuery = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 256, description: 'The charge\'s downstream key at the simulated gateway.', examples: ['payment-019aa9f2-3c41-7e2b-9d5a-4f0c6b2e8a17'] }),
  returnUrl: Type.String({ minLength: 1, maxLength: 4096, description: 'The service\'s return address of the payment (only those are followed).', examples: ['https://pay.example.com/checkout/return/b3JkZXI'] }),
  account: Type.Optional(Type.String({ maxLength: 36, description: 'The simulated connector account, when the payment is on one.' }))
}, { additionalProperties: false })

export const SimulatedBankForm = Type.Object({
  key: SimulatedBankQuery.properties.key,
  returnUrl: SimulatedBankQuery.properties.returnUrl,
  account: SimulatedBankQuery.properties.account,
  outcome: Type.Union([Type.Literal('succeed'), Type.Literal('fail')], { description: 'What the shopper chose.' })
}, {
  $id: 'SimulatedBankForm',
  title: 'Simulated bank form',
  additionalProperties: false,
  description: 'The simulated bank page\'s form: the charge, the return address and the shopper\'s choice.',
  examples: [{ key: 'payment-019aa9f2-3c41-7e2b-9d5a-4f0c6b2e8a17', returnUrl: 'https://pay.example.com/checkout/return/b3JkZXI', outcome: 'succeed' }]
})

export const simulatedBankResponses = {
  page: html('The simulated bank\'s page: two buttons, succeed and fail.', '<!doctype html><title>Simulated bank</title><form method="post">…</form>'),
  redirect: {
    type: 'null',
    description: 'To the service\'s return address, as a PSP sends the shopper back.',
    headers: { location: { type: 'string', maxLength: 4096, description: 'The return address.' } }
  },
  notFound: html('No charge waits for its shopper under this key, or the return address is not this service\'s.', '<!doctype html><title>Not found</title><p>Nothing to authenticate.</p>'),
  validation: problemResponse('A query or form member is missing or malformed.'),
  rateLimited: problemResponse('Too many requests from this client; see Retry-After.'),
  internal: problemResponse('Unexpected failure; the body carries only a generic title and the trace id.')
}
