import { NotFoundError } from '../domain/errors'
import type { Product, ProductStore } from '../store/types'

export interface ProductService {
  /** The product stored at `id`; NotFoundError when there is none. */
  get: (id: string) => Promise<Product>
  /** The product stored at `id`, or undefined. */
  find: (id: string) => Promise<Product | undefined>
  /** Creates or replaces the whole product at its id. */
  put: (product: Product) => Promise<Product>
}

export function productService (store: ProductStore): ProductService {
  return {
    async get (id) {
      const product = await store.get(id)
      if (product === undefined) throw new NotFoundError('product not found')
      return product
    },
    find: async (id) => await store.get(id),
    put: async (product) => await store.put(product)
  }
}
