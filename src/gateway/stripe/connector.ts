import Stripe from 'stripe'
import { CredentialsRefusedError, type Connector, type ConnectorCredentials } from '../connector'
import { AmountNotExpressibleError, fromStripeAmount, toStripeAmount } from './amounts'
import { inCall } from '../call'
import { gatewayErrorOf } from './errors'
import { stripeFetch } from './transport'
import { paymentMethodDetailsOf, type PaymentMethodDetails } from '../../domain/customers'
import {
  GatewayError, type CaptureResult, type ChargeResult, type ChargeState, type PaymentGateway, type RefundResult, type VoidResult
} from '../types'

/** The API version every request is made under (pinned: the SDK's types describe this one). */
export const STRIPE_API_VERSION = '2026-10-28.endive' satisfies Stripe.LatestApiVersion

/**
 * How long a PaymentIntent may stay out of search results after it was made: Stripe says "less than a minute"
 * under normal conditions; twice that, so a lookup by search is trusted only for an attempt at least this old.
 */
export const STRIPE_SEARCH_LAG_MS = 120_000

/** The decline code of a charge that needs the customer's authentication (off-session, nobody to ask). */
export const AUTHENTICATION_REQUIRED = 'authentication_required'

export interface StripeConnectorOptions {
  /** Base URL of Stripe's API (STRIPE_API_URL), e.g. https://api.stripe.com or a local fake. */
  apiUrl: string
  timeoutMs: number
}

type Intent = Stripe.PaymentIntent

/** The SDK's host/port/protocol options from a base URL (an IPv6 literal without its brackets). */
export function stripeAddress (apiUrl: string): { host: string, port: number, protocol: 'http' | 'https' } {
  const url = new URL(apiUrl)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the Stripe API URL must be http or https')
  const protocol = url.protocol === 'http:' ? 'http' : 'https'
  const port = url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port)
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port, protocol }
}

/**
 * A Stripe account as a connector: PaymentIntents confirmed off-session, every write under our derived
 * Idempotency-Key, every failure classified by gatewayErrorOf. The SDK sends through stripeFetch: its own
 * retries are off, the one it would still make of a reset connection is refused (it could act twice and would
 * hide the reset), and a call we give up on (time-out, shutdown) is aborted, never left running.
 */
export function stripeConnector (credentials: ConnectorCredentials, options: StripeConnectorOptions): Connector {
  const secretKey = credentials.secretKey
  if (secretKey === undefined || secretKey === '') throw new CredentialsRefusedError('a Stripe connector needs a secretKey', 'credentials_missing')
  const stripe = new Stripe(secretKey, {
    ...stripeAddress(options.apiUrl),
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: 0,
    timeout: options.timeoutMs,
    httpClient: Stripe.createFetchHttpClient(stripeFetch),
    telemetry: false
  })

  return {
    gateway: stripeGateway(stripe),
    async verify () {
      try {
        await inCall(undefined, async () => await stripe.balance.retrieve())
      } catch (error) {
        if (error instanceof Stripe.errors.StripeAuthenticationError) throw new CredentialsRefusedError('Stripe refused the secret key (401)', 'authentication_failed')
        if (error instanceof Stripe.errors.StripePermissionError) throw new CredentialsRefusedError('Stripe refused the secret key access to the balance (403)', 'permission_denied')
        throw gatewayErrorOf(error)
      }
    }
  }
}

