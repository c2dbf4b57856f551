import { dialects, migrationsFor } from '../migrations'

export type { Migration } from '../migrations'
export const sqliteMigrations = migrationsFor(dialects.sqlite)
