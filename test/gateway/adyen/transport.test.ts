import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { Config, EnvironmentEnum, HttpClientException } from '@adyen/api-library'
import { AdyenConnectionError, adyenTransport, rebase } from '../../../src/gateway/adyen/transport'

async function rawServer (t: Test, listener: RequestListener): Promise<string> {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => { resolve() }))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const config = new Config({ apiKey: 'AQEkey', environment: EnvironmentEnum.TEST })

t.test('rebase: the library\'s versioned path on the configured base URL', async (t) => {
  t.equal(rebase('https://checkout-test.adyen.com/v72/payments', 'http://127.0.0.1:9').href, 'http://127.0.0.1:9/v72/payments')
  t.equal(rebase('https://abc-Co-checkout-live.adyenpayments.com/checkout/v72/payments/X/captures', 'https://abc-Co-checkout-live.adyenpayments.com/checkout/').href,
    'https://abc-co-checkout-live.adyenpayments.com/checkout/v72/payments/X/captures')
  t.equal(rebase('https://checkout-test.adyen.com/other?x=1', 'http://h').href, 'http://h/other?x=1')
})

t.test('an error answer that is not Adyen\'s JSON still carries its HTTP status', async (t) => {
  const url = await rawServer(t, (_req, res) => { res.writeHead(502, { 'content-type': 'text/html' }); res.end('<html>Bad gateway</html>') })
  const error = await adyenTransport({ baseUrl: url, timeoutMs: 1000 }).request(`${url}/v72/payments`, '{}', config, true).catch((cause: unknown) => cause)
  t.ok(error instanceof HttpClientException)
  t.match(error, { statusCode: 502, errorCode: undefined })
})

t.test('an answer cut short is a lost connection (after sending: unknown)', async (t) => {
  const url = await rawServer(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
    res.write('{"pspReference":')
    setTimeout(() => { res.socket?.destroy() }, 20)
  })
  const error = await adyenTransport({ baseUrl: url, timeoutMs: 1000 }).request(`${url}/v72/payments`, '{}', config, true).catch((cause: unknown) => cause)
  t.ok(error instanceof AdyenConnectionError)
  t.not((error as AdyenConnectionError).code, 'ECONNREFUSED')
})

t.test('the request carries the API key, JSON and, when given, the Idempotency-Key', async (t) => {
  const seen: Array<Record<string, unknown>> = []
  const url = await rawServer(t, (req, res) => { seen.push({ ...req.headers, method: req.method }); res.end('{}') })
  const transport = adyenTransport({ baseUrl: url, timeoutMs: 1000 })
  t.equal(await transport.request(`${url}/v72/paymentMethods`, '{}', config, true), '{}')
  await transport.request(`${url}/v72/payments`, '{}', config, true, { idempotencyKey: 'payment-1' })
  t.match(seen, [
    { method: 'POST', 'x-api-key': 'AQEkey', 'content-type': 'application/json', 'idempotency-key': undefined },
    { 'idempotency-key': 'payment-1' }
  ])
})
