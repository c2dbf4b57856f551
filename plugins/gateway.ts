import fp from 'fastify-plugin'
import type { PaymentGateway } from '../src/gateway/types'
import { simulatedGateway } from '../src/gateway/simulated/gateway'
import { withTimeout } from '../src/gateway/with-timeout'
import { instrumentGateway } from './metrics'
import { simulatedBankAddress } from '../schemas/checkout'

declare module 'fastify' {
  interface FastifyInstance {
    gateway: PaymentGateway
  }
}

export interface GatewayPluginOptions {
  /** A gateway to use instead of the configured one (tests inject fakes and spies). */
  gateway?: PaymentGateway
}

/** The payment gateway, chosen by GATEWAY, bounded by GATEWAY_TIMEOUT_MS and measured. */
export default fp<GatewayPluginOptions>(async (app, opts) => {
  const publicBaseUrl = app.config.PUBLIC_BASE_URL
  const gateway = opts.gateway ?? simulatedGateway(app.db.ledger, {
    latencyMs: app.config.GATEWAY_SIM_LATENCY_MS,
    ...(publicBaseUrl === undefined ? {} : { bankUrl: (page) => simulatedBankAddress(publicBaseUrl, { ...page, account: null }) })
  })
  app.decorate('gateway', instrumentGateway(withTimeout(gateway, app.config.GATEWAY_TIMEOUT_MS), app.metrics))
}, { name: 'gateway', dependencies: ['config', 'database', 'metrics'], fastify: '5.x' })
