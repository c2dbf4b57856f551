import { EmailTakenError, type Merchant } from '../../domain/merchants'
import { merchantFromRow as fromRow, type MerchantRow } from '../rows'
import type { KeyCompletion, MerchantStore } from '../types'
import type { SqliteHandle } from './connection'
import { listPage } from '../listing'
import { sqliteKeyStatements } from './idempotency'
import { sqliteOutbox } from './events'
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
  const columns = 'id, name, email, country, default_currency, status, metadata, version, created_at, updated_at'
  const select = db.prepare<[string], MerchantRow>(`SELECT ${columns} FROM merchants WHERE id = ?`)
  const insert = db.prepare(`
    INSERT INTO merchants (${columns})
    VALUES (@id, @name, @email, @country, @defaultCurrency, @status, @metadata, @version, @createdAt, @updatedAt)
  `)
  // The compare-and-set: only the writer that still sees `expectedVersion` wins.
  const update = db.prepare(`
    UPDATE merchants
    SET name = @name, email = @email, country = @country, default_currency = @defaultCurrency,
        status = @status, metadata = @metadata, version = version + 1, updated_at = @updatedAt
    WHERE id = @id AND version = @expectedVersion
  `)
  const keys = sqliteKeyStatements(db)
  const outbox = sqliteOutbox(db)
  const insertCompleting = db.transaction((merchant: Merchant, completion?: KeyCompletion) => {
    insert.run({ ...merchant, metadata: JSON.stringify(merchant.metadata) })
    if (completion !== undefined) keys.storeResponse(completion.ref, completion.response)
  })
  const updateAndRead = db.transaction((params: Record<string, unknown>, event?: EventOf<Merchant>) => {
    const changed = update.run(params).changes
    const row = select.get(params.id as string)
    // merchant.updated in the update's transaction, only when the compare-and-set won.
    if (changed === 1 && row !== undefined) outbox.appendOf(event, fromRow(row))
    return { changed, row }
  })

  return {
    async create (merchant, completion) {
      translate(() => { insertCompleting.immediate(merchant, completion) })
      return { ...merchant }
    },
    async get (id) {
      const row = select.get(id)
      return row === undefined ? undefined : fromRow(row)
    },
    async update (id, expectedVersion, fields, updatedAt, event) {
      const { changed, row } = translate(() => updateAndRead.immediate({ ...fields, metadata: JSON.stringify(fields.metadata), id, expectedVersion, updatedAt }, event))
      if (row === undefined) return { kind: 'not_found' }
      if (changed === 0) return { kind: 'version_mismatch', current: fromRow(row) }
      return { kind: 'updated', merchant: fromRow(row) }
    },
    async list (page) {
      const result = await listPage<MerchantRow>('sqlite', async (text, values) => db.prepare(text).all(...values) as MerchantRow[],
        { table: 'merchants', scope: {}, page })
      return { data: result.data.map(fromRow), hasMore: result.hasMore }
    }
  }
}
