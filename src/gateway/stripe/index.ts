import type { ConnectorModule } from '../connector'
import { lastFourOf } from '../credentials'
import { stripeCredentialErrors } from './credentials'
import { stripeEventService } from './inbound'
import { stripeWebhook } from './webhook'

/** Stripe's API, the default of STRIPE_API_URL (a local stand-in in tests). */
export const STRIPE_DEFAULT_API_URL = 'https://api.stripe.com'

/** Where Stripe connectors call: Stripe's API unless the operator points them elsewhere. */
const apiUrlOf = (config: { connectorUrls: Readonly<Record<string, string>> }): string => config.connectorUrls.STRIPE_API_URL ?? STRIPE_DEFAULT_API_URL

/** Stripe: PaymentIntents through the official SDK, events through its signed webhooks (/connectors/{id}/stripe-events). */
export const stripeModule: ConnectorModule = {
  type: 'stripe',
  capabilities: { customerPresent: true, paymentMethodObject: false, needsPaymentMethod: true },
  credentialMembers: {
    secretKey: {
      minLength: 1,
      maxLength: 255,
      description: 'Stripe: a secret or restricted key (`sk_test_…`, `sk_live_…`, `rk_test_…`, `rk_live_…`). Required for `stripe`.',
      example: 'rk_test_51HxEXAMPLEonlyNOTaREALkey4242'
    },
    webhookSecret: {
      minLength: 1,
      maxLength: 255,
      description: 'Stripe: the signing secret (`whsec_…`) of the Stripe webhook endpoint that sends this account\'s events to `/connectors/{connectorId}/stripe-events`.',
      example: 'whsec_0123456789abcdef'
    }
  },
  credentialErrors: stripeCredentialErrors,
  credentialsHint: (credentials) => lastFourOf(credentials, 'secretKey'),
  // Operator configuration: any http or https URL (loopback included, for tests and local fakes); a warning when it is not Stripe's.
  urlSettings: [{ name: 'STRIPE_API_URL', default: STRIPE_DEFAULT_API_URL }],
  settingsNotes: (config) => new URL(apiUrlOf(config)).origin === new URL(STRIPE_DEFAULT_API_URL).origin
    ? []
    : [{ message: 'STRIPE_API_URL is not Stripe\'s API: Stripe connectors talk to this server instead', details: { stripeApiUrl: apiUrlOf(config) } }],
  create (credentials, _connectorId, settings) {
    // The SDK is loaded when the first Stripe connector is built: start-up time an instance without one never pays.
    const { stripeConnector } = require('./connector') as typeof import('./connector')
    return stripeConnector(credentials, { apiUrl: apiUrlOf(settings.config), timeoutMs: settings.config.GATEWAY_TIMEOUT_MS })
  },
  inbound: {
    webhook: stripeWebhook,
    receiver (ports) {
      const events = stripeEventService(ports)
      return {
        async receive (connectorId, delivery) {
          const signature = delivery.headers['stripe-signature']
          await events.receive(connectorId, delivery.rawBody, typeof signature === 'string' ? signature : undefined)
        }
      }
    }
  }
}
