import type { ConnectorModule } from '../connector'
import { lastFourOf } from '../credentials'
import { adyenCredentialErrors } from './credentials'
import { adyenNotificationService, AWAITING_NOTIFICATION_AFTER_SECONDS } from './inbound'
import { adyenWebhook } from './webhook'

/** Adyen: Checkout API v72 through the official library, outcomes through its HMAC-signed notifications (/connectors/{id}/adyen-notifications). */
export const adyenModule: ConnectorModule = {
  type: 'adyen',
  capabilities: { customerPresent: true, paymentMethodObject: true, needsPaymentMethod: true },
  credentialMembers: {
    apiKey: {
      minLength: 1,
      maxLength: 255,
      description: 'Adyen: the API key of a web service user with the Checkout webservice role (Customer Area: Developers › API credentials). Required for `adyen`.',
      example: 'AQEyhmfxEXAMPLEonlyNOTaREALkey0000'
    },
    merchantAccount: {
      minLength: 1,
      maxLength: 255,
      description: 'Adyen: the merchant account that processes the payments. Required for `adyen`.',
      example: 'YourCompanyECOM'
    },
    hmacKey: {
      minLength: 32,
      maxLength: 128,
      description: 'Adyen: the HMAC key (hex) of the Standard webhook that sends this account\'s notifications to `/connectors/{connectorId}/adyen-notifications`. Required for `adyen`.',
      example: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'
    },
    liveUrlPrefix: {
      minLength: 1,
      maxLength: 100,
      description: 'Adyen, live accounts only: the prefix of the live endpoints (Customer Area: Developers › API URLs); requests then go to ' +
        '`https://{liveUrlPrefix}-checkout-live.adyenpayments.com/checkout`. Without it the account is a test account (`https://checkout-test.adyen.com`).',
      example: '1797a841fbb37ca7-AdyenDemo'
    }
  },
  credentialErrors: adyenCredentialErrors,
  credentialsHint: (credentials) => lastFourOf(credentials, 'apiKey'),
  // Unset: each account's own endpoints (test, or live with its liveUrlPrefix). Set: every account's calls go there (tests: a local fake).
  urlSettings: [{ name: 'ADYEN_CHECKOUT_URL' }, { name: 'ADYEN_DISPUTES_URL' }],
  settingsNotes: ({ connectorUrls: { ADYEN_CHECKOUT_URL: checkoutUrl, ADYEN_DISPUTES_URL: disputesUrl } }) => [
    ...(disputesUrl === undefined
      ? []
      : [{ message: 'ADYEN_DISPUTES_URL is set: every Adyen connector accepts disputes at this server instead of its own endpoint', details: { adyenDisputesUrl: disputesUrl } }]),
    ...(checkoutUrl === undefined
      ? []
      : [{ message: 'ADYEN_CHECKOUT_URL is set: every Adyen connector talks to this server instead of its own test or live endpoint', details: { adyenCheckoutUrl: checkoutUrl } }])
  ],
  create (credentials, _connectorId, { config: { connectorUrls, GATEWAY_TIMEOUT_MS: timeoutMs } }) {
    // The library is loaded when the first Adyen connector is built: its index alone costs about a second of start-up.
    const { adyenConnector } = require('./connector') as typeof import('./connector')
    return adyenConnector(credentials, {
      ...(connectorUrls.ADYEN_CHECKOUT_URL === undefined ? {} : { checkoutUrl: connectorUrls.ADYEN_CHECKOUT_URL }),
      ...(connectorUrls.ADYEN_DISPUTES_URL === undefined ? {} : { disputesUrl: connectorUrls.ADYEN_DISPUTES_URL }),
      timeoutMs
    })
  },
  inbound: {
    webhook: adyenWebhook,
    receiver (ports) {
      const notifications = adyenNotificationService(ports)
      return {
        async receive (connectorId, delivery) {
          await notifications.receive(connectorId, delivery.body)
        },
        async recover ({ ageSeconds }) {
          const { processed } = await notifications.drainInbox({ ageSeconds })
          const awaiting = await notifications.awaitingNotification({ ageSeconds: AWAITING_NOTIFICATION_AFTER_SECONDS })
          return { processed, awaiting }
        }
      }
    }
  }
}
