import type { ConnectorModule } from '../../../src/gateway/connector'
import type { ChargeRequest, PaymentGateway, RefundRequest } from '../../../src/gateway/types'
import { CredentialsRefusedError } from '../../../src/gateway/connector'

/*
 * A throwaway fourth PSP, "Acme", written in this test folder alone: a module as a real PSP's folder exports one.
 * Its gateway keeps charges and refunds in memory, by idempotency key, as a PSP does.
 */

export const ACME_TOKEN = /^acme_(test|live)_[0-9a-z]{12,64}$/

export interface AcmeBook {
  charges: ChargeRequest[]
  refunds: RefundRequest[]
  /** The account ids connectors were built for. */
  built: Array<string | null>
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
    }
  }
}
