import { createHash } from 'node:crypto'
import { CheckoutAPI, Client, Config, DisputesAPI, EnvironmentEnum, HttpClientException, Types } from '@adyen/api-library'
import { CredentialsRefusedError, type Connector, type ConnectorCredentials } from './connector'
import { AmountNotExpressibleError, toAdyenValue } from './adyen-amounts'
import { adyenGatewayError, validationAnswer } from './adyen-errors'
import { adyenTransport } from './adyen-transport'
import { inCall } from './call'
import { paymentMethodDetailsOf, type PaymentMethodDetails } from '../domain/customers'
import { AUTHENTICATION_REQUIRED } from './stripe'
import { GatewayError, type ChargeResult, type PaymentGateway } from './types'

type PaymentResponse = Types.checkout.PaymentResponse
type PaymentRequest = Types.checkout.PaymentRequest
const ResultCode = Types.checkout.PaymentResponse.ResultCodeEnum

/** Adyen's Checkout test endpoint (base URL, without the API version the library adds). */
export const ADYEN_TEST_CHECKOUT_URL = 'https://checkout-test.adyen.com'

/** Adyen's Disputes API, test and live (the library adds nothing: the version is part of it). */
export const ADYEN_TEST_DISPUTES_URL = 'https://ca-test.adyen.com/ca/services/DisputeService/v30'
export const ADYEN_LIVE_DISPUTES_URL = 'https://ca-live.adyen.com/ca/services/DisputeService/v30'

/** Adyen keeps idempotency keys of at most 64 characters. */
const MAX_IDEMPOTENCY_KEY_LENGTH = 64

export interface AdyenConnectorOptions {
  /** ADYEN_CHECKOUT_URL: every account's requests go there (tests: a local fake); unset: by the account's environment. */
  checkoutUrl?: string
  /** ADYEN_DISPUTES_URL: the Disputes API of every account (tests: a local fake); unset: by the account's environment. */
  disputesUrl?: string
  timeoutMs: number
}

/**
 * The Checkout base URL of an account: ADYEN_CHECKOUT_URL when the operator set one; else the live
 * endpoint of the account's `liveUrlPrefix` (Customer Area: Developers › API URLs), which marks a live
 * account; else Adyen's test endpoint.
 */
export function adyenCheckoutUrl (credentials: ConnectorCredentials, override?: string): string {
  if (override !== undefined && override !== '') return override
  const prefix = credentials.liveUrlPrefix
  return prefix === undefined || prefix === '' ? ADYEN_TEST_CHECKOUT_URL : `https://${prefix}-checkout-live.adyenpayments.com/checkout`
}

/**
 * The Disputes API base of an account, up to the service path (the transport keeps the library's `/v30/…`):
 * ADYEN_DISPUTES_URL when set (its version, if given, is the library's), else live or test by the account.
 */
export function adyenDisputesBase (credentials: ConnectorCredentials, override?: string): string {
  const live = credentials.liveUrlPrefix !== undefined && credentials.liveUrlPrefix !== ''
  const url = override !== undefined && override !== '' ? override : live ? ADYEN_LIVE_DISPUTES_URL : ADYEN_TEST_DISPUTES_URL
  return url.replace(/\/+$/, '').replace(/\/v\d+$/, '')
}

/** Our downstream key as Adyen's Idempotency-Key: as it is when it fits Adyen's 64 characters, else its SHA-256 (still derived, never random). */
export function adyenIdempotencyKey (key: string): string {
  if (key.length <= MAX_IDEMPOTENCY_KEY_LENGTH) return key
  return `sha256-${createHash('sha256').update(key).digest('base64url')}`
}

const keyed = (key: string): { idempotencyKey: string } => ({ idempotencyKey: adyenIdempotencyKey(key) })

/**
 * An Adyen merchant account as a connector (Checkout API through the official library): payments with a
 * stored card on file (ContAuth, UnscheduledCardOnFile), each call under our derived Idempotency-Key.
 * Captures, refunds and cancels are only accepted by Adyen (`received`): their outcome arrives in a
 * notification. The Checkout API has no read of a payment, so `retrieve` is not offered.
 */
export function adyenConnector (credentials: ConnectorCredentials, options: AdyenConnectorOptions): Connector {
  const { apiKey, merchantAccount, liveUrlPrefix } = credentials
  if (apiKey === undefined || apiKey === '') throw new CredentialsRefusedError('an Adyen connector needs an apiKey', 'credentials_missing')
  if (merchantAccount === undefined || merchantAccount === '') throw new CredentialsRefusedError('an Adyen connector needs a merchantAccount', 'credentials_missing')
  const live = liveUrlPrefix !== undefined && liveUrlPrefix !== ''
  const config = new Config({
    apiKey,
    environment: live ? EnvironmentEnum.LIVE : EnvironmentEnum.TEST,
    ...(live ? { liveEndpointUrlPrefix: liveUrlPrefix } : {})
  })
  const client = new Client(config, adyenTransport({ baseUrl: adyenCheckoutUrl(credentials, options.checkoutUrl), timeoutMs: options.timeoutMs }))
  const checkout = new CheckoutAPI(client)
  const disputes = new DisputesAPI(new Client(config, adyenTransport({ baseUrl: adyenDisputesBase(credentials, options.disputesUrl), timeoutMs: options.timeoutMs })))

  return {
    gateway: adyenGateway(checkout, disputes, merchantAccount),
    async verify () {
      try {
        await inCall(undefined, async () => await checkout.PaymentsApi.paymentMethods({ merchantAccount }))
      } catch (error) {
        if (error instanceof HttpClientException && error.statusCode === 401) throw new CredentialsRefusedError('Adyen refused the API key (401)', 'authentication_failed')
        if (error instanceof HttpClientException && error.statusCode === 403) {
          throw new CredentialsRefusedError('Adyen refused this API key access to the merchant account (403)', 'permission_denied')
        }
        throw adyenGatewayError(error)
      }
    }
  }
}

