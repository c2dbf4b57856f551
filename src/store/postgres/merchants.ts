import { EmailTakenError } from '../../domain/merchants'
import { merchantFromRow as fromRow, type MerchantRow } from '../rows'
import type { MerchantStore } from '../types'
import { postgresKeyStatements } from './idempotency'
import { inTransaction, uniqueViolationOf, type PgPool } from './connection'
import { listPage } from '../listing'
import { appendEventOf } from './events'

/** A unique violation of the lower(email) index becomes the domain conflict the SQLite store throws too. */
async function translate<T> (write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (uniqueViolationOf(error) === 'merchants_email_unique') throw new EmailTakenError()
    throw error
  }
}

const COLUMNS = 'id, name, email, country, default_currency, status, metadata, version, created_at, updated_at'

export function postgresMerchantStore (pool: PgPool): MerchantStore {
  return {
    async create (merchant, completion) {
      await translate(async () => {
        await inTransaction(pool, 'READ COMMITTED', async (client) => {
          await client.query({
            name: 'merchant-insert',
            text: `INSERT INTO merchants (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
            values: [merchant.id, merchant.name, merchant.email, merchant.country, merchant.defaultCurrency,
              merchant.status, JSON.stringify(merchant.metadata), merchant.version, merchant.createdAt, merchant.updatedAt]
          })
          if (completion !== undefined) await postgresKeyStatements.storeResponse(client, completion.ref, completion.response)
        })
      })
      return { ...merchant }
    },
    async get (id) {
      const { rows } = await pool.query<MerchantRow>({ name: 'merchant-get', text: `SELECT ${COLUMNS} FROM merchants WHERE id = $1`, values: [id] })
      return rows.length === 0 ? undefined : fromRow(rows[0])
    },
    /*
     * The compare-and-set: only the writer that still sees `expectedVersion` wins. In
     * READ COMMITTED a concurrent writer's UPDATE makes ours wait and then re-check
     * `version = $expected` on the committed row, so exactly one of them updates; the
     * loser reads the winner's row in the same transaction to report the mismatch.
     */
    async update (id, expectedVersion, fields, updatedAt, event) {
      return await translate(async () => await inTransaction(pool, 'READ COMMITTED', async (client) => {
        const updated = await client.query<MerchantRow>({
          name: 'merchant-update',
          text: `UPDATE merchants
            SET name = $3, email = $4, country = $5, default_currency = $6, status = $7, metadata = $9, version = version + 1, updated_at = $8
            WHERE id = $1 AND version = $2
            RETURNING ${COLUMNS}`,
          values: [id, expectedVersion, fields.name, fields.email, fields.country, fields.defaultCurrency, fields.status, updatedAt, JSON.stringify(fields.metadata)]
        })
        if (updated.rows.length === 1) {
          const merchant = fromRow(updated.rows[0])
          // merchant.updated in the update's transaction, under its row lock.
          await appendEventOf(client, event, merchant)
          return { kind: 'updated' as const, merchant }
        }
        const { rows } = await client.query<MerchantRow>({ name: 'merchant-get', text: `SELECT ${COLUMNS} FROM merchants WHERE id = $1`, values: [id] })
        return rows.length === 0 ? { kind: 'not_found' as const } : { kind: 'version_mismatch' as const, current: fromRow(rows[0]) }
      }))
    },
    async list (page) {
      const result = await listPage<MerchantRow>('postgres', async (text, values) => (await pool.query<MerchantRow>(text, values)).rows,
        { table: 'merchants', scope: {}, page })
      return { data: result.data.map(fromRow), hasMore: result.hasMore }
    }
  }
}
