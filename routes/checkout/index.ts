import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from '@sinclair/typebox'
import { NotFoundError } from '../../src/domain/errors'
import { merchantReturnUrl } from '../../src/domain/payments'
import { simulatedBankDecision } from '../../src/gateway/simulated/gateway'
import { namespacedLedger } from '../../src/gateway/simulated'
import { publicOperation } from '../../schemas/auth'
import {
  CHECKOUT_PATH, RETURN_SEGMENT, ReturnForm, ReturnParams, ReturnQuery, returnResponses, SIMULATED_BANK_SEGMENT, SimulatedBankForm, SimulatedBankQuery,
  simulatedBankResponses
} from '../../schemas/checkout'

const FORM = 'application/x-www-form-urlencoded'

function escapeHtml (value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** A plain page of the checkout (the simulated bank, a refused return): its content in one main landmark, as axe asks. */
function page (reply: FastifyReply, statusCode: number, title: string, body: string): FastifyReply {
  return reply.code(statusCode).header('cache-control', 'no-store').type('text/html; charset=utf-8')
    .send(`<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width"><link rel="icon" href="data:,"><title>${title}</title>` +
      `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><main>${body}</main></body></html>`)
}

/** Only strings: what a PSP sent back (query and form), to pass on to a connector that needs it. */
function stringsOf (...sources: unknown[]): Record<string, string> {
  const params: Record<string, string> = {}
  for (const source of sources) {
    if (source === null || typeof source !== 'object') continue
    for (const [name, value] of Object.entries(source)) if (typeof value === 'string') params[name] = value
  }
  return params
}

/**
 * /checkout: where shoppers' browsers reach the service (no API key). The return endpoint, to which PSPs send
 * the shopper after authentication, and the simulated gateway's bank page. The return address carries an
 * unguessable token, never the payment id; the outcome always comes from asking the PSP.
 */
const checkout: FastifyPluginAsyncTypebox = async (app) => {
  // Browsers post forms: Adyen's return (MD/PaRes, redirectResult) and the simulated bank's buttons.
  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))))
  })

  const returnPath = `${RETURN_SEGMENT}:token`
  const description = 'Where the PSP sends the shopper back after authentication (3-D Secure, a bank redirect): the return address of a ' +
    'customer-present payment, `PUBLIC_BASE_URL/checkout/return/{token}`, with an unguessable token (never the payment id). **Public** ' +
    '(no API key): it never trusts the query or form for the outcome. It asks the PSP (Stripe: retrieves the PaymentIntent; the simulated ' +
    'gateway: its ledger), records the answer in one transaction, and answers 303 to the merchant\'s `returnUrl` with `paymentId` and `status` ' +
    'added. Idempotent: a reload, a double submit or a return after the webhook settled the payment only redirects. An unknown token is a plain 404 page.'

  const handleReturn = async (token: string, params: Record<string, string>, reply: FastifyReply): Promise<FastifyReply> => {
    let payment
    try {
      payment = await app.payments.completeAction(token, params)
    } catch (err) {
      if (err instanceof NotFoundError) return page(reply, 404, 'Not found', '<h1>Not found</h1><p>This payment link is not valid.</p>')
      throw err
    }
    return await reply.code(303).header('cache-control', 'no-store').header('location', merchantReturnUrl(payment)).send()
  }

  app.get(returnPath, {
    config: { auth: 'public' },
    schema: {
      tags: ['checkout'],
      operationId: 'returnFromAuthentication',
      summary: 'The shopper returns from authentication (PSP redirect)',
      description,
      security: publicOperation,
      params: ReturnParams,
      querystring: ReturnQuery,
      response: returnResponses
    }
  }, async (request, reply) => await handleReturn(request.params.token, stringsOf(request.query), reply))

  app.post(returnPath, {
    config: { auth: 'public', audit: false },
    schema: {
      tags: ['checkout'],
      operationId: 'returnFromAuthenticationForm',
      summary: 'The shopper returns from authentication (PSP form post)',
      description: `${description} Some PSPs post a form (Adyen); it is passed on to the PSP when it needs it (Adyen's redirectResult), never trusted.`,
      security: publicOperation,
      params: ReturnParams,
      querystring: ReturnQuery,
      consumes: [FORM],
      body: Type.Ref(ReturnForm),
      response: returnResponses
    }
  }, async (request, reply) => await handleReturn(request.params.token, stringsOf(request.query, request.body), reply))

  /** The return addresses the simulated bank follows: this service's own, nothing else (no open redirect). */
  const ownReturn = (url: string): boolean => {
    const base = app.config.PUBLIC_BASE_URL
    return base !== undefined && url.startsWith(`${base.replace(/\/+$/, '')}${CHECKOUT_PATH}${RETURN_SEGMENT}`)
  }
  const bankLedger = (account: string | undefined) => account === undefined ? app.db.ledger : namespacedLedger(app.db.ledger, account)
  const bankDescription = 'The simulated gateway\'s bank page, for trying customer-present payments without a PSP account: a payment of ' +
    '6001.00 with `returnUrl` answers `requires_action` with `nextAction` pointing here. '

  /**
   * The bank page's form navigation ends, through the return address, on the merchant's returnUrl, and browsers check
   * `form-action` against every redirect of a form's navigation: the page allows the merchant's origin beside its own.
   */
  const allowMerchantFormTarget = async (reply: FastifyReply, returnAddress: string): Promise<void> => {
    const csp = reply.getHeader('content-security-policy')
    const token = new URL(returnAddress).pathname.split('/').pop() ?? ''
    const merchantUrl = await app.payments.returnUrlOfAction(token)
    if (typeof csp !== 'string' || merchantUrl === undefined) return
    reply.header('content-security-policy', csp.replace("form-action 'self'", `form-action 'self' ${new URL(merchantUrl).origin}`))
  }

  app.get(SIMULATED_BANK_SEGMENT, {
    config: { auth: 'public' },
    schema: {
      tags: ['checkout'],
      operationId: 'simulatedBankPage',
      summary: 'The simulated bank\'s authentication page',
      description: `${bankDescription}It shows two buttons, succeed and fail.`,
      security: publicOperation,
      querystring: SimulatedBankQuery,
      response: { 200: simulatedBankResponses.page, 400: simulatedBankResponses.validation, 404: simulatedBankResponses.notFound, 429: simulatedBankResponses.rateLimited, 500: simulatedBankResponses.internal }
    }
  }, async (request, reply) => {
    const { key, returnUrl, account } = request.query
    if (!ownReturn(returnUrl)) return page(reply, 404, 'Not found', '<h1>Not found</h1><p>Nothing to authenticate.</p>')
    const hidden = (name: string, value: string | undefined) => value === undefined ? '' : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`
    const fields = hidden('key', key) + hidden('returnUrl', returnUrl) + hidden('account', account)
    await allowMerchantFormTarget(reply, returnUrl)
    return page(reply, 200, 'Simulated bank', '<h1>Simulated bank</h1><p>Your bank asks you to confirm this payment (3-D Secure, simulated).</p>' +
      `<form method="post">${fields}<button name="outcome" value="succeed" id="succeed">Succeed</button> ` +
      '<button name="outcome" value="fail" id="fail">Fail</button></form>')
  })

  app.post(SIMULATED_BANK_SEGMENT, {
    config: { auth: 'public', audit: false },
    schema: {
      tags: ['checkout'],
      operationId: 'simulatedBankDecide',
      summary: 'The simulated bank records the shopper\'s choice',
      description: `${bankDescription}Records the choice once (a second one changes nothing) and sends the shopper back to the service with 303, as a PSP does.`,
      security: publicOperation,
      consumes: [FORM],
      body: Type.Ref(SimulatedBankForm),
      response: { 303: simulatedBankResponses.redirect, 400: simulatedBankResponses.validation, 404: simulatedBankResponses.notFound, 429: simulatedBankResponses.rateLimited, 500: simulatedBankResponses.internal }
    }
  }, async (request, reply) => {
    const { key, returnUrl, account, outcome } = request.body
    if (!ownReturn(returnUrl)) return page(reply, 404, 'Not found', '<h1>Not found</h1><p>Nothing to authenticate.</p>')
    const decided = await simulatedBankDecision(bankLedger(account), key, outcome === 'succeed')
    if (decided === undefined) return page(reply, 404, 'Not found', '<h1>Not found</h1><p>Nothing to authenticate.</p>')
    return await reply.code(303).header('cache-control', 'no-store').header('location', returnUrl).send()
  })
}

export default checkout