function adyenGateway (checkout: CheckoutAPI, disputes: DisputesAPI, merchantAccount: string): PaymentGateway {
  return {
    async charge (request, { signal } = {}) {
      if (signal?.aborted === true) throw new GatewayError('aborted', 'the charge was abandoned before it started (shutting down)')
      if (request.paymentMethod === undefined || request.paymentMethod === '') {
        throw new GatewayError('not_processed', 'an Adyen payment needs a stored payment method (storedPaymentMethodId); nothing was sent', 'payment_method_missing')
      }
      if (request.shopperReference === undefined || request.shopperReference === '') {
        throw new GatewayError('not_processed', 'an Adyen payment needs the shopper reference its stored payment method belongs to; nothing was sent', 'shopper_reference_missing')
      }
      let value: number
      try {
        value = toAdyenValue(request.amountMinor, request.currency)
      } catch (error) {
        if (error instanceof AmountNotExpressibleError) return { outcome: 'declined', chargeId: '', declineCode: 'invalid_amount' }
        throw error
      }
      const manual = request.captureMethod === 'manual'
      try {
        const payment: Omit<PaymentRequest, 'returnUrl'> = {
          amount: { value, currency: request.currency.toUpperCase() },
          reference: request.paymentId,
          merchantAccount,
          paymentMethod: { type: Types.checkout.CardDetails.TypeEnum.Scheme, storedPaymentMethodId: request.paymentMethod },
          shopperReference: request.shopperReference,
          shopperInteraction: Types.checkout.PaymentRequest.ShopperInteractionEnum.ContAuth,
          recurringProcessingModel: Types.checkout.PaymentRequest.RecurringProcessingModelEnum.UnscheduledCardOnFile,
          // Manual capture for this payment only (whatever the account's default); automatic: captured at once.
          ...(manual ? { additionalData: { manualCapture: 'true' } } : { captureDelayHours: 0 })
        }
        // The library's type asks for a returnUrl; a card-on-file payment without a shopper is never redirected.
        const response = await inCall(signal, async () => await checkout.PaymentsApi.payments(payment as PaymentRequest, keyed(request.idempotencyKey)))
        return chargeResultOf(response, manual)
      } catch (error) {
        const answer = validationAnswer(error)
        if (answer !== undefined) return { outcome: 'declined', chargeId: '', declineCode: answer.errorCode }
        throw adyenGatewayError(error)
      }
    },

    async capture (request, { signal } = {}) {
      if (request.chargeReference === undefined) return { outcome: 'failed', failureCode: 'authorization_not_found' }
      try {
        const amount = { value: toAdyenValue(request.amountMinor, request.currency), currency: request.currency.toUpperCase() }
        const reference = request.chargeReference
        const response = await inCall(signal, async () => await checkout.ModificationsApi.captureAuthorisedPayment(reference,
          { merchantAccount, amount, reference: request.idempotencyKey }, keyed(request.idempotencyKey)))
        return { outcome: 'received', captureId: modificationReference(response.pspReference) }
      } catch (error) {
        if (error instanceof AmountNotExpressibleError) return { outcome: 'failed', failureCode: 'invalid_amount' }
        const answer = validationAnswer(error)
        if (answer !== undefined) return { outcome: 'failed', failureCode: answer.errorCode }
        throw adyenGatewayError(error)
      }
    },

    async refund (request, { signal } = {}) {
      if (request.chargeReference === undefined) return { outcome: 'failed', gatewayRefundId: '', failureCode: 'charge_not_found' }
      try {
        const amount = { value: toAdyenValue(request.amountMinor, request.currency), currency: request.currency.toUpperCase() }
        const reference = request.chargeReference
        const response = await inCall(signal, async () => await checkout.ModificationsApi.refundCapturedPayment(reference,
          { merchantAccount, amount, reference: request.refundId ?? request.idempotencyKey }, keyed(request.idempotencyKey)))
        return { outcome: 'received', gatewayRefundId: modificationReference(response.pspReference) }
      } catch (error) {
        if (error instanceof AmountNotExpressibleError) return { outcome: 'failed', gatewayRefundId: '', failureCode: 'invalid_amount' }
        const answer = validationAnswer(error)
        if (answer !== undefined) return { outcome: 'failed', gatewayRefundId: '', failureCode: answer.errorCode }
        throw adyenGatewayError(error)
      }
    },

    async void (request, { signal } = {}) {
      const key = keyed(`${request.chargeIdempotencyKey}:void`)
      const reference = request.paymentId ?? request.chargeIdempotencyKey
      try {
        if (request.chargeReference !== undefined) {
          const pspReference = request.chargeReference
          await inCall(signal, async () => await checkout.ModificationsApi.cancelAuthorisedPaymentByPspReference(pspReference, { merchantAccount, reference }, key))
        } else if (request.paymentId !== undefined) {
          // The payment's pspReference was never recorded (an unknown outcome): cancel it by our reference.
          const paymentReference = request.paymentId
          await inCall(signal, async () => await checkout.ModificationsApi.cancelAuthorisedPayment({ merchantAccount, paymentReference, reference }, key))
        } else {
          throw new GatewayError('unavailable', 'the charge has neither a reference nor a payment id to find it by', 'charge_not_identifiable')
        }
        return { outcome: 'received' }
      } catch (error) {
        throw adyenGatewayError(error)
      }
    },

    async retrieve () {
      throw new GatewayError('unavailable', 'Adyen\'s Checkout API has no read of a payment: its state comes from notifications', 'retrieve_not_supported')
    },

    async acceptDispute (request, { signal } = {}) {
      try {
        const response = await inCall(signal, async () => await disputes.DisputesApi.acceptDispute({ disputePspReference: request.disputeReference, merchantAccountCode: merchantAccount },
          keyed(request.idempotencyKey)))
        const result = response.disputeServiceResult
        // Adyen answers 200 with success false when it will not (a dispute already accepted, defended or closed).
        if (result?.success === true) return { outcome: 'accepted' }
        return { outcome: 'refused', reason: (result?.errorMessage ?? '').slice(0, 200) || 'not_accepted' }
      } catch (error) {
        const answer = validationAnswer(error)
        if (answer !== undefined) return { outcome: 'refused', reason: answer.errorCode }
        throw adyenGatewayError(error)
      }
    }
  }
}

