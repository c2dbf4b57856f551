import { auditWrites } from './audit-log'
import { sql, type SqlRunner } from './sql'
import type { Product, ProductStore } from './types'

const productSql = {
  get: sql<{ id: string }, Product>('product-get')`SELECT id, name, price FROM products WHERE id = ${'id'}`,
  put: sql<Product & { updatedAt: string }>('product-upsert')`
    INSERT INTO products (id, name, price, updated_at) VALUES (${'id'}, ${'name'}, ${'price'}, ${'updatedAt'})
    ON CONFLICT (id) DO UPDATE SET name = excluded.name, price = excluded.price, updated_at = excluded.updated_at`
}

/** The product store, the same on both databases: one statement per call. */
export function productStore (db: SqlRunner): ProductStore {
  return {
    async get (id) {
      return await db.get(productSql.get, { id })
    },
    async put (product) {
      await db.writeThen(productSql.put, { id: product.id, name: product.name, price: product.price, updatedAt: new Date().toISOString() }, auditWrites(product.id, null))
      return { id: product.id, name: product.name, price: product.price }
    }
  }
}
