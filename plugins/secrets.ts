import fp from 'fastify-plugin'
import { secretBox, type SecretBox } from '../src/secrets/encryption'
import { encryptionKeysFor } from '../src/secrets/keys'

declare module 'fastify' {
  interface FastifyInstance {
    /** Encrypts the secrets the service stores and must read back (ENCRYPTION_KEYS). */
    secretBox: SecretBox
  }
}

/**
 * The operator's encryption keys (src/secrets/keys.ts): ENCRYPTION_KEYS, or on SQLite without it a key
 * generated on the first start into a file beside the database — said once, with a warning.
 */
export default fp(async (app) => {
  const { keys, origin, file } = encryptionKeysFor(app.config)
  if (origin === 'key-file-created') {
    app.log.warn({ file }, 'ENCRYPTION_KEYS is not set: generated an encryption key for stored secrets and wrote it beside the database; ' +
      'back that file up apart from the database (without it the stored secrets cannot be read), or set ENCRYPTION_KEYS')
  } else if (origin === 'key-file') {
    app.log.info({ file }, 'ENCRYPTION_KEYS is not set: the encryption key generated on the first start of this database is in use')
  }
  app.decorate('secretBox', secretBox(keys))
}, { name: 'secrets', dependencies: ['config'], fastify: '5.x' })
