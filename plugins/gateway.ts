import fp from 'fastify-plugin'
import type { PaymentGateway } from '../src/gateway/types'
import { simulatedGateway } from '../src/gateway/simulated'
import { withTimeout } from '../src/gateway/with-timeout'

declare module 'fastify' {
  interface FastifyInstance {
    gateway: PaymentGateway
  }
}

export interface GatewayPluginOptions {
  /** A gateway to use instead of the configured one (tests inject fakes and spies). */
  gateway?: PaymentGateway
}

/** The payment gateway, chosen by GATEWAY and bounded by GATEWAY_TIMEOUT_MS. */
export default fp<GatewayPluginOptions>(async (app, opts) => {
  const gateway = opts.gateway ?? simulatedGateway(app.db.ledger, { latencyMs: app.config.GATEWAY_SIM_LATENCY_MS })
  app.decorate('gateway', withTimeout(gateway, app.config.GATEWAY_TIMEOUT_MS))
}, { name: 'gateway', dependencies: ['config', 'database'], fastify: '5.x' })
