import type { Merchant, MerchantFields } from '../domain/merchants'
import { listPage } from './listing'
import { merchantFromRow, type MerchantRow } from './rows'
import { raw, sql, type SqlRunner } from './sql'
import type { MerchantStore } from './types'

const COLUMNS = raw('id, name, email, country, default_currency, status, metadata, api_version, version, created_at, updated_at')

/** Metadata is stored as JSON text. */
type MerchantParams = Omit<Merchant, 'metadata'> & { metadata: string }
type UpdateParams = Omit<MerchantFields, 'metadata'> & { metadata: string, id: string, expectedVersion: number, updatedAt: string }

export const merchantSql = {
  get: sql<{ id: string }, MerchantRow>('merchant-get')`SELECT ${COLUMNS} FROM merchants WHERE id = ${'id'}`,
  insert: sql<MerchantParams>('merchant-insert')`
    INSERT INTO merchants (${COLUMNS})
    VALUES (${'id'}, ${'name'}, ${'email'}, ${'country'}, ${'defaultCurrency'}, ${'status'}, ${'metadata'}, ${'apiVersion'}, ${'version'}, ${'createdAt'}, ${'updatedAt'})`,
  /** The compare-and-set: only the writer that still sees `expectedVersion` wins (and gets the row back). */
  update: sql<UpdateParams, MerchantRow>('merchant-update')`
    UPDATE merchants
    SET name = ${'name'}, email = ${'email'}, country = ${'country'}, default_currency = ${'defaultCurrency'},
        status = ${'status'}, metadata = ${'metadata'}, api_version = ${'apiVersion'}, version = version + 1, updated_at = ${'updatedAt'}
    WHERE id = ${'id'} AND version = ${'expectedVersion'}
    RETURNING ${COLUMNS}`
}

export const merchantParams = (merchant: Merchant): MerchantParams => ({ ...merchant, metadata: JSON.stringify(merchant.metadata) })

export const updateParams = (id: string, expectedVersion: number, fields: MerchantFields, updatedAt: string): UpdateParams =>
  ({ ...fields, metadata: JSON.stringify(fields.metadata), id, expectedVersion, updatedAt })

/** The merchant store's reads, the same on both databases (its writes run in each dialect's transactions). */
export function sharedMerchantStore (db: SqlRunner): Pick<MerchantStore, 'get' | 'list'> {
  return {
    async get (id) {
      const row = await db.get(merchantSql.get, { id })
      return row === undefined ? undefined : merchantFromRow(row)
    },
    async list (page) {
      const result = await listPage<MerchantRow>(db, { table: 'merchants', scope: {}, page })
      return { data: result.data.map(merchantFromRow), hasMore: result.hasMore }
    }
  }
}
