import fp from 'fastify-plugin'
import { merchantService, type MerchantService } from '../src/services/merchants'
import { paymentService, type PaymentService, type RenderSettled } from '../src/services/payments'
import { productService, type ProductService } from '../src/services/products'
import { refundService, type RefundService, type RenderRefund } from '../src/services/refunds'
import { captureService, type CaptureService, type RenderCapture } from '../src/services/captures'
import type { Merchant } from '../src/domain/merchants'
import type { StoredResponse } from '../src/store/types'
import { eventFactory, eventService, type EventFactory, type EventRenderers, type EventService } from '../src/services/events'

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
  }
}

export interface ServicesOptions {
  /** How a settled payment is stored on its idempotency key: the payments routes' renderer. */
  renderSettledPayment: RenderSettled
  /** How a settled refund is stored on its idempotency key: the payments routes' renderer. */
  renderRefund: RenderRefund
  /** How a capture's outcome is stored on its idempotency key: the payments routes' renderer. */
  renderCapture: RenderCapture
  /** How a new merchant is stored on its idempotency key: the merchants routes' renderer. */
  renderMerchantCreated: (merchant: Merchant) => StoredResponse
  /** How resources appear in events: as the API returns them (the routes' renderers). */
  eventRenderers: EventRenderers
}

/**
 * The domain services, built once over the decorated infrastructure (database, gateway, clock).
 * Every route reaches data through them. The renderers of stored responses come from the
 * composition root, so this plugin does not depend on routes.
 */
export default fp<ServicesOptions>(async (app, options) => {
  const events = eventFactory({ clock: app.clock, render: options.eventRenderers })
  app.decorate('eventFactory', events)
  app.decorate('events', eventService({ db: app.db, clock: app.clock }))
  app.decorate('payments', paymentService({
    db: app.db,
    gateway: app.gateway,
    clock: app.clock,
    log: app.log,
    renderSettled: options.renderSettledPayment,
    events,
    authorizationTtlSeconds: app.config.AUTHORIZATION_TTL_SECONDS
  }))
  app.decorate('captures', captureService({
    db: app.db,
    gateway: app.gateway,
    clock: app.clock,
    log: app.log,
    renderCapture: options.renderCapture,
    holdMs: app.config.IDEMPOTENCY_LOCK_SECONDS * 1000,
    events
  }))
  app.decorate('refunds', refundService({ db: app.db, gateway: app.gateway, clock: app.clock, log: app.log, renderRefund: options.renderRefund, events }))
  app.decorate('merchants', merchantService({
    merchants: app.db.merchants,
    clock: app.clock,
    renderCreated: options.renderMerchantCreated,
    updatedEvent: events.merchant,
    onStatusChanged: app.forgetCredentials
  }))
  app.decorate('products', productService(app.db.products))
}, { name: 'services', dependencies: ['database', 'gateway', 'clock', 'credential-cache'], fastify: '5.x' })
