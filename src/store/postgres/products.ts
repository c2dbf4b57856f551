import type { Product, ProductStore } from '../types'
import type { PgPool } from './connection'

export function postgresProductStore (pool: PgPool): ProductStore {
  return {
    async get (id) {
      const { rows } = await pool.query<Product>({ name: 'product-get', text: 'SELECT id, name, price FROM products WHERE id = $1', values: [id] })
      return rows[0]
    },
    async put (product) {
      await pool.query({
        name: 'product-upsert',
        text: `INSERT INTO products (id, name, price, updated_at) VALUES ($1, $2, $3, $4)
          ON CONFLICT (id) DO UPDATE SET name = excluded.name, price = excluded.price, updated_at = excluded.updated_at`,
        values: [product.id, product.name, product.price, new Date().toISOString()]
      })
      return { id: product.id, name: product.name, price: product.price }
    }
  }
}
