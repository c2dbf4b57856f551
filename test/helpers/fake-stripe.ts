import type { IncomingMessage, ServerResponse } from 'node:http'
import { LocalPsp } from './local-psp'

/**
 * A local server speaking Stripe's documented wire format, for the Stripe connector's tests: form-encoded
 * bodies (nested `metadata[payment_id]`), Bearer keys, error objects, Idempotency-Key replay, the test
 * payment methods, PaymentIntents (create, retrieve, capture, cancel, search), refunds and the balance.
 */

/** A request as the server received it. */
export interface RecordedRequest {
  method: string
  path: string
  query: Record<string, string>
  headers: Record<string, string | undefined>
  body: Record<string, unknown>
}

/**
 * Faults for the next request(s): hangAfterWork does the work and never answers; holdAnswer does it and
 * answers only `holdAnswerMs` later (a window in which the caller can be killed after Stripe did the
 * work); dropAfterWork does it and destroys the socket; status500 answers 500 without doing anything (and
 * saves nothing under the key); rateLimit429 answers 429 without doing anything; refundPending makes a
 * refund that stays pending; holdBeforeWork waits `holdAnswerMs` before doing anything, and does nothing if
 * the caller closed the connection meanwhile.
 */
export type Fault = 'hangAfterWork' | 'holdAnswer' | 'dropAfterWork' | 'status500' | 'rateLimit429' | 'refundPending' | 'holdBeforeWork'

interface Intent {
  id: string
  object: 'payment_intent'
  amount: number
  amount_capturable: number
  amount_received: number
  currency: string
  status: string
  capture_method: string
  confirmation_method: 'automatic'
  payment_method: string | null
  latest_charge: string | null
  last_payment_error: Record<string, string> | null
  cancellation_reason: string | null
  next_action?: { type: 'redirect_to_url', redirect_to_url: { url: string, return_url: string } } | null
  metadata: Record<string, string>
  livemode: false
  created: number
}

interface Answer { status: number, body: unknown }

/** Declining test payment methods (docs.stripe.com/testing) and their errors. */
const DECLINES: Readonly<Record<string, { code: string, decline_code: string }>> = {
  pm_card_chargeDeclined: { code: 'card_declined', decline_code: 'generic_decline' },
  pm_card_chargeDeclinedInsufficientFunds: { code: 'card_declined', decline_code: 'insufficient_funds' }
}

const error = (status: number, type: string, message: string, extra: Record<string, unknown> = {}): Answer =>
  ({ status, body: { error: { type, message, ...extra } } })

/** The `expand[n]` members of a GET's query (stripe-node sends a list as `expand[0]=…`). */
function expandsOf (query: Record<string, string>): string[] {
  return Object.entries(query).filter(([key]) => /^expand\[\d*\]$/.test(key)).map(([, value]) => value)
}

/**
 * The intent with its charge expanded (`expand[]=latest_charge`): the payment_method_details Stripe's test cards carry
 * (and members a payment must never keep: the fingerprint, the funding, the network, the checks). No charge yet: as it is.
 */
function withCharge (intent: Intent): Intent {
  if (intent.latest_charge === null || typeof intent.latest_charge !== 'string') return intent
  const card = { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2034, country: 'US', fingerprint: 'Xt5EWLLDS7FJjR1c', funding: 'credit', network: 'visa', checks: { cvc_check: 'pass' } }
  return { ...intent, latest_charge: { id: intent.latest_charge, object: 'charge', payment_method_details: { type: 'card', card } } } as unknown as Intent
}

/** Parses `a=1&metadata[payment_id]=x` into { a: '1', metadata: { payment_id: 'x' } } (one level, as the connector sends). */
function parseForm (text: string): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const nested = /^([^[]+)\[([^\]]*)\]$/.exec(key)
    if (nested === null) { result[key] = value; continue }
    const [, outer = '', inner = ''] = nested
    const object = (result[outer] ?? {}) as Record<string, string>
    object[inner] = value
    result[outer] = object
  }
  return result
}

export class FakeStripe extends LocalPsp<Fault> {
  readonly requests: RecordedRequest[] = []
  readonly intents = new Map<string, Intent>()
  readonly refunds = new Map<string, Record<string, unknown>>()
  /** Disputes by id (tests add them as Stripe would hold them); closing one marks it `lost`, as Stripe does. */
  readonly disputes = new Map<string, Record<string, unknown>>()
  /** Secret keys it accepts; others get 401. Keys in `restrictedKeys` get 403 on the balance. */
  readonly keys = new Set<string>(['sk_test_fake'])
  readonly restrictedKeys = new Set<string>()
  private readonly saved = new Map<string, { fingerprint: string, answer: Answer }>()
  private sequence = 0

