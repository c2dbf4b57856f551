import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express, { type Express } from 'express'
import helmet from 'helmet'
import { rateLimit } from 'express-rate-limit'

/**
 * The conventional stack a user would otherwise pick, as issue 17 describes it: Express 5,
 * helmet, express-rate-limit, express.json and a Map. Payments live in memory and are lost on a
 * restart; nothing is validated beyond what the benchmark sends, nothing is logged. It answers
 * the benchmark's scenarios with the same statuses as the service, so `npm run bench` can
 * measure it in the same rounds.
 */

interface PeerPayment { id: string, status: 'succeeded', amount: number, currency: string, createdAt: string, updatedAt: string }

export function createExpressPeer (): Express {
  const products = new Map<string, { id: string, name: string, price: number }>()
  const payments = new Map<string, PeerPayment>()
  const byIdempotencyKey = new Map<string, PeerPayment>()
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
    const [scheme, secret] = (req.get('authorization') ?? '').split(' ')
    if (scheme !== 'Bearer' || !apiKeys.has(secret)) {
      res.status(401).type('application/problem+json').json({ title: 'Unauthorized', status: 401 })
      return
    }
    next()
  })
  app.post('/api/payments', (req, res) => {
    const key = req.get('idempotency-key')
    if (key === undefined) {
      res.status(400).type('application/problem+json').json({ title: 'Idempotency-Key required', status: 400 })
      return
    }
    let payment = byIdempotencyKey.get(key)
    if (payment === undefined) {
      const { amount, currency } = req.body as { amount: number, currency: string }
      const now = new Date().toISOString()
      payment = { id: randomUUID(), status: 'succeeded', amount, currency, createdAt: now, updatedAt: now }
      payments.set(payment.id, payment)
      byIdempotencyKey.set(key, payment)
    }
    res.status(201).location(`/api/payments/${payment.id}`).json(payment)
  })
  app.get('/api/payments/:id', (req, res) => {
    const payment = payments.get(req.params.id)
    if (payment === undefined) res.status(404).type('application/problem+json').json({ title: 'Not Found', status: 404 })
    else res.json(payment)
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
