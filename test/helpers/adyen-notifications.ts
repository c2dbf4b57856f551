import type { App } from '../../app/app'
import { newId } from '../../src/domain/ids'
import { signatureOf, type AdyenNotificationItem } from '../../src/gateway/adyen/notifications'

export const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'
export const MERCHANT_ACCOUNT = 'ExampleShopECOM'

/**
 * An adyen connector account written through the store (with its credentials sealed as the service
 * seals them), for tests that run before the Adyen connector validates credentials itself.
 */
export async function adyenAccount (app: App, merchantId: string, credentials: Record<string, string> = { apiKey: 'AQE1_test_key_4242', merchantAccount: MERCHANT_ACCOUNT, hmacKey: HMAC_KEY }): Promise<string> {
  const id = newId()
  const at = new Date().toISOString()
  const inserted = await app.db.connectors.insert({
    id,
    merchantId,
    type: 'adyen',
    priority: 0,
    status: 'enabled',
    description: null,
    credentialsHint: '…4242',
    credentials: app.secretBox.seal(JSON.stringify(credentials), id),
    createdAt: at,
    updatedAt: at,
    deletedAt: null
  }, 20)
  if (!inserted) throw new Error('the adyen account was not inserted')
  return id
}

/** A notification item as Adyen sends it, signed with `hmacKey` (the library's calculation). */
export function notificationItem (fields: Partial<AdyenNotificationItem> & Pick<AdyenNotificationItem, 'eventCode' | 'merchantReference'>, hmacKey = HMAC_KEY): AdyenNotificationItem {
  const item: AdyenNotificationItem = {
    success: 'true',
    pspReference: `PSP${Math.random().toString(36).slice(2, 15).toUpperCase()}`,
    merchantAccountCode: MERCHANT_ACCOUNT,
    amount: { value: 1000, currency: 'USD' },
    eventDate: '2026-01-01T12:00:00+01:00',
    reason: '',
    ...fields
  }
  return { ...item, additionalData: { ...fields.additionalData, hmacSignature: signatureOf(item, hmacKey) } }
}

/** The batch body Adyen posts. */
export function notificationBody (...items: AdyenNotificationItem[]): unknown {
  return { live: 'false', notificationItems: items.map((item) => ({ NotificationRequestItem: item })) }
}
