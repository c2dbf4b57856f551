import t from 'tap'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { encryptionKeysFor, keyFileOf } from '../../src/secrets/keys'
import { secretBox } from '../../src/secrets/encryption'
import { TEST_ENCRYPTION_KEYS } from '../helpers/app'

t.test('ENCRYPTION_KEYS when set, whatever the database', async (t) => {
  const keys = encryptionKeysFor({ ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS, DATABASE_URL: 'postgres://db/x' })
  t.equal(keys.origin, 'configured')
  t.same(keys.keys.map((key) => key.id), ['test'])
  t.throws(() => encryptionKeysFor({ ENCRYPTION_KEYS: 'x', DATABASE_URL: 'file::memory:' }), /invalid configuration/)
  t.throws(() => encryptionKeysFor({ DATABASE_URL: 'postgres://db/x' }), /required with PostgreSQL/)
})

t.test('SQLite without ENCRYPTION_KEYS: a key generated on the first start into a 0600 file beside the database, reused later', async (t) => {
  const dir = t.testdir({})
  const config = { DATABASE_URL: `file:${join(dir, 'service.db')}` }
  t.equal(keyFileOf(config.DATABASE_URL), join(dir, 'service.db.encryption-keys'))
  const first = encryptionKeysFor(config)
  t.equal(first.origin, 'key-file-created')
  t.equal(first.file, join(dir, 'service.db.encryption-keys'))
  t.equal(statSync(first.file as string).mode & 0o777, 0o600, 'readable by the service\'s user only')
  t.match(readFileSync(first.file as string, 'utf8'), /^generated-\d{8}:[A-Za-z0-9+/]{43}=\n$/, 'in the ENCRYPTION_KEYS format (it can be moved there)')
  const second = encryptionKeysFor(config)
  t.equal(second.origin, 'key-file')
  const sealed = secretBox(first.keys).seal('whsec_x', 'id')
  t.equal(secretBox(second.keys).open(sealed, 'id'), 'whsec_x', 'the same key on the next start')

  writeFileSync(first.file as string, 'garbage')
  t.throws(() => encryptionKeysFor(config), /key file .* is not valid/)
  t.equal(encryptionKeysFor({ DATABASE_URL: 'file::memory:' }).origin, 'ephemeral', 'an in-memory database gets a key that lives as long as it')
})