function stripeGateway (stripe: Stripe): PaymentGateway {
  /** The PaymentIntent of a payment: by its recorded reference, else by the payment id in its metadata. */
  /** `withCharge`: the charge expanded, for its payment_method_details (a lookup that may settle the payment). */
  async function retrieveIntent (id: string, signal?: AbortSignal, withCharge = false): Promise<Intent> {
    return await inCall(signal, async () => await stripe.paymentIntents.retrieve(id, withCharge ? { expand: ['latest_charge'] } : undefined))
  }

  async function findIntent (chargeReference: string | undefined, paymentId: string | undefined, signal?: AbortSignal, withCharge = false): Promise<Intent | undefined> {
    if (chargeReference !== undefined) return await retrieveIntent(chargeReference, signal, withCharge)
    if (paymentId === undefined) throw new GatewayError('unavailable', 'the charge has neither a reference nor a payment id to find it by', 'charge_not_identifiable')
    // Search is eventually consistent (Stripe: searchable within about a minute): a PaymentIntent made
    // just now may not be found yet. Of several (never expected), the one that took money wins.
    const query = `metadata['payment_id']:'${paymentId.replace(/'/g, "\\'")}'`
    const found = await inCall(signal, async () => await stripe.paymentIntents.search(withCharge ? { query, expand: ['data.latest_charge'] } : { query }))
    return [...found.data].sort((a, b) => statusRank(a) - statusRank(b))[0]
  }

  return {
    async charge (request, { signal } = {}) {
      if (signal?.aborted === true) throw new GatewayError('aborted', 'the charge was abandoned before it started (shutting down)')
      let amount: number
      try {
        amount = toStripeAmount(request.amountMinor, request.currency)
      } catch (error) {
        if (error instanceof AmountNotExpressibleError) return { outcome: 'declined', chargeId: '', declineCode: 'invalid_amount' }
        throw error
      }
      try {
        const intent = await inCall(signal, async () => await stripe.paymentIntents.create({
          amount,
          currency: request.currency.toLowerCase(),
          ...(request.paymentMethod === undefined ? {} : { payment_method: request.paymentMethod }),
          confirm: true,
          // Customer-present: an on-session confirmation that may ask for the shopper (3-D Secure), who comes back to
          // our return address; never off_session. Without it: off-session, as always.
          ...(request.returnUrl === undefined ? { off_session: true } : { return_url: request.returnUrl }),
          capture_method: request.captureMethod ?? 'automatic',
          metadata: { payment_id: request.paymentId },
          // The charge in the answer, for its payment_method_details (card brand, last 4, expiry, country).
          expand: ['latest_charge']
        }, { idempotencyKey: request.idempotencyKey }))
        return chargeResultOf(intent)
      } catch (error) {
        const declined = declineOf(error)
        if (declined !== undefined) return declined
        throw gatewayErrorOf(error)
      }
    },

    async refund (request, { signal } = {}) {
      const { chargeReference } = request
      if (chargeReference === undefined) return { outcome: 'failed', gatewayRefundId: '', failureCode: 'charge_not_found' }
      try {
        const refund = await inCall(signal, async () => await stripe.refunds.create({
          payment_intent: chargeReference,
          amount: toStripeAmount(request.amountMinor, request.currency),
          ...(request.refundId === undefined ? {} : { metadata: { refund_id: request.refundId, ...(request.paymentId === undefined ? {} : { payment_id: request.paymentId }) } })
        }, { idempotencyKey: request.idempotencyKey }))
        return refundResultOf(refund)
      } catch (error) {
        if (error instanceof AmountNotExpressibleError) return { outcome: 'failed', gatewayRefundId: '', failureCode: 'invalid_amount' }
        if (error instanceof Stripe.errors.StripeInvalidRequestError && !(error instanceof Stripe.errors.StripeIdempotencyError)) {
          return { outcome: 'failed', gatewayRefundId: '', failureCode: error.code ?? 'invalid_request' }
        }
        throw gatewayErrorOf(error)
      }
    },

    async capture (request, { signal } = {}) {
      const reference = request.chargeReference
      if (reference === undefined) return { outcome: 'failed', failureCode: 'authorization_not_found' }
      try {
        const intent = await inCall(signal, async () => await stripe.paymentIntents.capture(reference, {
          amount_to_capture: toStripeAmount(request.amountMinor, request.currency)
        }, { idempotencyKey: request.idempotencyKey }))
        return captureResultOf(intent)
      } catch (error) {
        if (error instanceof AmountNotExpressibleError) return { outcome: 'failed', failureCode: 'invalid_amount' }
        if (isUnexpectedState(error)) {
          // Captured (under another key, or a key Stripe no longer remembers) or released meanwhile: say which.
          return captureResultOf(await retrieveIntent(reference, signal).catch((cause: unknown) => { throw gatewayErrorOf(cause) }))
        }
        if (error instanceof Stripe.errors.StripeInvalidRequestError && !(error instanceof Stripe.errors.StripeIdempotencyError)) {
          return { outcome: 'failed', failureCode: error.code ?? 'invalid_request' }
        }
        throw gatewayErrorOf(error)
      }
    },

    async void (request, { signal } = {}) {
      try {
        const intent = await findIntent(request.chargeReference, request.paymentId, signal)
        // None found: nothing was charged that Stripe shows. Unlike the simulated gateway, Stripe keeps no
        // tombstone: a charge request still in flight under the key could be made after this answer.
        if (intent === undefined) return { outcome: 'voided' }
        const settled = voidResultOf(intent)
        if (settled !== undefined) return settled
        try {
          const canceled = await inCall(signal, async () => await stripe.paymentIntents.cancel(intent.id, {}, { idempotencyKey: `${request.chargeIdempotencyKey}:void` }))
          return voidResultOf(canceled) ?? unknownState(canceled)
        } catch (error) {
          if (!isUnexpectedState(error)) throw error
          // Captured (or settled otherwise) between the read and the cancel.
          const now = await retrieveIntent(intent.id, signal)
          return voidResultOf(now) ?? unknownState(now)
        }
      } catch (error) {
        throw gatewayErrorOf(error)
      }
    },

    async retrieve (request, { signal } = {}) {
      try {
        const intent = await findIntent(request.chargeReference, request.paymentId, signal, true)
        // Search lags writes (Stripe: searchable within about a minute): nothing found by it proves nothing before that.
        if (intent === undefined) return request.chargeReference === undefined ? { state: 'none', lagMs: STRIPE_SEARCH_LAG_MS } : { state: 'none' }
        return chargeStateOf(intent)
      } catch (error) {
        throw gatewayErrorOf(error)
      }
    },

    async acceptDispute (request, { signal } = {}) {
      try {
        // Closing a dispute is Stripe's way to accept it: the dispute becomes `lost`, its evidence can no longer be sent.
        await inCall(signal, async () => await stripe.disputes.close(request.disputeReference, {}, { idempotencyKey: request.idempotencyKey }))
        return { outcome: 'accepted' }
      } catch (error) {
        if (error instanceof Stripe.errors.StripeInvalidRequestError && !(error instanceof Stripe.errors.StripeIdempotencyError)) {
          return { outcome: 'refused', reason: error.code ?? 'invalid_request' }
        }
        throw gatewayErrorOf(error)
      }
    }
  }
}

