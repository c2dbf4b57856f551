import { dialects, migrationsFor } from '../migrations'

export const postgresMigrations = migrationsFor(dialects.postgres)
