import { createHmac, timingSafeEqual } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { ConnectorModule } from '../../../src/gateway/connector'
import type { InboundModule } from '../../../src/gateway/inbound'
import { GatewayError, type ChargeRequest, type PaymentGateway, type RefundRequest } from '../../../src/gateway/types'
import { CredentialsRefusedError } from '../../../src/gateway/connector'
import { DomainError } from '../../../src/domain/errors'

/*
 * A throwaway fourth PSP, "Acme", written in this test folder alone: a module as a real PSP's folder exports one.
 * Its gateway keeps charges and refunds in memory, by idempotency key, as a PSP does; a charge of `acme_pm_slow` is
 * never answered (a time-out), and Acme reports it later by its webhook: `acme-events`, signed with the account's token.
 */

export const ACME_TOKEN = /^acme_(test|live)_[0-9a-z]{12,64}$/

export interface AcmeBook {
  charges: ChargeRequest[]
  refunds: RefundRequest[]
  /** The account ids connectors were built for. */
  built: Array<string | null>
  /** The ids of the events the receiver acted on. */
  applied: string[]
}

/** An Acme event: one charge's outcome. */
export interface AcmeEvent {
  id: string
  type: 'charge.succeeded' | 'charge.failed'
  paymentId: string
  chargeId: string
}

/** Acme's signature of a delivery: HMAC-SHA256 of the raw body with the account's token, hex. */
export const acmeSignature = (token: string, rawBody: string | Buffer): string => createHmac('sha256', token).update(rawBody).digest('hex')

class AcmeEventUnverifiedError extends DomainError {
  readonly kind = 'unauthenticated'
  readonly code = 'ACME_EVENT_UNVERIFIED'
  constructor () {
    super('The Acme event could not be verified. Nothing was recorded.')
  }
}

const AcmeEventBody = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  type: Type.String({ minLength: 1, maxLength: 64 }),
  paymentId: Type.String({ minLength: 1, maxLength: 64 }),
  chargeId: Type.String({ minLength: 1, maxLength: 128 })
}, { $id: 'AcmeEvent', title: 'Acme event', additionalProperties: false, examples: [{ id: 'evt_1', type: 'charge.succeeded', paymentId: '3f1c2a9e-8d7b-4c6a-9e5f-1a2b3c4d5e6f', chargeId: 'acme_ch_1' }] })

function acmeInbound (book: AcmeBook): InboundModule {
  return {
    webhook: {
      path: 'acme-events',
      operationId: 'receiveAcmeEvent',
      summary: 'Receive an Acme event',
      description: 'Acme posts each charge\'s outcome here, signed (`Acme-Signature`) with the account\'s token.',
      headers: Type.Object({ 'acme-signature': Type.Optional(Type.String({ maxLength: 128, description: 'HMAC-SHA256 of the raw body with the token, hex.' })) }),
      body: AcmeEventBody,
      answer: { description: 'Verified, recorded and acted on once.', mediaType: 'application/json', schema: Type.Object({ ok: Type.Literal(true) }, { $id: 'AcmeEventReceived', additionalProperties: false }), body: { ok: true } },
      refusals: {
        400: { description: 'Not an Acme event.' },
        401: {
          description: 'Not signed by the account (urn:problem-type:acme-event-unverified).',
          example: { type: 'urn:problem-type:acme-event-unverified', title: 'The Acme event could not be verified.', detail: 'The Acme event could not be verified. Nothing was recorded.' }
        }
      },
      problemTypes: [{
        code: 'ACME_EVENT_UNVERIFIED',
        type: 'urn:problem-type:acme-event-unverified',
        title: 'The Acme event could not be verified.',
        component: 'AcmeEventUnverifiedProblem',
        description: 'An Acme event that could not be verified (401).'
      }]
    },
    receiver (ports) {
      return {
        async receive (connectorId, delivery) {
          const account = await ports.accounts.byId(connectorId)
          const signature = delivery.headers['acme-signature']
          const expected = account?.type === 'acme' && account.credentials.token !== undefined ? acmeSignature(account.credentials.token, delivery.rawBody) : undefined
          if (expected === undefined || typeof signature !== 'string' || signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) {
            throw new AcmeEventUnverifiedError()
          }
          const event = delivery.body as AcmeEvent
          const at = new Date(ports.clock()).toISOString()
          const recorded = await ports.db.connectorEvents.record({ connectorId, eventId: event.id, type: event.type, receivedAt: at })
          if (recorded.processedAt !== null) return
          const connector = { id: connectorId, type: 'acme' }
          await ports.payments.applyConnectorOutcome(event.paymentId, connector, event.type === 'charge.succeeded'
            ? { outcome: 'succeeded', chargeId: event.chargeId }
            : { outcome: 'declined', chargeId: event.chargeId, declineCode: 'card_declined' })
          if (await ports.db.connectorEvents.markProcessed(connectorId, event.id, at)) book.applied.push(event.id)
        }
      }
    }
  }
}

export function acmeModule (book: AcmeBook): ConnectorModule {
  return {
    type: 'acme',
    capabilities: { customerPresent: false, paymentMethodObject: false, needsPaymentMethod: true },
    credentialMembers: {
      token: { minLength: 1, maxLength: 80, description: 'Acme: the account token (`acme_test_…`). Required for `acme`.', example: 'acme_test_0123456789abcdef' }
    },
    credentialErrors (credentials) {
      const token = typeof credentials === 'object' && credentials !== null ? (credentials as Record<string, unknown>).token : undefined
      return typeof token === 'string' && ACME_TOKEN.test(token) ? {} : { 'credentials.token': ['The token must be an Acme token: acme_test_… or acme_live_….'] }
    },
    credentialsHint: (credentials) => credentials?.token === undefined ? null : `…${credentials.token.slice(-4)}`,
    create (credentials, connectorId) {
      book.built.push(connectorId)
      const gateway: PaymentGateway = {
        async charge (request) {
          const earlier = book.charges.find((charge) => charge.idempotencyKey === request.idempotencyKey)
          if (earlier === undefined) book.charges.push(request)
          if (request.paymentMethod === 'acme_pm_slow') throw new GatewayError('timeout', 'Acme did not answer in time', 'timeout')
          return request.paymentMethod === 'acme_pm_declined'
            ? { outcome: 'declined', chargeId: `acme_ch_${request.idempotencyKey}`, declineCode: 'card_declined' }
            : { outcome: 'succeeded', chargeId: `acme_ch_${request.idempotencyKey}` }
        },
        async refund (request) {
          if (!book.refunds.some((refund) => refund.idempotencyKey === request.idempotencyKey)) book.refunds.push(request)
          return { outcome: 'succeeded', gatewayRefundId: `acme_re_${request.idempotencyKey}` }
        },
        void: async () => ({ outcome: 'voided' }),
        capture: async (request) => ({ outcome: 'captured', captureId: `acme_cap_${request.idempotencyKey}`, amountMinor: request.amountMinor }),
        retrieve: async () => ({ state: 'none' })
      }
      return {
        gateway,
        verify: async () => {
          if (credentials.token?.startsWith('acme_test_refused') === true) throw new CredentialsRefusedError('Acme refused the token')
        }
      }
    },
    inbound: acmeInbound(book)
  }
}
