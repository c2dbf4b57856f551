/**
 * Redis for tests. TEST_REDIS_URL points at the server; REQUIRE_REDIS=1 (CI)
 * turns "unreachable" from a skip into a failure. Every test writes under its
 * own key prefix and deletes its keys at the end.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Test } from 'tap'

export const REDIS_TEST_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Undefined when Redis answers PING; otherwise why not. */
export async function redisUnreachable (url = REDIS_TEST_URL): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null })
  let cause: string | undefined
  client.on('error', (err: Error) => { cause ??= err.message })
  try {
    await client.connect()
    await client.ping()
    return undefined
  } catch (err) {
    return cause ?? (err as Error).message
  } finally {
    client.disconnect()
  }
}

/** The message printed when tests are skipped because a service is away. */
export function skipMessage (service: 'PostgreSQL' | 'Redis', url: string, why: string): string {
  return `${service} tests skipped: cannot connect to ${url} (${why})`
}

/**
 * Resolves true when Redis is reachable. Otherwise fails `t` with REQUIRE_REDIS=1,
 * or marks it skipped with a plain message, and resolves false.
 */
export async function ensureRedis (t: Test): Promise<boolean> {
  const why = await redisUnreachable()
  if (why === undefined) return true
  if (process.env.REQUIRE_REDIS === '1') {
    t.fail(`REQUIRE_REDIS=1 but Redis is unreachable: cannot connect to ${REDIS_TEST_URL} (${why})`)
  } else {
    const message = skipMessage('Redis', REDIS_TEST_URL, why)
    process.stderr.write(`${message}\n`)
    t.plan(0, message)
  }
  return false
}

/** A key prefix unique to this test; its keys are deleted when `t` ends. */
export function uniquePrefix (t: Test): string {
  const prefix = `test:${randomBytes(6).toString('hex')}:`
  t.teardown(async () => {
    const client = new Redis(REDIS_TEST_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    client.on('error', () => {})
    try {
      await client.connect()
      const keys = await client.keys(`${prefix}*`)
      if (keys.length > 0) await client.del(...keys)
    } catch {
      // Keys expire with their rate-limit window anyway.
    } finally {
      client.disconnect()
    }
  })
  return prefix
}
