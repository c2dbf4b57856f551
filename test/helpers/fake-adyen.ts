import type { IncomingMessage, ServerResponse } from 'node:http'
import { LocalPsp } from './local-psp'

/**
 * A local server speaking Adyen's documented Checkout API (v72, JSON), for the Adyen connector's tests:
 * `X-API-Key` authentication, merchant accounts, error objects `{ status, errorCode, message, errorType }`,
 * Idempotency-Key replay (per API key, whatever the body, as Adyen keeps keys per company account),
 * stored payment methods by id, /payments, /paymentMethods, and the modifications that Adyen only
 * accepts (`received`): captures, refunds, cancels (by pspReference or by our reference). What a
 * modification will do is decided at once and kept in `modifications`, for the notifications Adyen
 * would send later.
 */

export const FAKE_ADYEN_API_KEY = 'AQEfake_test_api_key'
export const FAKE_ADYEN_MERCHANT = 'TestMerchantECOM'
/** The API version of the library's Checkout paths. */
export const FAKE_ADYEN_VERSION = 'v72'
/** Where the fake serves Adyen's Disputes API: point ADYEN_DISPUTES_URL at `${fake.url}${FAKE_ADYEN_DISPUTES_PATH}`. */
export const FAKE_ADYEN_DISPUTES_PATH = '/ca/services/DisputeService'

/** A request as the server received it. */
export interface RecordedRequest {
  method: string
  path: string
  headers: Record<string, string | undefined>
  body: Record<string, unknown>
}

/**
 * Faults for the next request(s): hangAfterWork does the work and never answers; holdAnswer does it and
 * answers `holdAnswerMs` later; dropAfterWork does it and destroys the socket; status500 answers 500
 * without doing anything (nothing kept under the key); rateLimit429 answers 429 without doing anything;
 * inProgress704 answers 422 errorCode 704 (another request under the key is being processed); invalid167
 * answers 422 errorCode 167 (a validation error: nothing done); holdBeforeWork waits `holdAnswerMs` before doing
 * anything, and does nothing if the caller closed the connection meanwhile (counted in `abandoned`).
 */
export type Fault = 'hangAfterWork' | 'holdAnswer' | 'dropAfterWork' | 'status500' | 'rateLimit429' | 'inProgress704' | 'invalid167' | 'holdBeforeWork'

export interface FakePayment {
  pspReference: string
  merchantReference: string
  merchantAccount: string
  shopperReference: string
  storedPaymentMethodId: string
  amount: { value: number, currency: string }
  resultCode: string
  refusalReasonCode?: string
  manualCapture: boolean
  /** authorised (held), captured, refused, cancelled. */
  status: 'authorised' | 'captured' | 'refused' | 'cancelled' | 'pending'
  capturedValue: number
  refundedValue: number
}

/** A modification Adyen accepted; `success` is what its notification (CAPTURE, REFUND, CANCELLATION, …) will say. */
export interface FakeModification {
  eventCode: 'CAPTURE' | 'REFUND' | 'CANCELLATION'
  pspReference: string
  /** The payment's pspReference (originalReference in the notification); absent for a cancel by our reference that found nothing. */
  originalReference?: string
  merchantReference: string
  amount?: { value: number, currency: string }
  success: boolean
  reason: string
}

interface Answer { status: number, body: unknown }

/**
 * Test encrypted cards of customer-present payments (Web Components' encryptedCardNumber, as the shopper's browser would
 * encrypt them): what /payments answers with each. `test_3ds_*` ask for the shopper (RedirectShopper, a GET or a form POST).
 */
const ENCRYPTED_CARDS: Readonly<Record<string, { resultCode: string, method?: 'GET' | 'POST' }>> = {
  test_encrypted_visa: { resultCode: 'Authorised' },
  test_encrypted_3ds: { resultCode: 'RedirectShopper', method: 'GET' },
  test_encrypted_3ds_post: { resultCode: 'RedirectShopper', method: 'POST' }
}

/** Test stored payment methods: what /payments answers with each (as Adyen's test refusal reasons). */
const STORED_METHODS: Readonly<Record<string, { resultCode: string, refusalReasonCode?: string, refusalReason?: string }>> = {
  stored_visa: { resultCode: 'Authorised' },
  stored_refused: { resultCode: 'Refused', refusalReasonCode: '2', refusalReason: 'Refused' },
  stored_insufficient: { resultCode: 'Refused', refusalReasonCode: '12', refusalReason: 'Not enough balance' },
  stored_3ds: { resultCode: 'RedirectShopper' },
  stored_pending: { resultCode: 'Received' }
}

