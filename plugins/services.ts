import fp from 'fastify-plugin'
import { paymentResponse } from './stored-responses'
import { merchantService, type MerchantService } from '../src/services/merchants'
import { paymentService, type PaymentService } from '../src/services/payments'
import { productService, type ProductService } from '../src/services/products'
import { refundService, type RefundService } from '../src/services/refunds'
import { captureService, type CaptureService } from '../src/services/captures'
import { eventService, type EventService } from '../src/services/events'
import { eventFactory, type EventFactory } from '../src/domain/event-factory'
import { connectorAccountSource } from '../src/services/connectors'
import type { InboundPorts, InboundReceiver } from '../src/gateway/inbound'
import type { FastifyInstance } from 'fastify'
import { disputeService, type DisputeService } from '../src/services/disputes'
import { auditLogService, type AuditLogService } from '../src/services/audit-log'
import { returnAddress } from '../schemas/checkout'

declare module 'fastify' {
  interface FastifyInstance {
    payments: PaymentService
    refunds: RefundService
    captures: CaptureService
    merchants: MerchantService
    products: ProductService
    events: EventService
    /** Builds the event of each change (the stores write it in the change's transaction). */
    eventFactory: EventFactory
    /** Disputes the PSPs report (issue 40). */
    disputes: DisputeService
    /** The audit log's read side (issue 43). */
    auditLog: AuditLogService
    /**
     * The PSPs' own events (webhooks, notifications) by connector type: each module's receiver (src/gateway/<psp>/),
     * which verifies a delivery, records it in the inbox and acts on it once.
     */
    connectorEvents: ReadonlyMap<string, InboundReceiver>
  }
}

/** What the PSPs' own events may change here (src/gateway/inbound.ts): the app's services' transitions for connector reports. */
export function inboundPortsOf (app: FastifyInstance): InboundPorts {
  return {
    db: app.db,
    accounts: connectorAccountSource(app.db.connectors, app.secretBox),
    connectors: app.connectors,
    payments: app.payments,
    captures: app.captures,
    refunds: app.refunds,
    disputes: app.disputes,
    clock: app.clock,
    log: app.log
  }
}

/**
 * The domain services, built once over the decorated infrastructure (database, gateway, clock).
 * Every route reaches data through them. The events they write carry snapshots of the changed
 * resources (src/domain/event-factory.ts); the edge renders them when they are listed or delivered.
 */
export default fp(async (app) => {
  const events = eventFactory({ clock: app.clock })
  const publicBaseUrl = app.config.PUBLIC_BASE_URL
  app.decorate('eventFactory', events)
  app.decorate('events', eventService({ db: app.db, clock: app.clock }))
  app.decorate('auditLog', auditLogService({ db: app.db }))
  app.decorate('payments', paymentService({
    db: app.db,
    gateway: app.gateway,
    connectors: app.connectors,
    registry: app.connectorRegistry,
    clock: app.clock,
    log: app.log,
    events,
    authorizationTtlSeconds: app.config.AUTHORIZATION_TTL_SECONDS,
    respond: paymentResponse,
    ...(publicBaseUrl === undefined ? {} : { returnAddress: (token: string) => returnAddress(publicBaseUrl, token) })
  }))
  // The failures of the interval still open are summed up before the process goes.
  app.addHook('onClose', async () => { app.payments.flushFailureLog() })
  app.decorate('captures', captureService({
    db: app.db,
    gateway: app.gateway,
    connectors: app.connectors,
    clock: app.clock,
    log: app.log,
    holdMs: app.config.IDEMPOTENCY_LOCK_SECONDS * 1000,
    actionTtlSeconds: app.config.ACTION_TTL_SECONDS,
    events
  }))
  app.decorate('refunds', refundService({ db: app.db, gateway: app.gateway, connectors: app.connectors, clock: app.clock, log: app.log, events }))
  app.decorate('merchants', merchantService({
    merchants: app.db.merchants,
    clock: app.clock,
    updatedEvent: events.merchant,
    onStatusChanged: app.forgetCredentials
  }))
  app.decorate('products', productService(app.db.products))
  app.decorate('disputes', disputeService({ db: app.db, connectors: app.connectors, clock: app.clock, log: app.log, events }))
  const ports = inboundPortsOf(app)
  app.decorate('connectorEvents', new Map(app.connectorRegistry.modules.flatMap((module) =>
    module.inbound === undefined ? [] : [[module.type, module.inbound.receiver(ports)] as const])))
}, { name: 'services', dependencies: ['database', 'gateway', 'connectors', 'secrets', 'clock', 'credential-cache'], fastify: '5.x' })
