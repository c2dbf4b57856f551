import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface Received { headers: IncomingHttpHeaders, body: string, at: number }

interface Answer { status: number, headers?: Record<string, string>, body?: string }

/** A real HTTP receiver on 127.0.0.1 that records every request and answers with `respond` (default 200; a promise holds the answer back). */
export async function webhookReceiver (t: Test, respond: (request: Received, index: number) => Answer | Promise<Answer> = () => ({ status: 200 })) {
  const received: Received[] = []
  const waiters: Array<() => void> = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
      const request = { headers: req.headers, body, at: Date.now() }
      received.push(request)
      for (const wake of waiters.splice(0)) wake()
      Promise.resolve(respond(request, received.length - 1)).then((answer) => {
        res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '')
      }, (err: unknown) => { res.destroy(err as Error) })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { await new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve() }) }) })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`). */
    async waitFor (count: number, timeoutMs = 15_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} webhook requests, got ${received.length}`)
        await new Promise<void>((resolve) => { waiters.push(resolve); setTimeout(resolve, 100) })
      }
      return received
    }
  }
}