const error = (status: number, errorCode: string, message: string, errorType: string): Answer =>
  ({ status, body: { status, errorCode, message, errorType } })

export class FakeAdyen extends LocalPsp<Fault> {
  readonly requests: RecordedRequest[] = []
  readonly payments = new Map<string, FakePayment>()
  readonly modifications: FakeModification[] = []
  /** Disputes by pspReference (tests add them): the Disputes API accepts an open one once. */
  readonly disputes = new Map<string, 'open' | 'accepted' | 'closed'>()
  /** The redirectResult Adyen gives the shopper's browser after authentication, and the payment it finishes. */
  readonly redirectResults = new Map<string, string>()
  /** Requests held by holdBeforeWork whose caller closed the connection before the hold ended (nothing was done for them). */
  abandoned = 0
  /** API keys it accepts, and the merchant accounts each may use (others: 403 901). */
  readonly keys = new Map<string, Set<string>>([[FAKE_ADYEN_API_KEY, new Set([FAKE_ADYEN_MERCHANT])]])
  /** The shopper each test stored payment method belongs to (any shopper when absent). */
  readonly owners = new Map<string, string>()
  private readonly saved = new Map<string, Answer>()
  private sequence = 0

  static async start (): Promise<FakeAdyen> {
    return await new FakeAdyen().listen()
  }

  /** The payments made with this reference (our payment id). */
  paymentsOf (merchantReference: string): FakePayment[] {
    return [...this.payments.values()].filter((payment) => payment.merchantReference === merchantReference)
  }

  private nextReference (): string {
    this.sequence += 1
    return `FAKE${String(this.sequence).padStart(12, '0')}`
  }

  protected async handle (req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = ''
    for await (const chunk of req) text += String(chunk)
    const headers: Record<string, string | undefined> = {}
    for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value
    let body: Record<string, unknown> = {}
    try { body = JSON.parse(text === '' ? '{}' : text) as Record<string, unknown> } catch {}
    const request: RecordedRequest = { method: req.method ?? 'GET', path: new URL(req.url ?? '/', 'http://fake').pathname, headers, body }
    this.requests.push(request)
    const fault = this.faults.shift()
    const send = (answer: Answer): void => {
      const key = request.headers['idempotency-key']
      res.writeHead(answer.status, { 'content-type': 'application/json', pspReference: this.nextReference(), ...(key === undefined ? {} : { 'idempotency-key': key }) })
      res.end(JSON.stringify(answer.body))
    }

    const apiKey = request.headers['x-api-key']
    const accounts = apiKey === undefined ? undefined : this.keys.get(apiKey)
    if (accounts === undefined) return send(error(401, '000', 'HTTP Status Response - Unauthorized', 'security'))
    if (fault === 'rateLimit429') return send(error(429, '000', 'Too Many Requests', 'security'))
    if (fault === 'status500') return send({ status: 500, body: { status: 500, errorCode: '905', message: 'Payment details are not supported', errorType: 'configuration' } })
    if (fault === 'inProgress704') return send(error(422, '704', 'request already processed or in progress', 'validation'))
    if (fault === 'invalid167') return send(error(422, '167', 'Original pspReference required for this operation', 'validation'))
    if (request.path.startsWith(FAKE_ADYEN_DISPUTES_PATH)) return send(this.disputeService(request, accounts))
    const isDetails = request.path === `/${FAKE_ADYEN_VERSION}/payments/details`
    if (!isDetails && (typeof body.merchantAccount !== 'string' || !accounts.has(body.merchantAccount))) return send(error(403, '901', 'Invalid Merchant Account', 'security'))
    if (fault === 'holdBeforeWork') {
      await new Promise((resolve) => setTimeout(resolve, this.holdAnswerMs))
      if (req.socket.destroyed) { this.abandoned++; return }
    }

    const idempotencyKey = request.method === 'POST' ? request.headers['idempotency-key'] : undefined
    const savedKey = `${apiKey ?? ''}:${idempotencyKey ?? ''}`
    let answer = idempotencyKey === undefined ? undefined : this.saved.get(savedKey)
    if (answer === undefined) {
      answer = this.route(request)
      if (idempotencyKey !== undefined) this.saved.set(savedKey, answer)
    }
    if (fault === 'hangAfterWork') return
    if (fault === 'holdAnswer') await new Promise((resolve) => setTimeout(resolve, this.holdAnswerMs))
    if (req.socket.destroyed) return
    if (fault === 'dropAfterWork') { req.socket.destroy(); return }
    send(answer)
  }

