import { sqliteAuditWriter } from './audit'
import { auditEntry } from '../audit-scope'
import { EmailTakenError, type Merchant } from '../../domain/merchants'
import { merchantFromRow as fromRow } from '../rows'
import type { KeyCompletion, MerchantStore } from '../types'
import type { SqliteHandle } from './connection'
import { merchantParams, sharedMerchantStore, merchantSql, updateParams } from '../merchants'
import { sqliteKeyStatements } from './idempotency'
import { sqliteOutbox } from './events'
import { prepare, sqliteRunner } from './runner'
import type { EventOf } from '../../domain/events'

/** better-sqlite3 reports `UNIQUE constraint failed: index 'merchants_email_unique'`. */
function isEmailViolation (error: unknown): boolean {
  const err = error as { code?: string, message?: string }
  return err.code === 'SQLITE_CONSTRAINT_UNIQUE' && /merchants_email_unique/.test(err.message ?? '')
}

function translate<T> (write: () => T): T {
  try {
    return write()
  } catch (error) {
    if (isEmailViolation(error)) throw new EmailTakenError()
    throw error
  }
}

export function sqliteMerchantStore (db: SqliteHandle): MerchantStore {
  const select = prepare(db, merchantSql.get)
  const insert = prepare(db, merchantSql.insert)
  const update = prepare(db, merchantSql.update)
  const keys = sqliteKeyStatements(db)
  const outbox = sqliteOutbox(db)
  const audit = sqliteAuditWriter(db)
  const insertCompleting = db.transaction((merchant: Merchant, completion?: KeyCompletion) => {
    insert.run(merchantParams(merchant))
    audit(auditEntry(merchant.id, 'succeeded', merchant.id))
    if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
  })
  const updateAndRead = db.transaction((params: Parameters<typeof update.get>[0], event?: EventOf<Merchant>): Awaited<ReturnType<MerchantStore['update']>> => {
    const updated = update.get(params)
    if (updated !== undefined) {
      const merchant = fromRow(updated)
      // merchant.updated in the update's transaction, only when the compare-and-set won.
      outbox.appendOf(event, merchant)
      return { kind: 'updated', merchant }
    }
    const current = select.get({ id: params.id })
    return current === undefined ? { kind: 'not_found' } : { kind: 'version_mismatch', current: fromRow(current) }
  })

  return {
    ...sharedMerchantStore(sqliteRunner(db)),
    async create (merchant, completion) {
      translate(() => { insertCompleting.immediate(merchant, completion) })
      return { ...merchant }
    },
    async update (id, expectedVersion, fields, updatedAt, event) {
      return translate(() => updateAndRead.immediate(updateParams(id, expectedVersion, fields, updatedAt), event))
    }
  }
}