  static async start (): Promise<FakeStripe> {
    return await new FakeStripe().listen()
  }

  /** The PaymentIntents whose metadata carries this payment id. */
  intentsOf (paymentId: string): Intent[] {
    return [...this.intents.values()].filter((intent) => intent.metadata.payment_id === paymentId)
  }

  private nextId (prefix: string): string {
    this.sequence += 1
    return `${prefix}_fake${String(this.sequence).padStart(6, '0')}`
  }

  protected async handle (req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = ''
    for await (const chunk of req) text += String(chunk)
    const url = new URL(req.url ?? '/', 'http://fake')
    const headers: Record<string, string | undefined> = {}
    for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body: parseForm(text)
    }
    this.requests.push(request)
    const fault = this.faults.shift()
    const send = (answer: Answer, replayed = false): void => {
      res.writeHead(answer.status, {
        'content-type': 'application/json',
        'request-id': this.nextId('req'),
        ...(request.headers['idempotency-key'] === undefined ? {} : { 'idempotency-key': request.headers['idempotency-key'] }),
        ...(replayed ? { 'idempotent-replayed': 'true' } : {})
      })
      res.end(JSON.stringify(answer.body))
    }

    const key = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
    if (key === undefined || !this.keys.has(key)) {
      return send(error(401, 'invalid_request_error', 'Invalid API Key provided'))
    }
    if (fault === 'rateLimit429') return send(error(429, 'invalid_request_error', 'Too many requests hit the API too quickly.', { code: 'rate_limit' }))
    if (fault === 'status500') return send(error(500, 'api_error', 'An unknown error occurred'))

