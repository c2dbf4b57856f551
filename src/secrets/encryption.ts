import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/*
 * Encryption at rest of the secrets the service must read back (webhook signing secrets, PSP
 * credentials): AES-256-GCM from node:crypto, a fresh 12-byte nonce per encryption, and the id of
 * the record the secret belongs to as associated data, so a sealed value copied onto another
 * record does not open. Operator keys come from ENCRYPTION_KEYS (`keyId:base64-of-32-bytes`,
 * comma-separated): the first seals, all open, so keys rotate without downtime.
 *
 * Sealed form: `enc:v1:<keyId>:<nonce base64url>:<ciphertext and 16-byte tag, base64url>`.
 */

export const SEALED_PREFIX = 'enc:v1:'
const KEY_BYTES = 32
const NONCE_BYTES = 12
const TAG_BYTES = 16
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

export interface EncryptionKey {
  id: string
  key: Buffer
}

/** A sealed value that does not open: unknown key, altered bytes, or another record's value. Never carries the secret. */
export class DecryptionError extends Error {
  override name = 'DecryptionError'
}

/**
 * `keyId:base64,keyId:base64` → keys, the first one sealing; a message (never quoting a key) when malformed:
 * ids of 1-32 letters, digits, `_` or `-`, each once; keys of exactly 32 bytes in standard base64.
 */
export function parseEncryptionKeys (text: string): EncryptionKey[] | string {
  const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  if (entries.length === 0) return 'ENCRYPTION_KEYS lists no key'
  const keys: EncryptionKey[] = []
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf(':')
    const id = separator < 0 ? '' : entry.slice(0, separator)
    const encoded = separator < 0 ? '' : entry.slice(separator + 1)
    if (!KEY_ID.test(id)) return `ENCRYPTION_KEYS entry ${index + 1} must be keyId:base64 with a key id of 1-32 letters, digits, _ or -`
    if (keys.some((key) => key.id === id)) return `ENCRYPTION_KEYS names the key id ${id} twice`
    const key = Buffer.from(encoded, 'base64')
    if (!BASE64.test(encoded) || key.length !== KEY_BYTES) {
      return `ENCRYPTION_KEYS key ${id} must be ${KEY_BYTES} bytes in base64 (e.g. the output of \`openssl rand -base64 32\`)`
    }
    keys.push({ id, key })
  }
  return keys
}

/** A new random key, as an ENCRYPTION_KEYS entry. */
export function newEncryptionKeyEntry (id: string): string {
  return `${id}:${randomBytes(KEY_BYTES).toString('base64')}`
}

export interface SecretBox {
  /** The id of the key that seals. */
  readonly currentKeyId: string
  /** Seals `plaintext` under the current key, bound to `recordId`. */
  seal: (plaintext: string, recordId: string) => string
  /** Opens a value sealed for `recordId` under any known key; DecryptionError otherwise. */
  open: (sealed: string, recordId: string) => string
  /** True when `value` is sealed under the current key (false for plain text and older keys). */
  sealedWithCurrentKey: (value: string) => boolean
}

/** A SecretBox over `keys` (at least one; the first seals). */
export function secretBox (keys: readonly EncryptionKey[]): SecretBox {
  const [current] = keys
  if (current === undefined) throw new Error('secretBox needs at least one key')
  const byId = new Map(keys.map((key) => [key.id, key.key]))
  const currentPrefix = `${SEALED_PREFIX}${current.id}:`
  return {
    currentKeyId: current.id,
    seal (plaintext, recordId) {
      const nonce = randomBytes(NONCE_BYTES)
      const cipher = createCipheriv('aes-256-gcm', current.key, nonce).setAAD(Buffer.from(recordId, 'utf8'))
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
      return `${currentPrefix}${nonce.toString('base64url')}:${body.toString('base64url')}`
    },
    open (sealed, recordId) {
      const [prefix, version, keyId, nonceText, bodyText, ...rest] = sealed.split(':')
      if (`${prefix}:${version}:` !== SEALED_PREFIX || keyId === undefined || nonceText === undefined || bodyText === undefined || rest.length > 0) {
        throw new DecryptionError('the value is not a sealed secret')
      }
      const key = byId.get(keyId)
      if (key === undefined) throw new DecryptionError(`the secret is sealed under the key ${keyId}, which ENCRYPTION_KEYS does not list`)
      const nonce = Buffer.from(nonceText, 'base64url')
      const body = Buffer.from(bodyText, 'base64url')
      if (nonce.length !== NONCE_BYTES || body.length < TAG_BYTES) throw new DecryptionError('the sealed secret is truncated')
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, nonce).setAAD(Buffer.from(recordId, 'utf8'))
        decipher.setAuthTag(body.subarray(body.length - TAG_BYTES))
        return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8')
      } catch {
        throw new DecryptionError(`the secret sealed under the key ${keyId} does not open: altered, or sealed for another record`)
      }
    },
    sealedWithCurrentKey: (value) => value.startsWith(currentPrefix)
  }
}

/** True for a value in the sealed form (of any key). */
export function isSealed (value: string): boolean {
  return value.startsWith(SEALED_PREFIX)
}
