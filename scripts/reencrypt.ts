/**
 * Re-encrypts every stored secret (webhook endpoint secrets, connector account credentials) under the first key of ENCRYPTION_KEYS (after a key rotation), with the
 * service's own configuration (the same environment as `npm start`). Safe while instances run: each row is a
 * compare-and-set. Afterwards the older keys can be removed from ENCRYPTION_KEYS.
 *
 *   ENCRYPTION_KEYS=new:…,old:… npm run reencrypt
 */
import { loadConfig } from '../src/load-config'
import { openDatabase } from '../src/store'
import { secretBox } from '../src/secrets/encryption'
import { encryptionKeysFor } from '../src/secrets/keys'
import { sealStoredSecrets } from '../src/services/webhook-secrets'
import { resealConnectorCredentials } from '../src/services/connectors'

async function main (): Promise<void> {
  const config = loadConfig()
  const db = await openDatabase(config)
  try {
    const box = secretBox(encryptionKeysFor(config).keys)
    const endpoints = await sealStoredSecrets(db.webhooks, box, 'all')
    process.stdout.write(`re-encrypted the secrets of ${endpoints} webhook endpoint(s) under the key ${box.currentKeyId}\n`)
    const accounts = await resealConnectorCredentials(db.connectors, box)
    process.stdout.write(`re-encrypted the credentials of ${accounts} connector account(s) under the key ${box.currentKeyId}\n`)
  } finally {
    await db.close()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`reencrypt: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