    if (fault === 'holdBeforeWork') {
      await new Promise((resolve) => setTimeout(resolve, this.holdAnswerMs))
      if (req.socket.destroyed) return
    }
    const idempotencyKey = request.method === 'POST' ? request.headers['idempotency-key'] : undefined
    let answer: Answer
    let replayed = false
    const fingerprint = `${request.method} ${request.path} ${text}`
    const previous = idempotencyKey === undefined ? undefined : this.saved.get(`${key}:${idempotencyKey}`)
    if (previous !== undefined) {
      answer = previous.fingerprint === fingerprint
        ? previous.answer
        : error(400, 'idempotency_error', `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey ?? ''}' if you meant to execute a different request.`)
      replayed = previous.fingerprint === fingerprint
    } else {
      answer = this.route(request, fault === 'refundPending', key)
      if (idempotencyKey !== undefined) this.saved.set(`${key}:${idempotencyKey}`, { fingerprint, answer })
    }
    if (fault === 'hangAfterWork') return
    if (fault === 'holdAnswer') await new Promise((resolve) => setTimeout(resolve, this.holdAnswerMs))
    if (req.socket.destroyed) return
    if (fault === 'dropAfterWork') { req.socket.destroy(); return }
    send(answer, replayed)
  }

  private route (request: RecordedRequest, refundPending: boolean, key: string): Answer {
    const { method, path } = request
    if (method === 'GET' && path === '/v1/balance') {
      if (this.restrictedKeys.has(key)) return error(403, 'invalid_request_error', 'The provided key does not have the required permissions for this endpoint.')
      return { status: 200, body: { object: 'balance', available: [{ amount: 0, currency: 'usd' }], pending: [{ amount: 0, currency: 'usd' }], livemode: false } }
    }
    if (method === 'POST' && path === '/v1/payment_intents') return this.expanded(this.createIntent(request.body), request.body)
    if (method === 'GET' && path === '/v1/payment_intents/search') return this.search(request.query.query ?? '', expandsOf(request.query).includes('data.latest_charge'))
    if (method === 'POST' && path === '/v1/refunds') return this.createRefund(request.body, refundPending)
    const close = /^\/v1\/disputes\/([^/]+)\/close$/.exec(path)
    if (method === 'POST' && close !== null) return this.closeDispute(close[1] ?? '')
    const match = /^\/v1\/payment_intents\/([^/]+)(?:\/(capture|cancel))?$/.exec(path)
    const intent = match === null ? undefined : this.intents.get(match[1] ?? '')
    if (match === null) return error(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`)
    if (intent === undefined) return error(404, 'invalid_request_error', `No such payment_intent: '${match[1] ?? ''}'`, { code: 'resource_missing', param: 'intent' })
    if (method === 'GET' && match[2] === undefined) return { status: 200, body: expandsOf(request.query).includes('latest_charge') ? withCharge(intent) : intent }
    if (method === 'POST' && match[2] === 'capture') return this.capture(intent, request.body)
    if (method === 'POST' && match[2] === 'cancel') return this.cancel(intent)
    return error(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`)
  }

  /** POST /v1/disputes/{id}/close: Stripe's way to accept a dispute (it becomes `lost`); a closed one cannot be closed again. */
  private closeDispute (id: string): Answer {
    const dispute = this.disputes.get(id)
    if (dispute === undefined) return error(404, 'invalid_request_error', `No such dispute: '${id}'`, { code: 'resource_missing', param: 'dispute' })
    if (dispute.status === 'won' || dispute.status === 'lost' || dispute.status === 'warning_closed') {
      return error(400, 'invalid_request_error', 'This dispute is already closed.', { code: 'dispute_already_closed' })
    }
    dispute.status = 'lost'
    return { status: 200, body: dispute }
  }

  /** A create's `expand[]=latest_charge`: the intent's charge as an object (withCharge). */
  private expanded (answer: Answer, body: Record<string, unknown>): Answer {
    if (answer.status !== 200 || !Object.values((body.expand ?? {}) as Record<string, string>).includes('latest_charge')) return answer
    return { status: 200, body: withCharge(answer.body as Intent) }
  }

  /**
   * The shopper finishes (or fails) 3-D Secure on Stripe's page for a customer-present PaymentIntent, as Stripe's
   * test card pm_card_authenticationRequired does when "Complete" or "Fail" is chosen. Returns the PaymentIntent.
   */
  authenticate (intentId: string, succeed: boolean): Intent {
    const intent = this.intents.get(intentId)
    if (intent?.status !== 'requires_action' || intent.next_action == null) throw new Error(`no PaymentIntent ${intentId} waits for authentication`)
    intent.next_action = null
    if (!succeed) {
      intent.status = 'requires_payment_method'
      intent.last_payment_error = { type: 'invalid_request_error', code: 'payment_intent_authentication_failure', message: 'The provided PaymentMethod has failed authentication.' }
      return intent
    }
    intent.latest_charge = this.nextId('ch')
    if (intent.capture_method === 'manual') {
      intent.status = 'requires_capture'
      intent.amount_capturable = intent.amount
    } else {
      intent.status = 'succeeded'
      intent.amount_received = intent.amount
    }
    return intent
  }

  private createIntent (body: Record<string, unknown>): Answer {
    const amount = Number(body.amount)
    if (!Number.isInteger(amount) || amount < 1) return error(400, 'invalid_request_error', 'Invalid integer', { code: 'parameter_invalid_integer', param: 'amount' })
    if (typeof body.currency !== 'string' || body.currency !== body.currency.toLowerCase()) return error(400, 'invalid_request_error', 'Invalid currency', { param: 'currency' })
    const paymentMethod = typeof body.payment_method === 'string' ? body.payment_method : null
    const known = paymentMethod === 'pm_card_visa' || paymentMethod === 'pm_card_authenticationRequired' || (paymentMethod !== null && paymentMethod in DECLINES)
    if (paymentMethod !== null && !known) return error(400, 'invalid_request_error', `No such PaymentMethod: '${paymentMethod}'`, { code: 'resource_missing', param: 'payment_method' })
    const captureMethod = typeof body.capture_method === 'string' ? body.capture_method : 'automatic_async'
    const intent: Intent = {
      id: this.nextId('pi'),
      object: 'payment_intent',
      amount,
      amount_capturable: 0,
      amount_received: 0,
      currency: body.currency,
      status: 'requires_payment_method',
      capture_method: captureMethod,
      confirmation_method: 'automatic',
      payment_method: paymentMethod,
      latest_charge: null,
      last_payment_error: null,
      cancellation_reason: null,
      next_action: null,
      metadata: (body.metadata ?? {}) as Record<string, string>,
      livemode: false,
      created: Math.floor(Date.now() / 1000)
    }
    this.intents.set(intent.id, intent)
    if (body.confirm !== 'true' || paymentMethod === null) return { status: 200, body: intent }
    const decline = DECLINES[paymentMethod]
    if (decline !== undefined) {
      intent.latest_charge = this.nextId('ch')
      intent.last_payment_error = { type: 'card_error', ...decline, message: 'Your card was declined.' }
      return error(402, 'card_error', 'Your card was declined.', { ...decline, charge: intent.latest_charge, payment_intent: intent })
    }
    if (paymentMethod === 'pm_card_authenticationRequired') {
      intent.status = 'requires_action'
      // On-session (a return_url): 3-D Secure through Stripe's hosted page, whose outcome authenticate() decides.
      if (typeof body.return_url === 'string') {
        intent.next_action = { type: 'redirect_to_url', redirect_to_url: { url: `${this.url}/3ds2/${intent.id}`, return_url: body.return_url } }
      }
      return { status: 200, body: intent }
    }
    intent.latest_charge = this.nextId('ch')
    if (captureMethod === 'manual') {
      intent.status = 'requires_capture'
      intent.amount_capturable = amount
    } else {
      intent.status = 'succeeded'
      intent.amount_received = amount
    }
    return { status: 200, body: intent }
  }

  private capture (intent: Intent, body: Record<string, unknown>): Answer {
    if (intent.status !== 'requires_capture') {
      return error(400, 'invalid_request_error', `This PaymentIntent could not be captured because it has a status of ${intent.status}.`, { code: 'payment_intent_unexpected_state', payment_intent: intent })
    }
    const amount = body.amount_to_capture === undefined ? intent.amount_capturable : Number(body.amount_to_capture)
    if (!Number.isInteger(amount) || amount < 1 || amount > intent.amount_capturable) {
      return error(400, 'invalid_request_error', 'The amount to capture is greater than the amount capturable.', { code: 'amount_too_large', param: 'amount_to_capture' })
    }
    intent.status = 'succeeded'
    intent.amount_received = amount
    intent.amount_capturable = 0
    return { status: 200, body: intent }
  }

  private cancel (intent: Intent): Answer {
    if (intent.status === 'succeeded' || intent.status === 'canceled') {
      return error(400, 'invalid_request_error', `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.`, { code: 'payment_intent_unexpected_state', payment_intent: intent })
    }
    intent.status = 'canceled'
    intent.amount_capturable = 0
    intent.cancellation_reason = 'requested_by_customer'
    return { status: 200, body: intent }
  }

  private search (query: string, withCharges: boolean): Answer {
    const match = /^metadata\['payment_id'\]:'((?:[^'\\]|\\.)*)'$/.exec(query)
    if (match === null) return error(400, 'invalid_request_error', 'Invalid search query', { param: 'query' })
    const paymentId = (match[1] ?? '').replace(/\\(.)/g, '$1')
    const data = this.intentsOf(paymentId).map((intent) => withCharges ? withCharge(intent) : intent)
    return { status: 200, body: { object: 'search_result', url: '/v1/payment_intents/search', has_more: false, next_page: null, data } }
  }

  private createRefund (body: Record<string, unknown>, pending: boolean): Answer {
    const intent = this.intents.get(String(body.payment_intent))
    if (intent === undefined) return error(400, 'invalid_request_error', `No such payment_intent: '${String(body.payment_intent)}'`, { code: 'resource_missing', param: 'payment_intent' })
    if (intent.status !== 'succeeded') return error(400, 'invalid_request_error', 'This PaymentIntent does not have a successful charge to refund.', { code: 'charge_not_refundable' })
    const refunded = [...this.refunds.values()].filter((refund) => refund.payment_intent === intent.id && refund.status !== 'failed')
      .reduce((sum, refund) => sum + Number(refund.amount), 0)
    const amount = body.amount === undefined ? intent.amount_received - refunded : Number(body.amount)
    if (!Number.isInteger(amount) || amount < 1 || amount > intent.amount_received - refunded) {
      return error(400, 'invalid_request_error', `Refund amount (${amount}) is greater than unrefunded amount on charge.`, { code: 'amount_too_large', param: 'amount' })
    }
    const refund = { id: this.nextId('re'), object: 'refund', amount, currency: intent.currency, payment_intent: intent.id, charge: intent.latest_charge, status: pending ? 'pending' : 'succeeded', failure_reason: null, metadata: (body.metadata ?? {}) as Record<string, string>, created: Math.floor(Date.now() / 1000) }
    this.refunds.set(refund.id, refund)
    return { status: 200, body: refund }
  }
}