  /** The Disputes API (its own base URL): acceptDispute of an open dispute; anything else answers success false, as Adyen does. */
  private disputeService (request: RecordedRequest, accounts: Set<string>): Answer {
    const { body } = request
    if (request.method !== 'POST' || request.path !== `${FAKE_ADYEN_DISPUTES_PATH}/v30/acceptDispute`) return error(404, '000', 'Not Found', 'validation')
    if (typeof body.merchantAccountCode !== 'string' || !accounts.has(body.merchantAccountCode)) return error(403, '901', 'Invalid Merchant Account', 'security')
    const reference = typeof body.disputePspReference === 'string' ? body.disputePspReference : ''
    const state = this.disputes.get(reference)
    if (state !== 'open') {
      return { status: 200, body: { disputeServiceResult: { success: false, errorMessage: state === undefined ? 'Could not find dispute' : 'Dispute is already closed' } } }
    }
    this.disputes.set(reference, 'accepted')
    return { status: 200, body: { disputeServiceResult: { success: true } } }
  }

  private route (request: RecordedRequest): Answer {
    const { method, path, body } = request
    const prefix = `/${FAKE_ADYEN_VERSION}`
    if (method !== 'POST' || !path.startsWith(`${prefix}/`)) return error(404, '000', 'Not Found', 'validation')
    const route = path.slice(prefix.length)
    if (route === '/paymentMethods') return { status: 200, body: { paymentMethods: [{ type: 'scheme', name: 'Cards', brands: ['visa', 'mc', 'amex'] }] } }
    if (route === '/payments') return this.pay(body)
    if (route === '/payments/details') return this.details(body)
    if (route === '/cancels') return this.cancelByReference(body)
    const match = /^\/payments\/([^/]+)\/(captures|refunds|cancels)$/.exec(route)
    if (match === null) return error(404, '000', 'Not Found', 'validation')
    const [, pspReference = '', operation] = match
    if (operation === 'captures') return this.capture(pspReference, body)
    if (operation === 'refunds') return this.refund(pspReference, body)
    return this.cancel(pspReference, body)
  }

  private amountOf (body: Record<string, unknown>): { value: number, currency: string } | Answer {
    const amount = body.amount as { value?: unknown, currency?: unknown } | undefined
    if (amount === undefined) return error(422, '100', 'No amount specified', 'validation')
    if (typeof amount.value !== 'number' || !Number.isInteger(amount.value) || amount.value < 0) return error(422, '137', 'Invalid amount specified', 'validation')
    if (typeof amount.currency !== 'string' || !/^[A-Z]{3}$/.test(amount.currency)) return error(422, '138', 'Unsupported currency specified', 'validation')
    return { value: amount.value, currency: amount.currency }
  }

  /**
   * The shopper finishes the authentication Adyen asked for (on Adyen's or the issuer's page): the payment is authorised
   * (captured unless manual) or refused ("3D Not Authenticated", 11). Answers the redirectResult Adyen appends to the
   * payment's returnUrl when it sends the browser back.
   */
  authenticate (pspReference: string, authenticated: boolean): string {
    const payment = this.payments.get(pspReference)
    if (payment?.status !== 'pending') throw new Error(`no payment ${pspReference} waits for its shopper`)
    if (authenticated) {
      payment.resultCode = 'Authorised'
      payment.status = payment.manualCapture ? 'authorised' : 'captured'
      payment.capturedValue = payment.manualCapture ? 0 : payment.amount.value
    } else {
      payment.resultCode = 'Refused'
      payment.refusalReasonCode = '11'
      payment.status = 'refused'
    }
    const redirectResult = `X6XtfGC3!${Buffer.from(`${pspReference}:${this.redirectResults.size}`).toString('base64url')}`
    this.redirectResults.set(redirectResult, pspReference)
    return redirectResult
  }

  /** /payments/details: the outcome of a payment the shopper came back from, by the redirectResult Adyen gave their browser. */
  private details (body: Record<string, unknown>): Answer {
    const details = (body.details ?? {}) as { redirectResult?: unknown }
    const pspReference = typeof details.redirectResult === 'string' ? this.redirectResults.get(details.redirectResult) : undefined
    const payment = pspReference === undefined ? undefined : this.payments.get(pspReference)
    if (payment === undefined) return error(422, '101', 'Invalid redirectResult', 'validation')
    return {
      status: 200,
      body: {
        pspReference: payment.pspReference,
        resultCode: payment.resultCode,
        merchantReference: payment.merchantReference,
        amount: payment.amount,
        ...(payment.resultCode === 'Refused' ? { refusalReason: '3D Not Authenticated', refusalReasonCode: payment.refusalReasonCode } : {}),
        ...(payment.resultCode === 'Authorised' ? { paymentMethod: { brand: 'visa', type: 'scheme' }, additionalData: { cardSummary: '0008', expiryDate: '3/2030', cardIssuingCountry: 'NL' } } : {})
      }
    }
  }

