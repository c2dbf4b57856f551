import type { Product, ProductStore } from '../types'
import type { SqliteHandle } from './connection'
import { immediateWrites, type WriteQueue } from './group-commit'

export function sqliteProductStore (db: SqliteHandle, writes: WriteQueue = immediateWrites(db)): ProductStore {
  const select = db.prepare<[string], Product>('SELECT id, name, price FROM products WHERE id = ?')
  const upsert = db.prepare(`
    INSERT INTO products (id, name, price, updated_at) VALUES (@id, @name, @price, @updatedAt)
    ON CONFLICT (id) DO UPDATE SET name = excluded.name, price = excluded.price, updated_at = excluded.updated_at
  `)
  return {
    async get (id) {
      return select.get(id)
    },
    async put (product) {
      const row = { ...product, updatedAt: new Date().toISOString() }
      await writes.run(() => upsert.run(row))
      return { id: product.id, name: product.name, price: product.price }
    }
  }
}
