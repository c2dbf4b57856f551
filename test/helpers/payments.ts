import type { InjectOptions } from 'fastify'
import type { App } from '../../app/app'

export const PROBLEM = 'application/problem+json; charset=utf-8'

export function manualClock (start = Date.parse('2026-01-01T00:00:00Z')) {
  const clock = { now: start, read: () => clock.now }
  return clock
}

export function postJson (url: string, payload: unknown, key?: string): InjectOptions {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (key !== undefined) headers['idempotency-key'] = key
  return { method: 'POST', url, headers, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }
}

/** Creates a payment through the API and returns its id (asserting nothing: callers check the status they expect). */
export async function createPayment (app: App, body: Record<string, unknown> = { amount: 10, currency: 'USD' }, key?: string): Promise<{ id: string, status: number }> {
  const res = await app.inject(postJson('/api/payments', body, key))
  const json = res.json()
  return { id: json.id ?? json.paymentId, status: res.statusCode }
}

export function refundsOf (paymentId: string): string {
  return `/api/payments/${paymentId}/refunds`
}