  /** A customer-present card payment (Ecommerce, the Web Components' encrypted fields): authorised, or waiting for the shopper's authentication. */
  private payEcommerce (body: Record<string, unknown>, amount: { value: number, currency: string }, reference: string): Answer {
    const method = body.paymentMethod as { encryptedCardNumber?: unknown } | undefined
    const behaviour = typeof method?.encryptedCardNumber === 'string' ? ENCRYPTED_CARDS[method.encryptedCardNumber] : undefined
    if (behaviour === undefined) return error(422, '174', 'Unable to decrypt data', 'validation')
    if (typeof body.returnUrl !== 'string' || body.returnUrl === '') return error(422, '130', 'Required field \'returnUrl\' is not provided.', 'validation')
    const manualCapture = ((body.additionalData ?? {}) as Record<string, unknown>).manualCapture === 'true'
    const authorised = behaviour.resultCode === 'Authorised'
    const payment: FakePayment = {
      pspReference: this.nextReference(),
      merchantReference: reference,
      merchantAccount: String(body.merchantAccount),
      shopperReference: typeof body.shopperReference === 'string' ? body.shopperReference : '',
      storedPaymentMethodId: '',
      amount,
      resultCode: behaviour.resultCode,
      manualCapture,
      status: authorised ? (manualCapture ? 'authorised' : 'captured') : 'pending',
      capturedValue: authorised && !manualCapture ? amount.value : 0,
      refundedValue: 0
    }
    this.payments.set(payment.pspReference, payment)
    const url = `${this.url}/threeds2/redirect?psp=${payment.pspReference}`
    return {
      status: 200,
      body: {
        pspReference: payment.pspReference,
        resultCode: behaviour.resultCode,
        merchantReference: reference,
        amount,
        ...(authorised ? { paymentMethod: { brand: 'visa', type: 'scheme' }, additionalData: { cardSummary: '0008', expiryDate: '3/2030', cardIssuingCountry: 'NL' } } : {}),
        ...(behaviour.method === 'GET' ? { action: { type: 'redirect', method: 'GET', url, paymentMethodType: 'scheme' } } : {}),
        ...(behaviour.method === 'POST' ? { action: { type: 'redirect', method: 'POST', url, data: { MD: `md-${payment.pspReference}`, PaReq: 'BQABAgA…', TermUrl: body.returnUrl }, paymentMethodType: 'scheme' } } : {})
      }
    }
  }

  private pay (body: Record<string, unknown>): Answer {
    const amount = this.amountOf(body)
    if ('status' in amount) return amount
    if (typeof body.reference !== 'string' || body.reference === '') return error(422, '130', 'Required field \'reference\' is not provided.', 'validation')
    if (body.shopperInteraction === 'Ecommerce' && typeof (body.paymentMethod as { encryptedCardNumber?: unknown } | undefined)?.encryptedCardNumber === 'string') {
      return this.payEcommerce(body, amount, body.reference)
    }
    const method = body.paymentMethod as { type?: unknown, storedPaymentMethodId?: unknown } | undefined
    const storedId = typeof method?.storedPaymentMethodId === 'string' ? method.storedPaymentMethodId : ''
    const shopperReference = typeof body.shopperReference === 'string' ? body.shopperReference : ''
    const behaviour = STORED_METHODS[storedId]
    const owner = this.owners.get(storedId)
    if (behaviour === undefined || shopperReference === '' || (owner !== undefined && owner !== shopperReference)) {
      return error(422, '803', 'PaymentDetail not found', 'validation')
    }
    const additional = (body.additionalData ?? {}) as Record<string, unknown>
    const manualCapture = additional.manualCapture === 'true'
    const payment: FakePayment = {
      pspReference: this.nextReference(),
      merchantReference: body.reference,
      merchantAccount: String(body.merchantAccount),
      shopperReference,
      storedPaymentMethodId: storedId,
      amount,
      resultCode: behaviour.resultCode,
      ...(behaviour.refusalReasonCode === undefined ? {} : { refusalReasonCode: behaviour.refusalReasonCode }),
      manualCapture,
      status: behaviour.resultCode === 'Authorised' ? (manualCapture ? 'authorised' : 'captured') : behaviour.resultCode === 'Refused' ? 'refused' : 'pending',
      capturedValue: behaviour.resultCode === 'Authorised' && !manualCapture ? amount.value : 0,
      refundedValue: 0
    }
    this.payments.set(payment.pspReference, payment)
    return {
      status: 200,
      body: {
        pspReference: payment.pspReference,
        resultCode: behaviour.resultCode,
        merchantReference: payment.merchantReference,
        amount,
        ...(behaviour.refusalReasonCode === undefined ? {} : { refusalReason: behaviour.refusalReason, refusalReasonCode: behaviour.refusalReasonCode }),
        // An authorisation as a test account configured to return card details answers it (with the BIN and holder name a payment must never keep).
        ...(behaviour.resultCode === 'Authorised'
          ? {
              paymentMethod: { brand: 'visa', type: 'scheme' },
              additionalData: { cardSummary: '1111', expiryDate: '3/2030', cardIssuingCountry: 'NL', cardBin: '411111', cardHolderName: 'J. Smith', paymentMethod: 'visa' }
            }
          : {}),
        ...(behaviour.resultCode === 'RedirectShopper' ? { action: { type: 'redirect', method: 'GET', url: 'https://checkoutshopper-test.adyen.com/redirect', paymentMethodType: 'scheme' } } : {})
      }
    }
  }

