import { dialects, migrationsFor } from '../migrations'

export const sqliteMigrations = migrationsFor(dialects.sqlite)