function modificationReference (pspReference: string | undefined): string {
  if (pspReference === undefined || pspReference === '') throw new GatewayError('unavailable', 'Adyen accepted the request without a pspReference', 'reference_missing')
  return pspReference
}

/**
 * What a /payments answer says of the card: paymentMethod.brand (or additionalData.paymentMethod) and the
 * additionalData the account returns (cardSummary, expiryDate "M/YYYY", cardIssuingCountry); never the BIN or holder.
 */
export function paymentMethodDetailsOfResponse (response: PaymentResponse): PaymentMethodDetails | undefined {
  const data = response.additionalData ?? {}
  const type = response.paymentMethod?.type ?? (data.cardSummary !== undefined ? 'scheme' : undefined)
  if (type === undefined) return undefined
  const [month, year] = (data.expiryDate ?? '').split('/')
  return paymentMethodDetailsOf({
    type: type === 'scheme' ? 'card' : type,
    card: { brand: response.paymentMethod?.brand ?? data.paymentMethod, last4: data.cardSummary, expMonth: month, expYear: year, country: data.cardIssuingCountry ?? data.issuerCountry }
  })
}

/** Adyen's resultCode of a /payments answer as our outcome (with what it says of the card); chargeId is the payment's pspReference. */
export function chargeResultOf (response: PaymentResponse, manual: boolean): ChargeResult {
  const details = paymentMethodDetailsOfResponse(response)
  const result = chargeOutcomeOf(response, manual)
  return details === undefined ? result : { ...result, paymentMethodDetails: details }
}

function chargeOutcomeOf (response: PaymentResponse, manual: boolean): ChargeResult {
  const chargeId = response.pspReference ?? ''
  switch (response.resultCode) {
    case ResultCode.Authorised:
      return { outcome: manual ? 'authorized' : 'succeeded', chargeId: modificationReference(response.pspReference) }
    case ResultCode.Refused:
    case ResultCode.Error:
      return { outcome: 'declined', chargeId, declineCode: response.refusalReasonCode ?? (response.resultCode === ResultCode.Refused ? 'refused' : 'error') }
    case ResultCode.Cancelled:
      return { outcome: 'declined', chargeId, declineCode: 'cancelled' }
    // The shopper must act (3-D Secure, a redirect): nobody is there to, off-session.
    case ResultCode.ChallengeShopper:
    case ResultCode.IdentifyShopper:
    case ResultCode.RedirectShopper:
    case ResultCode.PresentToShopper:
      return { outcome: 'declined', chargeId, declineCode: AUTHENTICATION_REQUIRED }
    case ResultCode.Received:
    case ResultCode.Pending:
      throw new GatewayError('unavailable', `Adyen answered ${response.resultCode}: the outcome comes later`, 'charge_pending')
    default:
      // PartiallyAuthorised (never asked for) and codes /payments does not give: money may be held.
      throw new GatewayError('unavailable', `Adyen answered ${response.resultCode ?? 'no resultCode'}`, 'charge_unexpected_result')
  }
}
