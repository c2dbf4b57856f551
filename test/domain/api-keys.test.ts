import t from 'tap'
import {
  ACCESS_LEVELS,
  SECRET_PATTERN,
  decideAccess,
  describeSecret,
  generateSecret,
  hashSecret,
  isKeyUsable,
  mayChangeMerchantStatus,
  mayCreatePayments,
  ownsResource,
  rateLimitKeyOf,
  sameHash,
  type Principal
} from '../../src/domain/api-keys'

const M1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'
const M2 = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'
const admin: Principal = { kind: 'admin', credentialId: 'ADMIN_API_KEY' }
const merchant: Principal = { kind: 'merchant', credentialId: 'k1', merchantId: M1, merchantStatus: 'active', apiVersion: '2026-11-25' }
const suspended: Principal = { ...merchant, merchantStatus: 'suspended' }

t.test('secrets: sk_ prefix, 192 random bits in base64url, never repeated', async (t) => {
  const secrets = new Set(Array.from({ length: 1000 }, generateSecret))
  t.equal(secrets.size, 1000)
  for (const secret of [...secrets].slice(0, 20)) {
    t.match(secret, SECRET_PATTERN)
    t.equal(Buffer.from(secret.slice(3), 'base64url').length, 24, '24 bytes = 192 bits')
  }
})

t.test('describeSecret keeps a prefix, the last 4 and the SHA-256, never the secret', async (t) => {
  const secret = generateSecret()
  const described = describeSecret(secret)
  t.equal(described.prefix, secret.slice(0, 7))
  t.equal(described.last4, secret.slice(-4))
  t.equal(described.secretHash, hashSecret(secret))
  t.match(described.secretHash, /^[0-9a-f]{64}$/)
  t.notMatch(JSON.stringify(described), secret.slice(7, -4))
})

t.test('sameHash compares digests and refuses empty or different lengths', async (t) => {
  const hash = hashSecret('x')
  t.ok(sameHash(hash, hashSecret('x')))
  t.notOk(sameHash(hash, hashSecret('y')))
  t.notOk(sameHash(hash, hash.slice(0, 62)))
  t.notOk(sameHash('', ''))
})

t.test('a key is usable until revoked or expired', async (t) => {
  const now = Date.parse('2026-06-01T00:00:00Z')
  t.ok(isKeyUsable({ revokedAt: null, expiresAt: null }, now))
  t.ok(isKeyUsable({ revokedAt: null, expiresAt: '2026-06-01T00:00:01Z' }, now))
  t.notOk(isKeyUsable({ revokedAt: null, expiresAt: '2026-06-01T00:00:00Z' }, now), 'expiry is exclusive')
  t.notOk(isKeyUsable({ revokedAt: '2026-05-01T00:00:00Z', expiresAt: null }, now))
})

t.test('decideAccess: the whole table', async (t) => {
  const table: Array<[typeof ACCESS_LEVELS[number], Principal | undefined, string | undefined, string]> = [
    ['public', undefined, undefined, 'allow'],
    ['public', merchant, undefined, 'allow'],
    ['admin', undefined, undefined, 'unauthenticated'],
    ['admin', admin, undefined, 'allow'],
    ['admin', merchant, undefined, 'forbidden'],
    ['merchant', undefined, undefined, 'unauthenticated'],
    ['merchant', merchant, undefined, 'allow'],
    ['merchant', suspended, undefined, 'allow'],
    ['merchant', admin, undefined, 'forbidden'],
    ['admin-or-own-merchant', undefined, M1, 'unauthenticated'],
    ['admin-or-own-merchant', admin, M2, 'allow'],
    ['admin-or-own-merchant', merchant, M1, 'allow'],
    ['admin-or-own-merchant', merchant, M1.toUpperCase(), 'allow'],
    ['admin-or-own-merchant', merchant, M2, 'not_found'],
    ['admin-or-own-merchant', merchant, undefined, 'not_found']
  ]
  for (const [access, principal, target, expected] of table) {
    t.equal(decideAccess(access, principal, target), expected, `${access} / ${principal?.kind ?? 'anonymous'} / ${target ?? '-'}`)
  }
})

t.test('object-level and function-level rules', async (t) => {
  t.ok(ownsResource(merchant, M1))
  t.ok(ownsResource(merchant, M1.toUpperCase()))
  t.notOk(ownsResource(merchant, M2))
  t.notOk(ownsResource(merchant, null), 'payments from before authentication belong to nobody')
  t.notOk(ownsResource(admin, M1))
  t.ok(mayChangeMerchantStatus(admin))
  t.notOk(mayChangeMerchantStatus(merchant))
  t.ok(mayCreatePayments(merchant))
  t.notOk(mayCreatePayments(suspended))
  t.notOk(mayCreatePayments(admin))
  t.equal(rateLimitKeyOf(merchant), 'merchant:k1')
  t.equal(rateLimitKeyOf(admin), 'admin:ADMIN_API_KEY')
})
