import t from 'tap'
import { credentialCache } from '../../src/services/credential-cache'
import type { Principal } from '../../src/domain/api-keys'

const T0 = Date.parse('2026-05-01T00:00:00Z')
const merchant = (id: string): Principal => ({ kind: 'merchant', credentialId: id, merchantId: 'm', merchantStatus: 'active', apiVersion: '2026-11-25' })

t.test('a lookup is reused until the TTL ends', async (t) => {
  const cache = credentialCache({ ttlMs: 2000, maxEntries: 10 })
  t.ok(cache.enabled)
  t.equal(cache.get('h1', T0), undefined, 'nothing before it is set')
  cache.set('h1', merchant('k1'), null, T0)
  t.same(cache.get('h1', T0 + 1999), merchant('k1'))
  t.equal(cache.get('h1', T0 + 2000), undefined, 'forgotten when the TTL ends')
  t.equal(cache.get('h1', T0 + 1), undefined, 'and stays forgotten')
})

t.test('a key that expires before the TTL is not reused past its expiry', async (t) => {
  const cache = credentialCache({ ttlMs: 60_000, maxEntries: 10 })
  cache.set('h1', merchant('k1'), T0 + 500, T0)
  t.ok(cache.get('h1', T0 + 499))
  t.equal(cache.get('h1', T0 + 500), undefined)
  cache.set('h2', merchant('k2'), T0, T0)
  t.equal(cache.get('h2', T0), undefined, 'an already expired key is not kept')
})

t.test('bounded: the least recently used lookup is forgotten first', async (t) => {
  const cache = credentialCache({ ttlMs: 2000, maxEntries: 2 })
  cache.set('a', merchant('a'), null, T0)
  cache.set('b', merchant('b'), null, T0)
  cache.get('a', T0)
  cache.set('c', merchant('c'), null, T0)
  t.ok(cache.get('a', T0), 'recently used: kept')
  t.equal(cache.get('b', T0), undefined, 'least recently used: forgotten')
  t.ok(cache.get('c', T0))
})

t.test('clear forgets everything at once', async (t) => {
  const cache = credentialCache({ ttlMs: 2000, maxEntries: 10 })
  cache.set('a', merchant('a'), null, T0)
  cache.set('b', merchant('b'), null, T0)
  cache.clear()
  t.equal(cache.get('a', T0), undefined)
  t.equal(cache.get('b', T0), undefined)
})

t.test('a TTL of 0 turns the cache off', async (t) => {
  const cache = credentialCache({ ttlMs: 0, maxEntries: 10 })
  t.notOk(cache.enabled)
  cache.set('a', merchant('a'), null, T0)
  t.equal(cache.get('a', T0), undefined)
  cache.clear()
})
