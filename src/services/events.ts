import { NotFoundError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import { paymentEventType, type DomainEvent, type EventOf, type NewEvent } from '../domain/events'
import type { Merchant } from '../domain/merchants'
import type { Payment } from '../domain/payments'
import type { Refund } from '../domain/refunds'
import { toEndpointResource, type WebhookEndpoint } from '../domain/webhooks'
import type { Page } from '../domain/pagination'
import type { Database, EventListQuery, RefundDecision } from '../store/types'

/** How the resources appear in events: exactly as the API returns them (the routes' renderers, handed over by the composition root). */
export interface EventRenderers {
  payment: (payment: Payment) => object
  refund: (refund: Refund) => object
  merchant: (merchant: Merchant) => object
}

/** Builds the event of each kind of change; the stores call these inside the change's transaction. */
export interface EventFactory {
  /** payment.succeeded / declined / failed / canceled / pending, from the payment's status; none for payments without a merchant. */
  payment: EventOf<Payment>
  /** refund.succeeded / refund.failed. */
  refund: EventOf<RefundDecision>
  merchant: EventOf<Merchant>
  endpointDisabled: EventOf<WebhookEndpoint>
}

export function eventFactory (deps: { clock: () => number, render: EventRenderers, newId?: () => string }): EventFactory {
  const make = (fields: Omit<NewEvent, 'id' | 'createdAt'>): NewEvent => ({
    id: (deps.newId ?? newId)(),
    createdAt: new Date(deps.clock()).toISOString(),
    ...fields
  })
  const data = (value: object): Record<string, unknown> => JSON.parse(JSON.stringify(value)) as Record<string, unknown>
  return {
    payment: (payment) => {
      const type = paymentEventType(payment.status)
      if (type === undefined || payment.merchantId === null) return undefined
      return make({ type, merchantId: payment.merchantId, resourceType: 'payment', resourceId: payment.id, data: data(deps.render.payment(payment)) })
    },
    refund: ({ refund, payment }) => {
      if (payment.merchantId === null || refund.status === 'pending') return undefined
      return make({ type: refund.status === 'succeeded' ? 'refund.succeeded' : 'refund.failed', merchantId: payment.merchantId, resourceType: 'refund', resourceId: refund.id, data: data(deps.render.refund(refund)) })
    },
    merchant: (merchant) => make({ type: 'merchant.updated', merchantId: merchant.id, resourceType: 'merchant', resourceId: merchant.id, data: data(deps.render.merchant(merchant)) }),
    endpointDisabled: (endpoint) => make({ type: 'webhook_endpoint.disabled', merchantId: endpoint.merchantId, resourceType: 'webhook_endpoint', resourceId: endpoint.id, data: data(toEndpointResource(endpoint)) })
  }
}

export interface EventService {
  /** The merchant's events, newest first. */
  list: (query: EventListQuery) => Promise<Page<DomainEvent>>
  /** One of the merchant's events; another merchant's (or an unknown id) is NotFoundError. */
  get: (merchantId: string, id: string) => Promise<DomainEvent>
  /** Deletes events older than the retention (the reaper); returns how many. */
  reap: (retentionDays: number) => Promise<number>
}

export function eventService (deps: { db: Database, clock: () => number }): EventService {
  return {
    list: async (query) => await deps.db.events.list(query),
    async get (merchantId, id) {
      const event = isGuid(id) ? await deps.db.events.get(merchantId, id.toLowerCase()) : undefined
      if (event === undefined) throw new NotFoundError(`No event has the id '${id.length <= 64 ? id : `${id.slice(0, 64)}…`}'.`)
      return event
    },
    async reap (retentionDays) {
      const before = new Date(deps.clock() - retentionDays * 86_400_000).toISOString()
      let total = 0
      for (;;) {
        const deleted = await deps.db.events.reap(before, 500)
        total += deleted
        if (deleted < 500) return total
      }
    }
  }
}
