import t from 'tap'
import { toApiKeyResource } from '../../schemas/api-keys'

const M1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa'

t.test('toApiKeyResource never carries the hash', async (t) => {
  const resource = toApiKeyResource({
    id: 'k',
    merchantId: M1,
    role: 'merchant',
    name: 'n',
    prefix: 'sk_abcd',
    last4: 'wxyz',
    secretHash: 'h'.repeat(64),
    createdAt: 'c',
    expiresAt: null,
    lastUsedAt: null,
    revokedAt: null
  })
  t.same(Object.keys(resource).sort(), ['createdAt', 'expiresAt', 'id', 'last4', 'lastUsedAt', 'name', 'prefix'])
})
