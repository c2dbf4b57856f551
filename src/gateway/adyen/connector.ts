import { createHash } from 'node:crypto'
import { CheckoutAPI, Client, Config, DisputesAPI, EnvironmentEnum, HttpClientException, Types } from '@adyen/api-library'
import { CredentialsRefusedError, type Connector, type ConnectorCredentials } from '../connector'
import { AmountNotExpressibleError, toAdyenValue } from './amounts'
import { adyenGatewayError, validationAnswer } from './errors'
import { adyenTransport } from './transport'
import { inCall } from '../call'
import { paymentMethodDetailsOf, type PaymentMethodDetails } from '../../domain/customers'
import { AUTHENTICATION_REQUIRED } from '../stripe/connector'
import { GatewayError, type ChargeRequest, type ChargeResult, type ChargeState, type PaymentGateway } from '../types'
import type { NextAction } from '../../domain/payments'

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
  /**
   * A customer-present payment (issue 37): shopperInteraction Ecommerce on the Web channel with our return address,
   * the Web Components' paymentMethod object (or a stored card of the shopper's), browserInfo and origin when given.
   * Adyen redirects 3-D Secure by default (no native 3DS asked for): RedirectShopper → requires_action.
   */
  async function chargeCustomerPresent (request: ChargeRequest, returnUrl: string, signal: AbortSignal | undefined): Promise<ChargeResult> {
    const stored = request.paymentMethod
    const method = request.checkout?.paymentMethod
    if (method === undefined && (stored === undefined || stored === '' || request.shopperReference === undefined)) {
      throw new GatewayError('not_processed', 'a customer-present Adyen payment needs the Web Components\' paymentMethod, or a stored payment method and its shopper; nothing was sent',
        'payment_method_missing')
    }
    let value: number
    try {
      value = toAdyenValue(request.amountMinor, request.currency)
    } catch (error) {
      if (error instanceof AmountNotExpressibleError) return { outcome: 'declined', chargeId: '', declineCode: 'invalid_amount' }
      throw error
    }
    const manual = request.captureMethod === 'manual'
    const payment = {
      amount: { value, currency: request.currency.toUpperCase() },
      reference: request.paymentId,
      merchantAccount,
      returnUrl,
      channel: Types.checkout.PaymentRequest.ChannelEnum.Web,
      shopperInteraction: Types.checkout.PaymentRequest.ShopperInteractionEnum.Ecommerce,
      paymentMethod: method ?? { type: Types.checkout.CardDetails.TypeEnum.Scheme, storedPaymentMethodId: stored },
      ...(method === undefined ? { recurringProcessingModel: Types.checkout.PaymentRequest.RecurringProcessingModelEnum.CardOnFile } : {}),
      ...(request.shopperReference !== undefined ? { shopperReference: request.shopperReference } : {}),
      ...(request.checkout?.browserInfo !== undefined ? { browserInfo: request.checkout.browserInfo } : {}),
      ...(request.checkout?.origin !== undefined ? { origin: request.checkout.origin } : {}),
      ...(manual ? { additionalData: { manualCapture: 'true' } } : { captureDelayHours: 0 })
    } as unknown as PaymentRequest
    try {
      const response = await inCall(signal, async () => await checkout.PaymentsApi.payments(payment, keyed(request.idempotencyKey)))
      if (response.resultCode === ResultCode.RedirectShopper || response.resultCode === ResultCode.ChallengeShopper || response.resultCode === ResultCode.IdentifyShopper) {
        const nextAction = nextActionOf(response.action)
        // An action only Adyen's own scripts can perform: the payment cannot go on here (it expires at Adyen, nothing is taken).
        if (nextAction === undefined) return { outcome: 'declined', chargeId: response.pspReference ?? '', declineCode: AUTHENTICATION_REQUIRED }
        return { outcome: 'requires_action', chargeId: response.pspReference ?? '', nextAction }
      }
      return chargeResultOf(response, manual)
    } catch (error) {
      const answer = validationAnswer(error)
      if (answer !== undefined) return { outcome: 'declined', chargeId: '', declineCode: answer.errorCode }
      throw adyenGatewayError(error)
    }
  }

  return {
    async charge (request, { signal } = {}) {
      if (signal?.aborted === true) throw new GatewayError('aborted', 'the charge was abandoned before it started (shutting down)')
      if (request.returnUrl !== undefined) return await chargeCustomerPresent(request, request.returnUrl, signal)
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
        if (request.chargeReference !== undefined && request.chargeReference !== '') {
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

    async retrieve (request, { signal } = {}) {
      const redirectResult = request.returnParams?.redirectResult
      if (redirectResult === undefined || redirectResult === '') {
        throw new GatewayError('unavailable', 'Adyen\'s Checkout API has no read of a payment: its state comes from notifications', 'retrieve_not_supported')
      }
      // The shopper came back from Adyen's redirect: /payments/details with what Adyen sent along (never trusted as the outcome
      // itself), under a key derived from the payment and that redirectResult: a reload or a lost answer replays Adyen's first
      // answer, and a forged redirectResult's refusal is never replayed to the real one.
      try {
        const response = await inCall(signal, async () => await checkout.PaymentsApi.paymentsDetails({ details: { redirectResult } }, keyed(`${request.chargeIdempotencyKey}:rr-${createHash('sha256').update(redirectResult).digest('base64url').slice(0, 12)}`)))
        const state = chargeStateOfDetails(response, request.captureMethod === 'manual', request.amountMinor ?? 0)
        const details = paymentMethodDetailsOfResponse(response)
        return details === undefined || (state.state !== 'captured' && state.state !== 'authorized') ? state : { ...state, paymentMethodDetails: details }
      } catch (error) {
        if (error instanceof GatewayError) throw error
        const answer = validationAnswer(error)
        // Adyen refused the redirectResult (tampered, another payment's, expired): nothing is learned; the payment keeps waiting.
        if (answer !== undefined) throw new GatewayError('unavailable', `Adyen refused the return's details (${answer.errorCode})`, 'details_refused')
        throw adyenGatewayError(error)
      }
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

/** The shopper's authentication was not completed (refused by the issuer, canceled by the shopper): `authentication_failed`. */
const AUTHENTICATION_FAILED = 'authentication_failed'

/** Adyen's refusalReasonCode of "3D Not Authenticated". */
const NOT_AUTHENTICATED_REASON = '11'

/**
 * What /payments/details says after the shopper's redirect: Authorised (captured at once unless manual), Refused or
 * Cancelled (declined: `authentication_failed` when the authentication was the cause), or still waiting.
 */
export function chargeStateOfDetails (response: Types.checkout.PaymentDetailsResponse, manual: boolean, amountMinor: number): ChargeState {
  const chargeId = response.pspReference ?? ''
  const Code = Types.checkout.PaymentDetailsResponse.ResultCodeEnum
  switch (response.resultCode) {
    case Code.Authorised:
      return manual ? { state: 'authorized', chargeId: modificationReference(response.pspReference), amountMinor } : { state: 'captured', chargeId: modificationReference(response.pspReference), amountCapturedMinor: amountMinor }
    case Code.Refused:
      return { state: 'declined', chargeId, declineCode: response.refusalReasonCode === NOT_AUTHENTICATED_REASON ? AUTHENTICATION_FAILED : response.refusalReasonCode ?? 'refused' }
    case Code.Cancelled:
    case Code.Error:
      return { state: 'declined', chargeId, declineCode: AUTHENTICATION_FAILED }
    default:
      // Received, Pending, another action: the outcome comes later (Adyen's AUTHORISATION notification).
      return { state: 'requires_action', chargeId }
  }
}

/** Adyen's redirect action as our nextAction; undefined for an action the merchant's page cannot follow by itself (native 3-D Secure 2, an SDK). */
export function nextActionOf (action: PaymentResponse['action']): NextAction | undefined {
  if (action?.type !== 'redirect') return undefined
  const redirect = action as Types.checkout.CheckoutRedirectAction
  if (redirect.url === undefined || redirect.url === '') return undefined
  const method = (redirect.method ?? 'GET').toUpperCase() === 'POST' ? 'POST' : 'GET'
  return { type: 'redirect', url: redirect.url, method, ...(redirect.data !== undefined && method === 'POST' ? { data: { ...redirect.data } } : {}) }
}

function modificationReference (pspReference: string | undefined): string {
  if (pspReference === undefined || pspReference === '') throw new GatewayError('unavailable', 'Adyen accepted the request without a pspReference', 'reference_missing')
  return pspReference
}

/**
 * What a /payments answer says of the card: paymentMethod.brand (or additionalData.paymentMethod) and the
 * additionalData the account returns (cardSummary, expiryDate "M/YYYY", cardIssuingCountry); never the BIN or holder.
 */
export function paymentMethodDetailsOfResponse (response: PaymentResponse | Types.checkout.PaymentDetailsResponse): PaymentMethodDetails | undefined {
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
