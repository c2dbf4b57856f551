import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express, { type Express, type Response } from 'express'
import helmet from 'helmet'
import { rateLimit } from 'express-rate-limit'

/**
 * The conventional stack a user would otherwise pick, as issue 17 describes it: Express 5,
 * helmet, express-rate-limit, express.json and a Map. Payments live in memory and are lost on a
 * restart; nothing is validated beyond what the benchmark sends, nothing is logged. It answers
 * the benchmark's scenarios with the same statuses as the service, so `npm run bench` can
 * measure it in the same rounds.
 */

interface PeerPayment {
  id: string
  status: 'requires_capture' | 'succeeded' | 'partially_refunded' | 'refunded'
  amount: number
  currency: string
  amountRefunded: number
  createdAt: string
  updatedAt: string
}
interface PeerRefund { id: string, paymentId: string, amount: number, currency: string, status: 'succeeded', createdAt: string, updatedAt: string }
/** A stored payment: what is answered, its owner and its refunds (kept beside it, not rendered with it). */
interface PeerRecord { payment: PeerPayment, merchantId: string, refunds: PeerRefund[] }

const LIST_LIMIT_DEFAULT = 10
const LIST_LIMIT_MAX = 100

export function createExpressPeer (): Express {
  const products = new Map<string, { id: string, name: string, price: number }>()
  const payments = new Map<string, PeerRecord>()
  /** Each merchant's payments, oldest first (the list answers the newest). */
  const paymentsOf = new Map<string, PeerPayment[]>()
  const byIdempotencyKey = new Map<string, PeerPayment>()
  const refundsByIdempotencyKey = new Map<string, PeerRefund>()
  const merchants = new Map<string, { id: string, name: string, email: string }>()
  /** API key secret → merchant id (what the benchmark's seeding creates, as with the service). */
  const apiKeys = new Map<string, string>()

  const app = express()
  app.disable('x-powered-by')
  app.use(helmet())
  app.use(rateLimit({ windowMs: 60_000, limit: 1_000_000_000, standardHeaders: 'draft-8', legacyHeaders: false }))
  app.use(express.json({ limit: '100kb' }))

  app.get('/products/:id', (req, res) => {
    const product = products.get(req.params.id)
    if (product === undefined) res.status(404).json({ error: 'product not found', code: 'NOT_FOUND' })
    else res.json(product)
  })
  app.put('/products/:id', (req, res) => {
    const { name, price } = req.body as { name: string, price: number }
    const product = { id: req.params.id, name, price }
    products.set(product.id, product)
    res.json(product)
  })
  // Merchants and their API keys, as the benchmark seeds them; payments need a merchant's key (a Map lookup).
  app.post('/merchants', (req, res) => {
    const { name, email } = req.body as { name: string, email: string }
    const merchant = { id: randomUUID(), name, email }
    merchants.set(merchant.id, merchant)
    res.status(201).json(merchant)
  })
  app.post('/merchants/:id/api-keys', (req, res) => {
    if (!merchants.has(req.params.id)) {
      res.status(404).type('application/problem+json').json({ title: 'Not Found', status: 404 })
      return
    }
    const secret = `sk_${randomUUID()}`
    apiKeys.set(secret, req.params.id)
    res.status(201).json({ secret })
  })
  app.use('/api', (req, res, next) => {
    const [scheme, secret = ''] = (req.get('authorization') ?? '').split(' ')
    const merchantId = apiKeys.get(secret)
    if (scheme !== 'Bearer' || merchantId === undefined) {
      res.status(401).type('application/problem+json').json({ title: 'Unauthorized', status: 401 })
      return
    }
    res.locals.merchantId = merchantId
    next()
  })
  const notFound = (res: Response): void => {
    res.status(404).type('application/problem+json').json({ title: 'Not Found', status: 404 })
  }
  /** The payment if it is the caller's. */
  const ownRecord = (res: Response, id: string): PeerRecord | undefined => {
    const record = payments.get(id)
    return record?.merchantId === res.locals.merchantId ? record : undefined
  }
  app.post('/api/payments', (req, res) => {
    const key = req.get('idempotency-key')
    if (key === undefined) {
      res.status(400).type('application/problem+json').json({ title: 'Idempotency-Key required', status: 400 })
      return
    }
    const merchantId = res.locals.merchantId as string
    const scopedKey = `${merchantId}:${key}`
    let payment = byIdempotencyKey.get(scopedKey)
    if (payment === undefined) {
      const { amount, currency, captureMethod } = req.body as { amount: number, currency: string, captureMethod?: string }
      const now = new Date().toISOString()
      payment = { id: randomUUID(), status: captureMethod === 'manual' ? 'requires_capture' : 'succeeded', amount, currency, amountRefunded: 0, createdAt: now, updatedAt: now }
      payments.set(payment.id, { payment, merchantId, refunds: [] })
      const own = paymentsOf.get(merchantId)
      if (own === undefined) paymentsOf.set(merchantId, [payment])
      else own.push(payment)
      byIdempotencyKey.set(scopedKey, payment)
    }
    res.status(201).location(`/api/payments/${payment.id}`).json(payment)
  })
  // The newest `limit` payments (the benchmark pages no further than the first page).
  app.get('/api/payments', (req, res) => {
    const limit = req.query.limit === undefined ? LIST_LIMIT_DEFAULT : Number(req.query.limit)
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX) {
      res.status(400).type('application/problem+json').json({ title: 'Bad Request', status: 400 })
      return
    }
    const own = paymentsOf.get(res.locals.merchantId as string) ?? []
    res.json({ data: own.slice(-limit).reverse(), hasMore: own.length > limit })
  })
  app.get('/api/payments/:id', (req, res) => {
    const record = ownRecord(res, req.params.id)
    if (record === undefined) notFound(res)
    else res.json(record.payment)
  })
  // The capture of an authorization (the whole amount; the benchmark sends no other).
  app.post('/api/payments/:id/capture', (req, res) => {
    const record = ownRecord(res, req.params.id)
    if (record === undefined) {
      notFound(res)
      return
    }
    if (record.payment.status !== 'requires_capture') {
      res.status(409).type('application/problem+json').json({ title: 'Conflict', status: 409, paymentStatus: record.payment.status })
      return
    }
    record.payment.status = 'succeeded'
    record.payment.updatedAt = new Date().toISOString()
    res.json(record.payment)
  })
  // A refund of part (or, without an amount, the rest) of a payment: pushed onto the payment's refunds.
  app.post('/api/payments/:id/refunds', (req, res) => {
    const key = req.get('idempotency-key')
    const scopedKey = key === undefined ? undefined : `${res.locals.merchantId as string}:${key}`
    let refund = scopedKey === undefined ? undefined : refundsByIdempotencyKey.get(scopedKey)
    if (refund === undefined) {
      const record = ownRecord(res, req.params.id)
      if (record === undefined) {
        notFound(res)
        return
      }
      const { payment } = record
      // Cents, so that many small refunds add up exactly.
      const remainingCents = Math.round(payment.amount * 100) - Math.round(payment.amountRefunded * 100)
      const requested = (req.body as { amount?: number } | undefined)?.amount
      const cents = requested === undefined ? remainingCents : Math.round(requested * 100)
      if (!(cents > 0) || cents > remainingCents) {
        res.status(409).type('application/problem+json').json({ title: 'Conflict', status: 409, remainingAmount: remainingCents / 100 })
        return
      }
      const now = new Date().toISOString()
      refund = { id: randomUUID(), paymentId: payment.id, amount: cents / 100, currency: payment.currency, status: 'succeeded', createdAt: now, updatedAt: now }
      record.refunds.push(refund)
      payment.amountRefunded = (Math.round(payment.amountRefunded * 100) + cents) / 100
      payment.status = cents === remainingCents ? 'refunded' : 'partially_refunded'
      payment.updatedAt = now
      if (scopedKey !== undefined) refundsByIdempotencyKey.set(scopedKey, refund)
    }
    res.status(201).location(`/api/payments/${refund.paymentId}/refunds/${refund.id}`).json(refund)
  })
  return app
}

export async function startExpressPeer (port = 0, host = '127.0.0.1'): Promise<Server> {
  const app = createExpressPeer()
  return await new Promise<Server>((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => {
      if (err !== undefined) reject(err)
      else resolve(server)
    })
    server.keepAliveTimeout = 72_000
  })
}

/* c8 ignore start */
if (require.main === module) {
  startExpressPeer(Number(process.env.PORT ?? 0)).then((server) => {
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`)
    const stop = (): void => { server.close(); server.closeAllConnections() }
    process.on('SIGTERM', stop)
    process.on('SIGINT', stop)
  }).catch((err: unknown) => {
    process.stderr.write(`express peer failed to start: ${String(err)}\n`)
    process.exit(1)
  })
}
/* c8 ignore stop */
