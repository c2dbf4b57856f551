import type { Test } from 'tap'
import { newId } from '../../src/domain/ids'
import type { Database } from '../../src/store/types'

const T0 = '2026-01-01T00:00:00.000Z'
const T1 = '2026-01-01T00:00:05.000Z'

/** The ConnectorEventStore contract (the PSP webhooks' inbox): SQLite and PostgreSQL run it unchanged. */
export function connectorEventStoreContract (t: Test, makeDatabase: () => Promise<Database>): void {
  async function fresh (t: Test): Promise<Database> {
    const db = await makeDatabase()
    t.teardown(async () => { await db.close() })
    return db
  }

  t.test('record stores an event unprocessed and returns it; unknown events are undefined', async (t) => {
    const db = await fresh(t)
    const connectorId = newId()
    const recorded = await db.connectorEvents.record({ connectorId, eventId: 'evt_1', type: 'payment_intent.succeeded', receivedAt: T0 })
    t.same(recorded, { connectorId, eventId: 'evt_1', type: 'payment_intent.succeeded', receivedAt: T0, processedAt: null })
    t.same(await db.connectorEvents.get(connectorId, 'evt_1'), recorded)
    t.equal(await db.connectorEvents.get(connectorId, 'evt_2'), undefined)
    t.equal(await db.connectorEvents.get(newId(), 'evt_1'), undefined, 'an event id is per connector account')
  })

  t.test('recording again keeps the first record (and its processing); markProcessed once', async (t) => {
    const db = await fresh(t)
    const connectorId = newId()
    await db.connectorEvents.record({ connectorId, eventId: 'evt_1', type: 'refund.failed', receivedAt: T0 })
    const again = await db.connectorEvents.record({ connectorId, eventId: 'evt_1', type: 'other', receivedAt: T1 })
    t.same(again, { connectorId, eventId: 'evt_1', type: 'refund.failed', receivedAt: T0, processedAt: null }, 'recorded but not processed: still to be processed')
    t.equal(await db.connectorEvents.markProcessed(connectorId, 'evt_1', T1), true)
    t.equal(await db.connectorEvents.markProcessed(connectorId, 'evt_1', T0), false, 'processed once')
    t.equal(await db.connectorEvents.markProcessed(connectorId, 'evt_unknown', T1), false)
    t.same(await db.connectorEvents.record({ connectorId, eventId: 'evt_1', type: 'refund.failed', receivedAt: T1 }),
      { connectorId, eventId: 'evt_1', type: 'refund.failed', receivedAt: T0, processedAt: T1 }, 'a redelivery sees it processed')
    const other = newId()
    t.same((await db.connectorEvents.record({ connectorId: other, eventId: 'evt_1', type: 'refund.failed', receivedAt: T1 })).processedAt, null,
      'the same event id at another connector account is another event')
  })

  t.test('unprocessed lists events recorded with a payload and never processed, oldest first, before a time', async (t) => {
    const db = await fresh(t)
    const connectorId = newId()
    await db.connectorEvents.record({ connectorId, eventId: 'A:CAPTURE:true', type: 'adyen:CAPTURE', receivedAt: T1, payload: '{"a":1}' })
    await db.connectorEvents.record({ connectorId, eventId: 'B:REFUND:true', type: 'adyen:REFUND', receivedAt: T0, payload: '{"b":2}' })
    await db.connectorEvents.record({ connectorId, eventId: 'evt_no_payload', type: 'refund.failed', receivedAt: T0 })
    await db.connectorEvents.record({ connectorId, eventId: 'C:REFUND:true', type: 'adyen:REFUND', receivedAt: T0, payload: '{}' })
    await db.connectorEvents.markProcessed(connectorId, 'C:REFUND:true', T1)
    const waiting = await db.connectorEvents.unprocessed({ receivedBefore: '2026-01-02T00:00:00.000Z', limit: 10 })
    t.same(waiting.map((event) => [event.eventId, event.payload, event.processedAt]), [['B:REFUND:true', '{"b":2}', null], ['A:CAPTURE:true', '{"a":1}', null]])
    t.same((await db.connectorEvents.unprocessed({ receivedBefore: T1, limit: 10 })).map((event) => event.eventId), ['B:REFUND:true'], 'only those received before')
    t.equal((await db.connectorEvents.unprocessed({ receivedBefore: T1, limit: 0 })).length, 0)
    t.same(await db.connectorEvents.get(connectorId, 'A:CAPTURE:true'), { connectorId, eventId: 'A:CAPTURE:true', type: 'adyen:CAPTURE', receivedAt: T1, processedAt: null })
  })

  t.test('refunds made at a connector: each recorded once by its reference, summed per charge and currency with the last arrival', async (t) => {
    const db = await fresh(t)
    const connectorId = newId()
    const refund = { connectorId, refundReference: 're_1', chargeReference: 'pi_1', amountMinor: 500, currency: 'EUR', receivedAt: T0 }
    t.same(await db.connectorEvents.refundedAtConnector(connectorId, 'pi_1', 'EUR'), { amountMinor: 0, lastAt: null }, 'none yet')
    await db.connectorEvents.recordRefundAtConnector(refund)
    await db.connectorEvents.recordRefundAtConnector({ ...refund, amountMinor: 999, receivedAt: T1 })
    t.same(await db.connectorEvents.refundedAtConnector(connectorId, 'pi_1', 'EUR'), { amountMinor: 500, lastAt: T0 }, 'the same refund reported again counts once')
    await db.connectorEvents.recordRefundAtConnector({ ...refund, refundReference: 're_2', amountMinor: 250, receivedAt: T1 })
    await db.connectorEvents.recordRefundAtConnector({ ...refund, refundReference: 're_3', chargeReference: 'pi_2', amountMinor: 4000000000000 })
    await db.connectorEvents.recordRefundAtConnector({ ...refund, refundReference: 're_4', currency: 'USD' })
    await db.connectorEvents.recordRefundAtConnector({ ...refund, connectorId: newId() })
    t.same(await db.connectorEvents.refundedAtConnector(connectorId, 'pi_1', 'EUR'), { amountMinor: 750, lastAt: T1 }, 'this charge\'s, in this currency, at this account')
    t.same(await db.connectorEvents.refundedAtConnector(connectorId, 'pi_2', 'EUR'), { amountMinor: 4000000000000, lastAt: T0 }, '64-bit amounts')
  })

  t.test('awaitingOutcomes: nothing waits in an empty database', async (t) => {
    const db = await fresh(t)
    t.same(await db.connectorEvents.awaitingOutcomes({ connectorType: 'adyen', before: T1, limit: 10 }), [])
  })
}