/** Search order when several PaymentIntents carry one payment id: money taken first, released last. */
function statusRank (intent: Intent): number {
  const order: Array<Stripe.PaymentIntent.Status> = ['succeeded', 'requires_capture', 'processing', 'requires_action', 'requires_payment_method', 'requires_confirmation', 'canceled']
  return order.indexOf(intent.status)
}

function isUnexpectedState (error: unknown): error is Stripe.errors.StripeInvalidRequestError {
  return error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'payment_intent_unexpected_state'
}

function unknownState (intent: Intent): never {
  throw new GatewayError('unavailable', `the PaymentIntent is ${intent.status}: its outcome is not known yet`, 'charge_processing')
}

/** The decline code of a shopper who failed (or refused) 3-D Secure. */
export const AUTHENTICATION_FAILED = 'authentication_failed'

function declineCodeOf (intent: Intent): string {
  if (intent.status === 'requires_action') return AUTHENTICATION_REQUIRED
  if (intent.status === 'canceled') return 'payment_voided'
  const error = intent.last_payment_error
  // Stripe's code for a failed authentication (the PaymentIntent is back to requires_payment_method).
  if (error?.code === 'payment_intent_authentication_failure') return AUTHENTICATION_FAILED
  return error?.decline_code ?? error?.code ?? 'card_declined'
}

/**
 * Where a customer-present PaymentIntent sends the shopper: its `next_action.redirect_to_url` (Stripe gives one when
 * the confirmation carried a return_url). Undefined for anything else (off-session, or an action only Stripe.js handles).
 */
function redirectOf (intent: Intent): string | undefined {
  if (intent.status !== 'requires_action') return undefined
  const action = intent.next_action
  return action?.type === 'redirect_to_url' && typeof action.redirect_to_url?.url === 'string' ? action.redirect_to_url.url : undefined
}

/** What the PaymentIntent's charge (expanded) says of the payment method, kept to the members a payment stores. */
export function paymentMethodDetailsOfIntent (intent: Intent): PaymentMethodDetails | undefined {
  const charge = intent.latest_charge
  const details = typeof charge === 'object' && charge !== null ? charge.payment_method_details : undefined
  if (details === undefined || details === null) return undefined
  const card = details.card ?? undefined
  return paymentMethodDetailsOf({
    type: details.type,
    ...(card === undefined ? {} : { card: { brand: card.brand, last4: card.last4, expMonth: card.exp_month, expYear: card.exp_year, country: card.country } })
  })
}

export function chargeResultOf (intent: Intent): ChargeResult {
  const details = paymentMethodDetailsOfIntent(intent)
  const result = chargeOutcomeOf(intent)
  return details === undefined ? result : { ...result, paymentMethodDetails: details }
}

/** A PaymentIntent captured for less than its amount (the rest released): what it took. */
function partOf (intent: Intent): { amountCapturedMinor?: number } {
  if (typeof intent.amount_received !== 'number' || typeof intent.amount !== 'number' || intent.amount_received <= 0 || intent.amount_received >= intent.amount) return {}
  return { amountCapturedMinor: fromStripeAmount(intent.amount_received, intent.currency) }
}

