import { readFileSync, writeFileSync } from 'node:fs'
import type { Config } from '../config'
import { sqlitePathFromUrl } from '../store/sqlite/connection'
import { newEncryptionKeyEntry, parseEncryptionKeys, type EncryptionKey } from './encryption'

export interface EncryptionKeys {
  keys: EncryptionKey[]
  /**
   * Where they came from: ENCRYPTION_KEYS; the key file beside an SQLite database (`created` on this start);
   * or a key made for this process only (an in-memory database, gone with it).
   */
  origin: 'configured' | 'key-file' | 'key-file-created' | 'ephemeral'
  file?: string
}

/** The key file of an SQLite database: `<database file>.encryption-keys`, in the ENCRYPTION_KEYS format. */
export function keyFileOf (databaseUrl: string): string | undefined {
  const path = sqlitePathFromUrl(databaseUrl)
  return path === ':memory:' ? undefined : `${path}.encryption-keys`
}

/**
 * The operator keys: ENCRYPTION_KEYS when set (config requires it with PostgreSQL). Without it, on SQLite,
 * a key generated on the first start and kept in a file beside the database (mode 0600), as the admin
 * key is generated: `npm start` works with no configuration, and a copy of the database file alone does
 * not reveal the secrets.
 */
export function encryptionKeysFor (config: Pick<Config, 'ENCRYPTION_KEYS' | 'DATABASE_URL'>): EncryptionKeys {
  const configured = config.ENCRYPTION_KEYS === undefined ? undefined : parseEncryptionKeys(config.ENCRYPTION_KEYS)
  if (typeof configured === 'string') throw new Error(`invalid configuration: ${configured}`)
  if (configured !== undefined) return { keys: configured, origin: 'configured' }
  if (!config.DATABASE_URL.startsWith('file:')) throw new Error('ENCRYPTION_KEYS is required with PostgreSQL')
  const file = keyFileOf(config.DATABASE_URL)
  if (file === undefined) return { keys: parseEncryptionKeys(newEncryptionKeyEntry('ephemeral')) as EncryptionKey[], origin: 'ephemeral' }
  let origin: EncryptionKeys['origin'] = 'key-file'
  try {
    writeFileSync(file, `${newEncryptionKeyEntry(`generated-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`)}\n`, { flag: 'wx', mode: 0o600 })
    origin = 'key-file-created'
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
  const keys = parseEncryptionKeys(readFileSync(file, 'utf8'))
  if (typeof keys === 'string') throw new Error(`the key file ${file} is not valid: ${keys}`)
  return { keys, origin, file }
}
