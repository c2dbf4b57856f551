import type { WebhookEndpoint } from '../domain/webhooks'
import { isSealed, SEALED_PREFIX, type SecretBox } from '../secrets/encryption'
import type { EndpointSecrets, WebhookStore } from '../store/types'

/**
 * The webhook store as the service sees it: endpoint secrets sealed (encrypted, bound to the endpoint's
 * id) on the way in and opened on the way out. A secret still in clear (a row written before encryption
 * at rest, not yet sealed by sealStoredSecrets) reads as it is.
 */
export function sealedWebhookStore (store: WebhookStore, box: SecretBox): WebhookStore {
  const open = (value: string, id: string): string => isSealed(value) ? box.open(value, id) : value
  const sealed = (endpoint: WebhookEndpoint): WebhookEndpoint => ({
    ...endpoint,
    secret: box.seal(endpoint.secret, endpoint.id),
    previousSecret: endpoint.previousSecret === null ? null : box.seal(endpoint.previousSecret, endpoint.id)
  })
  const opened = (endpoint: WebhookEndpoint): WebhookEndpoint => ({
    ...endpoint,
    secret: open(endpoint.secret, endpoint.id),
    previousSecret: endpoint.previousSecret === null ? null : open(endpoint.previousSecret, endpoint.id)
  })
  return {
    ...store,
    createEndpoint: async (endpoint, max, completion) => await store.createEndpoint(sealed(endpoint), max, completion),
    updateEndpoint: async (endpoint, expectedUpdatedAt, completion) => await store.updateEndpoint(sealed(endpoint), expectedUpdatedAt, completion),
    listEndpoints: async (merchantId) => (await store.listEndpoints(merchantId)).map(opened),
    async getEndpoint (merchantId, id) {
      const endpoint = await store.getEndpoint(merchantId, id)
      return endpoint === undefined ? undefined : opened(endpoint)
    },
    claimDue: async (now, leaseUntil, limit) => (await store.claimDue(now, leaseUntil, limit)).map((claim) => ({ ...claim, endpoint: opened(claim.endpoint) }))
  }
}

const BATCH = 100

/**
 * Seals the stored endpoint secrets under the current key: `plain` those still in clear (done on every
 * start), `all` also those sealed under an older key (the re-encryption after a key rotation). Each
 * row is a compare-and-set, so instances doing it at once, or a PATCH meanwhile, never lose a secret.
 * Returns how many endpoints were rewritten.
 */
export async function sealStoredSecrets (store: WebhookStore, box: SecretBox, scope: 'plain' | 'all'): Promise<number> {
  const prefix = scope === 'plain' ? SEALED_PREFIX : `${SEALED_PREFIX}${box.currentKeyId}:`
  const reseal = (value: string, id: string): string => box.seal(isSealed(value) ? box.open(value, id) : value, id)
  let after = ''
  let rewritten = 0
  for (;;) {
    const batch: EndpointSecrets[] = await store.secretsNotUnder(prefix, after, BATCH)
    for (const stored of batch) {
      const next = { secret: reseal(stored.secret, stored.id), previousSecret: stored.previousSecret === null ? null : reseal(stored.previousSecret, stored.id) }
      if (await store.replaceSecrets(stored, next)) rewritten++
    }
    const last = batch.at(-1)
    if (last === undefined || batch.length < BATCH) return rewritten
    after = last.id
  }
}
