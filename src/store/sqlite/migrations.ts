import { migrationsFor } from '../migrations'

export const sqliteMigrations = migrationsFor('sqlite')
