/**
 * Storage contracts. Routes and domain code only see these async interfaces;
 * SQLite (embedded default) and PostgreSQL (scale-out) both implement them and
 * share one contract test suite (test/store/contract.ts).
 */
export interface Product {
  id: string
  name: string
  price: number
}

export interface ProductStore {
  get: (id: string) => Promise<Product | undefined>
  /** Replaces the whole product, or creates it. */
  put: (product: Product) => Promise<Product>
}

export interface Database {
  readonly kind: 'sqlite' | 'postgres'
  readonly products: ProductStore
  /** Resolves when the database answers a trivial query. */
  ping: () => Promise<void>
  close: () => Promise<void>
}
