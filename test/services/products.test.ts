import t from 'tap'
import { productService } from '../../src/services/products'
import type { Product } from '../../src/store/types'

t.test('the products service reads and replaces through the store, and an unknown id is a NotFoundError', async (t) => {
  const stored = new Map<string, Product>()
  const products = productService({
    get: async (id) => stored.get(id),
    put: async (product) => { stored.set(product.id, product); return product }
  })
  await t.rejects(products.get('sku-1'), { code: 'NOT_FOUND', message: 'product not found' })
  t.same(await products.put({ id: 'sku-1', name: 'Cup', price: 2 }), { id: 'sku-1', name: 'Cup', price: 2 })
  t.same(await products.get('sku-1'), { id: 'sku-1', name: 'Cup', price: 2 })
})
