import t from 'tap'
import { patchMerchant, PATCH_ATTEMPTS } from '../../src/services/merchants'
import type { Merchant } from '../../src/domain/merchants'
import type { MerchantStore, MerchantUpdateResult } from '../../src/store/types'

const T0 = Date.parse('2026-03-01T10:00:00.000Z')

function racingStore (base: Merchant, losses: number): MerchantStore & { updates: number } {
  let stored = base
  const store = {
    updates: 0,
    async create (m: Merchant) { return m },
    async get () { return stored },
    async list () { return { data: [], hasMore: false } },
    async update (_id: string, expectedVersion: number, fields: Parameters<MerchantStore['update']>[2], updatedAt: string): Promise<MerchantUpdateResult> {
      store.updates++
      if (store.updates <= losses) {
        // Someone else wrote in between: a different name, one version later.
        stored = { ...stored, name: `other ${store.updates}`, version: stored.version + 1 }
        return { kind: 'version_mismatch', current: stored }
      }
      if (expectedVersion !== stored.version) return { kind: 'version_mismatch', current: stored }
      stored = { ...stored, ...fields, version: stored.version + 1, updatedAt }
      return { kind: 'updated', merchant: stored }
    }
  }
  return store
}

const base: Merchant = {
  id: '6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b',
  name: 'Base',
  email: 'base@example.com',
  country: 'US',
  defaultCurrency: null,
  status: 'active',
  metadata: {},
  apiVersion: '2026-11-25',
  version: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z'
}

t.test('patchMerchant re-applies a merge patch after losing a race, keeping the other writer\'s change', async (t) => {
  const store = racingStore(base, 2)
  const result = await patchMerchant({ merchants: store, clock: () => T0 }, base.id, { country: 'DE' })
  t.equal(store.updates, 3)
  t.match(result, { name: 'other 2', country: 'DE', version: 4 })
})

t.test('patchMerchant gives up with 409 after PATCH_ATTEMPTS lost races', async (t) => {
  const store = racingStore(base, PATCH_ATTEMPTS)
  await t.rejects(patchMerchant({ merchants: store, clock: () => T0 }, base.id, { country: 'DE' }), { kind: 'conflict', code: 'CONFLICT' })
  t.equal(store.updates, PATCH_ATTEMPTS)
})

t.test('patchMerchant with If-Match answers 412 when a race changed the version', async (t) => {
  const store = racingStore(base, 1)
  await t.rejects(patchMerchant({ merchants: store, clock: () => T0 }, base.id, { country: 'DE' }, (current) => current.version === 1), { kind: 'precondition_failed', code: 'PRECONDITION_FAILED' })
  t.equal(store.updates, 1, 'no second write')
})

t.test('patchMerchant: a merchant deleted between read and write is 404', async (t) => {
  const store: MerchantStore = {
    create: async (m) => m,
    get: async () => base,
    update: async () => ({ kind: 'not_found' }),
    list: async () => ({ data: [], hasMore: false })
  }
  await t.rejects(patchMerchant({ merchants: store, clock: () => T0 }, base.id, { name: 'x' }), { kind: 'not_found', code: 'NOT_FOUND' })
})
