import { merchantEtag, toMerchantResource, type Merchant } from '../../src/domain/merchants'
import type { StoredResponse } from '../../src/store/types'
import { JSON_CONTENT_TYPE } from '../../plugins/http/errors/envelope'

/** The merchants collection, as mounted by the area table in src/app.ts. */
export const MERCHANTS_PATH = '/merchants'

/** The 201 response for a new merchant, exactly as sent (and as the idempotency plugin replays it). */
export function renderMerchantCreated (merchant: Merchant): StoredResponse {
  return {
    statusCode: 201,
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      location: `${MERCHANTS_PATH}/${merchant.id}`,
      etag: merchantEtag(merchant)
    },
    body: JSON.stringify(toMerchantResource(merchant))
  }
}
