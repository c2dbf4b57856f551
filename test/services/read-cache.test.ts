import t from 'tap'
import { cachedRead, readCache } from '../../src/services/read-cache'

const rendered = (body: string) => ({ body })

t.test('a value is reused until its TTL has passed', async (t) => {
  const cache = readCache<{ body: string }>({ ttlMs: 1000, maxEntries: 10 })
  t.equal(cache.enabled, true)
  cache.remember('a', rendered('1'), cache.epoch(), 0)
  t.same(cache.get('a', 999), { body: '1' })
  t.equal(cache.get('a', 1000), undefined, 'expired')
  t.equal(cache.get('a', 0), undefined, 'and gone')
})

t.test('a read that started before a write does not store what it read', async (t) => {
  const cache = readCache<{ body: string }>({ ttlMs: 1000, maxEntries: 10 })
  const readSince = cache.epoch()
  cache.forget('a')
  cache.remember('a', rendered('old'), readSince, 0)
  t.equal(cache.get('a', 0), undefined, 'the read from before the write is not kept')
  cache.remember('a', rendered('new'), cache.epoch(), 0)
  t.equal(cache.get('a', 0)?.body, 'new')
  const beforeClear = cache.epoch()
  cache.clear()
  t.equal(cache.get('a', 0), undefined)
  cache.remember('b', rendered('b'), beforeClear, 0)
  t.equal(cache.get('b', 0), undefined, 'nor across a clear')
})

t.test('at most maxEntries, least recently used forgotten first', async (t) => {
  const cache = readCache<{ body: string }>({ ttlMs: 1000, maxEntries: 2 })
  for (const id of ['a', 'b']) cache.remember(id, rendered(id), cache.epoch(), 0)
  cache.get('a', 0)
  cache.remember('c', rendered('c'), cache.epoch(), 0)
  t.equal(cache.get('b', 0), undefined)
  t.equal(cache.get('a', 0)?.body, 'a')
  t.equal(cache.get('c', 0)?.body, 'c')
})

t.test('a TTL of 0 turns it off', async (t) => {
  const cache = readCache<{ body: string }>({ ttlMs: 0, maxEntries: 10 })
  t.equal(cache.enabled, false)
  cache.remember('a', rendered('1'), cache.epoch(), 0)
  cache.forget('a')
  cache.clear()
  t.equal(cache.get('a', 0), undefined)
})

t.test('cachedRead: a hit is answered synchronously; a miss reads once and remembers, unless a write forgot meanwhile', async (t) => {
  const cache = readCache<string>({ ttlMs: 1000, maxEntries: 10 })
  let reads = 0
  const read = async () => { reads++; return `v${reads}` }
  t.equal(await cachedRead(cache, 'a', () => 0, read), 'v1')
  t.equal(cachedRead(cache, 'a', () => 10, read), 'v1', 'a hit is the value itself, not a promise')
  t.equal(reads, 1)
  const racing = cachedRead(cache, 'b', () => 0, async () => { cache.forget('b'); return 'stale' })
  t.equal(await racing, 'stale', 'the read still answers its caller')
  t.equal(cache.get('b', 0), undefined, 'but what it read is not kept: a write forgot the key while it read')
  t.equal(await cachedRead(cache, 'a', () => 1000, read), 'v2', 'read again once the TTL has passed')
})
