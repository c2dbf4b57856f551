import { NotFoundError } from '../domain/errors'
import { isGuid } from '../domain/ids'
import type { DomainEvent } from '../domain/events'
import type { Page } from '../domain/pagination'
import type { Database, EventListQuery } from '../store/types'

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
