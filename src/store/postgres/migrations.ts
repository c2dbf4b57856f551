import { migrationsFor } from '../migrations'

export const postgresMigrations = migrationsFor('postgres')
