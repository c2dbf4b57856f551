import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/**
 * What the local PSP servers of the connector tests (fake-stripe.ts, fake-adyen.ts) share: a
 * node:http server on 127.0.0.1, faults queued for the next requests, a refused port, and a stop
 * that drops open connections (requests are refused from then on).
 */
export abstract class LocalPsp<Fault extends string> {
  url = ''
  /** How long the holdAnswer fault keeps the answer back after doing the work. */
  holdAnswerMs = 3000
  protected readonly server: Server
  protected readonly faults: Fault[] = []
  private readonly sockets = new Set<Socket>()

  constructor () {
    this.server = createServer((req, res) => { this.handle(req, res).catch(() => { res.destroy() }) })
    this.server.on('connection', (socket) => {
      this.sockets.add(socket)
      socket.on('close', () => { this.sockets.delete(socket) })
    })
  }

  /** Connections open from clients now (a request the client aborted closes its connection). */
  openConnections (): number {
    return this.sockets.size
  }

  /** A URL on which nothing listens (connection refused). */
  static async closedPortUrl (): Promise<string> {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    await new Promise<void>((resolve) => server.close(() => { resolve() }))
    return `http://127.0.0.1:${port}`
  }

  /** Listens on a free port of 127.0.0.1; `url` is then its address. */
  async listen (): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  /** Listens again on the port it had (after stopListening): the PSP is back. */
  async listenAgain (): Promise<void> {
    const port = Number(new URL(this.url).port)
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve))
  }

  /** The next `times` requests meet `fault`. */
  failNext (fault: Fault, times = 1): void {
    for (let i = 0; i < times; i++) this.faults.push(fault)
  }

  /** Stops accepting connections (and drops open ones): requests are then refused. */
  async stopListening (): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => { resolve() }))
    this.server.closeAllConnections()
    await closed
  }

  async close (): Promise<void> {
    if (this.server.listening) await this.stopListening()
  }

  protected abstract handle (req: IncomingMessage, res: ServerResponse): Promise<void>
}

/** Resolves once `probe` holds (checked every 10 ms); fails after `timeoutMs`. */
export async function until (probe: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