function chargeOutcomeOf (intent: Intent): ChargeResult {
  switch (intent.status) {
    case 'succeeded': return { outcome: 'succeeded', chargeId: intent.id, ...partOf(intent) }
    case 'requires_capture': return { outcome: 'authorized', chargeId: intent.id }
    case 'requires_action': {
      const url = redirectOf(intent)
      return url === undefined
        ? { outcome: 'declined', chargeId: intent.id, declineCode: declineCodeOf(intent) }
        : { outcome: 'requires_action', chargeId: intent.id, nextAction: { type: 'redirect', url, method: 'GET' } }
    }
    case 'requires_payment_method':
    case 'canceled':
      return { outcome: 'declined', chargeId: intent.id, declineCode: declineCodeOf(intent) }
    default: return unknownState(intent)
  }
}

/** A card error (402) is Stripe's answer: declined, under the PaymentIntent it created when there is one. */
function declineOf (error: unknown): ChargeResult | undefined {
  if (error instanceof Stripe.errors.StripeCardError || (error instanceof Stripe.errors.StripeInvalidRequestError && !(error instanceof Stripe.errors.StripeIdempotencyError))) {
    const declineCode = (error.decline_code ?? '') !== '' ? error.decline_code : error.code
    return { outcome: 'declined', chargeId: error.payment_intent?.id ?? '', declineCode: declineCode ?? 'card_declined' }
  }
  return undefined
}

function chargeStateOf (intent: Intent): ChargeState {
  const state = chargeStatesOf(intent)
  const details = state.state === 'captured' || state.state === 'authorized' ? paymentMethodDetailsOfIntent(intent) : undefined
  return details === undefined ? state : { ...state, paymentMethodDetails: details }
}

function chargeStatesOf (intent: Intent): ChargeState {
  switch (intent.status) {
    case 'succeeded': return { state: 'captured', chargeId: intent.id, amountCapturedMinor: fromStripeAmount(intent.amount_received, intent.currency) }
    case 'requires_capture': return { state: 'authorized', chargeId: intent.id, amountMinor: fromStripeAmount(intent.amount_capturable, intent.currency) }
    case 'canceled': return { state: 'voided' }
    // Customer-present: still waiting for the shopper; off-session: nobody will come, a decline.
    case 'requires_action': return redirectOf(intent) === undefined ? { state: 'declined', chargeId: intent.id, declineCode: AUTHENTICATION_REQUIRED } : { state: 'requires_action', chargeId: intent.id }
    case 'requires_payment_method':
      return intent.last_payment_error === null || intent.last_payment_error === undefined
        ? { state: 'none' }
        : { state: 'declined', chargeId: intent.id, declineCode: declineCodeOf(intent) }
    case 'requires_confirmation': return { state: 'none' }
    default: return unknownState(intent)
  }
}

/** What a void finds already settled; undefined when the PaymentIntent is still to be canceled. */
function voidResultOf (intent: Intent): VoidResult | undefined {
  switch (intent.status) {
    case 'succeeded': return { outcome: 'charged', chargeId: intent.id, ...partOf(intent) }
    case 'canceled': return { outcome: 'voided' }
    // Customer-present and waiting for the shopper: canceled like any uncaptured PaymentIntent.
    case 'requires_action': return redirectOf(intent) === undefined ? { outcome: 'declined', chargeId: intent.id, declineCode: AUTHENTICATION_REQUIRED } : undefined
    case 'requires_payment_method':
      return intent.last_payment_error === null || intent.last_payment_error === undefined
        ? undefined
        : { outcome: 'declined', chargeId: intent.id, declineCode: declineCodeOf(intent) }
    case 'processing': return unknownState(intent)
    default: return undefined
  }
}

function captureResultOf (intent: Intent): CaptureResult {
  if (intent.status === 'succeeded') {
    const charge = typeof intent.latest_charge === 'string' ? intent.latest_charge : intent.latest_charge?.id
    return { outcome: 'captured', captureId: charge ?? intent.id, amountMinor: fromStripeAmount(intent.amount_received, intent.currency) }
  }
  if (intent.status === 'canceled') return { outcome: 'failed', failureCode: 'authorization_voided' }
  return { outcome: 'failed', failureCode: 'authorization_not_capturable' }
}

/** A refund still pending is not yet an outcome: unknown, so our refund stays pending and is replayed under its key. */
export function refundResultOf (refund: Stripe.Refund): RefundResult {
  switch (refund.status) {
    case 'succeeded': return { outcome: 'succeeded', gatewayRefundId: refund.id }
    case 'failed':
    case 'canceled':
      return { outcome: 'failed', gatewayRefundId: refund.id, failureCode: refund.failure_reason ?? 'refund_failed' }
    default: throw new GatewayError('unavailable', `the Stripe refund ${refund.id} is ${refund.status ?? 'pending'}`, 'refund_pending')
  }
}
