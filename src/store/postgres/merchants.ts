import { writeAudit } from './audit'
import { auditEntry } from '../audit-scope'
import { EmailTakenError } from '../../domain/merchants'
import { merchantFromRow as fromRow } from '../rows'
import type { MerchantStore } from '../types'
import { merchantParams, sharedMerchantStore, merchantSql, updateParams } from '../merchants'
import { postgresKeyStatements } from './idempotency'
import { inTransaction, uniqueViolationOf, type PgPool } from './connection'
import { appendEventOf } from './events'
import { postgresRunner } from './runner'

/** A unique violation of the lower(email) index becomes the domain conflict the SQLite store throws too. */
async function translate<T> (write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (uniqueViolationOf(error) === 'merchants_email_unique') throw new EmailTakenError()
    throw error
  }
}

export function postgresMerchantStore (pool: PgPool): MerchantStore {
  return {
    ...sharedMerchantStore(postgresRunner(pool)),
    async create (merchant, completion) {
      await translate(async () => {
        await inTransaction(pool, 'READ COMMITTED', async (client) => {
          await postgresRunner(client).write(merchantSql.insert, merchantParams(merchant))
          await writeAudit(client, auditEntry(merchant.id, 'succeeded', merchant.id))
          if (completion !== undefined) await postgresKeyStatements.storeResponse(client, completion.ref, completion.response)
        })
      })
      return { ...merchant }
    },
    /*
     * In READ COMMITTED a concurrent writer's UPDATE makes ours wait and then re-check
     * `version = expectedVersion` on the committed row, so exactly one of them updates; the
     * loser reads the winner's row in the same transaction to report the mismatch.
     */
    async update (id, expectedVersion, fields, updatedAt, event) {
      return await translate(async () => await inTransaction(pool, 'READ COMMITTED', async (client) => {
        const db = postgresRunner(client)
        const updated = await db.get(merchantSql.update, updateParams(id, expectedVersion, fields, updatedAt))
        if (updated !== undefined) {
          const merchant = fromRow(updated)
          // merchant.updated in the update's transaction, under its row lock.
          await appendEventOf(client, event, merchant)
          return { kind: 'updated' as const, merchant }
        }
        const current = await db.get(merchantSql.get, { id })
        return current === undefined ? { kind: 'not_found' as const } : { kind: 'version_mismatch' as const, current: fromRow(current) }
      }))
    }
  }
}