  private received (eventCode: FakeModification['eventCode'], payment: FakePayment | undefined, body: Record<string, unknown>, modification: Omit<FakeModification, 'eventCode' | 'pspReference' | 'merchantReference'>): Answer {
    const pspReference = this.nextReference()
    this.modifications.push({ eventCode, pspReference, merchantReference: typeof body.reference === 'string' ? body.reference : '', ...modification })
    return {
      status: 201,
      body: {
        merchantAccount: body.merchantAccount,
        ...(payment === undefined ? {} : { paymentPspReference: payment.pspReference }),
        pspReference,
        ...(body.reference === undefined ? {} : { reference: body.reference }),
        ...(body.amount === undefined ? {} : { amount: body.amount }),
        ...(body.paymentReference === undefined ? {} : { paymentReference: body.paymentReference }),
        status: 'received'
      }
    }
  }

  private capture (pspReference: string, body: Record<string, unknown>): Answer {
    const amount = this.amountOf(body)
    if ('status' in amount) return amount
    const payment = this.payments.get(pspReference)
    const failure = payment === undefined
      ? 'Original pspReference not found'
      : payment.status !== 'authorised'
        ? `Payment is ${payment.status}`
        : amount.currency !== payment.amount.currency || amount.value > payment.amount.value ? 'Invalid amount' : undefined
    if (payment !== undefined && failure === undefined) {
      payment.status = 'captured'
      payment.capturedValue = amount.value
    }
    return this.received('CAPTURE', payment, body, { originalReference: pspReference, amount, success: failure === undefined, reason: failure ?? '' })
  }

  private refund (pspReference: string, body: Record<string, unknown>): Answer {
    const amount = this.amountOf(body)
    if ('status' in amount) return amount
    const payment = this.payments.get(pspReference)
    const failure = payment === undefined
      ? 'Original pspReference not found'
      : payment.status !== 'captured'
        ? `Payment is ${payment.status}`
        : amount.currency !== payment.amount.currency || amount.value > payment.capturedValue - payment.refundedValue ? 'Amount exceeds the captured amount' : undefined
    if (payment !== undefined && failure === undefined) payment.refundedValue += amount.value
    return this.received('REFUND', payment, body, { originalReference: pspReference, amount, success: failure === undefined, reason: failure ?? '' })
  }

  private cancel (pspReference: string, body: Record<string, unknown>): Answer {
    const payment = this.payments.get(pspReference)
    return this.cancelPayment(payment, body, pspReference)
  }

  private cancelByReference (body: Record<string, unknown>): Answer {
    if (typeof body.paymentReference !== 'string' || body.paymentReference === '') return error(422, '000', 'Required field \'paymentReference\' is not provided.', 'validation')
    const [payment] = this.paymentsOf(body.paymentReference)
    return this.cancelPayment(payment, body, payment?.pspReference)
  }

  private cancelPayment (payment: FakePayment | undefined, body: Record<string, unknown>, originalReference: string | undefined): Answer {
    // An authorisation, or a payment still waiting for its shopper's authentication, can be canceled.
    const failure = payment === undefined ? undefined : payment.status === 'authorised' || payment.status === 'cancelled' || payment.status === 'pending' ? undefined : `Payment is ${payment.status}`
    if (payment !== undefined && failure === undefined) payment.status = 'cancelled'
    return this.received('CANCELLATION', payment, body, { ...(originalReference === undefined ? {} : { originalReference }), success: failure === undefined, reason: failure ?? '' })
  }
}
