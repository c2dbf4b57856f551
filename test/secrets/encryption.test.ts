import t from 'tap'
import { DecryptionError, isSealed, newEncryptionKeyEntry, parseEncryptionKeys, secretBox, type EncryptionKey } from '../../src/secrets/encryption'

const keyA: EncryptionKey = { id: 'a', key: Buffer.alloc(32, 1) }
const keyB: EncryptionKey = { id: 'b-2026', key: Buffer.alloc(32, 2) }
const RECORD = '019aa9f3-0c1d-7e2f-9a3b-4c5d6e7f8091'
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

t.test('seal and open: AES-256-GCM under the first key, a fresh nonce each time, nothing of the secret in the sealed form', async (t) => {
  const box = secretBox([keyA])
  const sealed = box.seal(SECRET, RECORD)
  const again = box.seal(SECRET, RECORD)
  t.match(sealed, /^enc:v1:a:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/)
  t.not(sealed, again, 'a fresh 12-byte nonce each time: the same secret seals differently')
  t.notOk(sealed.includes(SECRET.slice(6)), 'the secret does not show')
  t.ok(isSealed(sealed))
  t.notOk(isSealed(SECRET))
  t.equal(box.open(sealed, RECORD), SECRET)
  t.equal(box.open(again, RECORD), SECRET)
  t.ok(box.sealedWithCurrentKey(sealed))
  t.equal(box.open(box.seal('', RECORD), RECORD), '', 'an empty value too')
})

t.test('altered bytes, another record (associated data), an unknown key or a malformed value do not open', async (t) => {
  const box = secretBox([keyA])
  const sealed = box.seal(SECRET, RECORD)
  const parts = sealed.split(':')
  t.equal(parts.length, 5, 'prefix, version, key id, nonce and body')
  const [prefix = '', version = '', id = '', nonce = '', body = ''] = parts
  const flip = (text: string, at: number): string => {
    const bytes = Buffer.from(text, 'base64url')
    bytes.writeUInt8(bytes.readUInt8(at) ^ 1, at)
    return bytes.toString('base64url')
  }
  const cases: Record<string, string> = {
    'a flipped ciphertext bit': [prefix, version, id, nonce, flip(body, 0)].join(':'),
    'a flipped tag bit': [prefix, version, id, nonce, flip(body, Buffer.from(body, 'base64url').length - 1)].join(':'),
    'a flipped nonce bit': [prefix, version, id, flip(nonce, 0), body].join(':'),
    'a truncated body': [prefix, version, id, nonce, body.slice(0, 8)].join(':'),
    'an unknown key id': [prefix, version, 'zz', nonce, body].join(':'),
    'another version': ['enc', 'v2', id, nonce, body].join(':'),
    'an extra part': `${sealed}:x`,
    'plain text': SECRET
  }
  for (const [what, value] of Object.entries(cases)) t.throws(() => box.open(value, RECORD), DecryptionError, what)
  t.throws(() => box.open(sealed, '019aa9f3-0c1d-7e2f-9a3b-4c5d6e7f8092'), DecryptionError, 'sealed for another record: the associated data differs')
  t.throws(() => secretBox([keyB]).open(sealed, RECORD), { name: 'DecryptionError', message: /key a, which ENCRYPTION_KEYS does not list/ })
  try {
    box.open([prefix, version, id, nonce, flip(body, 0)].join(':'), RECORD)
  } catch (err) {
    t.notOk((err as Error).message.includes(SECRET), 'the error never carries the secret')
  }
})

t.test('rotation: the first key seals, every listed key opens', async (t) => {
  const old = secretBox([keyA]).seal(SECRET, RECORD)
  const rotated = secretBox([keyB, keyA])
  t.equal(rotated.currentKeyId, 'b-2026')
  t.equal(rotated.open(old, RECORD), SECRET, 'a value sealed under the old key still opens')
  t.notOk(rotated.sealedWithCurrentKey(old))
  const resealed = rotated.seal(SECRET, RECORD)
  t.match(resealed, /^enc:v1:b-2026:/)
  t.equal(secretBox([keyB]).open(resealed, RECORD), SECRET, 'once re-sealed, the old key can go')
  t.throws(() => secretBox([]), /at least one key/)
})

t.test('ENCRYPTION_KEYS parsing: keyId:base64 of 32 bytes, comma-separated; errors never quote a key', async (t) => {
  const entry = newEncryptionKeyEntry('k1')
  const parsed = parseEncryptionKeys(` ${entry} , ${newEncryptionKeyEntry('k_0-2')}`)
  t.ok(Array.isArray(parsed))
  t.same((parsed as EncryptionKey[]).map((key) => [key.id, key.key.length]), [['k1', 32], ['k_0-2', 32]])
  const short = Buffer.alloc(16, 3).toString('base64')
  const bad: Record<string, string> = {
    '': 'lists no key',
    'no-separator': 'entry 1 must be keyId:base64',
    [`bad id!:${Buffer.alloc(32).toString('base64')}`]: 'entry 1 must be keyId:base64',
    [`${entry},${entry}`]: 'names the key id k1 twice',
    [`k2:${short}`]: 'key k2 must be 32 bytes',
    'k3:not base64 at all, not at all!!!!!!!!!': 'key k3 must be 32 bytes'
  }
  for (const [text, message] of Object.entries(bad)) {
    const result = parseEncryptionKeys(text)
    t.type(result, 'string')
    t.match(result, message, JSON.stringify(text))
    t.notOk(String(result).includes(short), 'no key material in the message')
  }
})
