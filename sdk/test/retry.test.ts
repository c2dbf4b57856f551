import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_RETRY_POLICY, retryDelayMs } from '../src/index.js'

const policy = DEFAULT_RETRY_POLICY

test('back-off doubles per retry with equal jitter, capped', () => {
  assert.equal(retryDelayMs(null, 0, policy, () => 0), 250)
  assert.equal(retryDelayMs(null, 0, policy, () => 1), 500)
  assert.equal(retryDelayMs(null, 2, policy, () => 1), 2000)
  assert.equal(retryDelayMs(null, 10, policy, () => 1), policy.maxDelayMs)
})

test('Retry-After in seconds or as an HTTP date is a floor, honoured up to maxRetryAfterMs; beyond it is not retried', () => {
  assert.equal(retryDelayMs('3', 0, policy, () => 1), 3000)
  assert.equal(retryDelayMs('0', 1, policy, () => 1), 1000, 'a shorter Retry-After still backs off')
  assert.equal(retryDelayMs('59', 0, policy, () => 1), 59_000, 'a 429\'s Retry-After of 59 s is honoured (the back-off cap is not a Retry-After cap)')
  assert.equal(retryDelayMs('61', 0, policy, () => 1), undefined, 'over maxRetryAfterMs (60 s by default)')
  assert.equal(retryDelayMs('9', 0, { ...policy, maxRetryAfterMs: 5000 }, () => 1), undefined)
  const inTwoSeconds = new Date(Date.now() + 2500).toUTCString()
  const delay = retryDelayMs(inTwoSeconds, 0, policy, () => 0) ?? 0
  assert.ok(delay > 1000 && delay <= 2500, `${delay} ms until the date`)
  assert.equal(retryDelayMs('soon', 0, policy, () => 0), 250, 'an unreadable Retry-After is ignored')
})
