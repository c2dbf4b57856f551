import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { onWebhook, quickStart } from '../examples/quick-start.js'
import { ADMIN_API_KEY, startService, type Service } from './service.js'

let service: Service
before(async () => { service = await startService() })
after(async () => { await service?.stop() })

test('the quick start runs against the live service', async () => {
  const { merchant, payment, declineCode, amounts } = await quickStart(service.baseUrl, ADMIN_API_KEY)
  assert.equal(merchant.name, 'Acme')
  assert.equal(payment.status, 'succeeded')
  assert.equal(declineCode, 'card_declined')
  assert.deepEqual(amounts, [2000, 10.1], 'the declined payment is stored too, newest first')
})

test('the receiver example verifies and narrows', () => {
  const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`
  const body = JSON.stringify({
    id: '019aa9f1-2b3c-7d4e-8f50-6172839a4b5c',
    type: 'refund.succeeded',
    createdAt: '2026-01-15T09:30:01.000Z',
    sequence: 1,
    resource: { type: 'refund', id: 'r1' },
    data: { id: 'r1', amount: 4 }
  })
  const sign = (type: string) => {
    const signed = body.replace('refund.succeeded', type)
    const at = new Date()
    const headers = new Headers({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_1', at, signed)
    })
    return onWebhook(signed, headers, secret)
  }
  assert.equal(sign('refund.succeeded'), 'refunded 4')
  assert.equal(sign('merchant.updated'), 'ignored merchant.updated')
})
