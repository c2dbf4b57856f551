import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../domain/users'

/**
 * Passwords: scrypt (RFC 7914, node's crypto) with a random 16-byte salt, stored as
 * `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` so the cost can rise without invalidating stored hashes.
 * The default cost (N = 2^16, r = 8, p = 1: 64 MiB, ~0.1-0.2 s) is above OWASP's scrypt minimum
 * (N = 2^13 with p = 10, or the equivalent); tests lower it through PASSWORD_HASH_COST.
 */
const KEY_LENGTH = 32
const BLOCK_SIZE = 8
const PARALLELISM = 1

function derive (password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => { if (err === null) resolve(key); else reject(err) })
  })
}

function optionsFor (log2N: number, r: number, p: number): ScryptOptions {
  const N = 2 ** log2N
  return { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }
}

export async function hashPassword (password: string, log2N: number): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, optionsFor(log2N, BLOCK_SIZE, PARALLELISM))
  return ['scrypt', log2N, BLOCK_SIZE, PARALLELISM, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** True when `password` is the one `stored` was made from; false for anything else, a malformed hash included. */
export async function verifyPassword (password: string, stored: string): Promise<boolean> {
  const [scheme, log2N, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64url')
  const key = await derive(password, Buffer.from(salt, 'base64url'), optionsFor(Number(log2N), Number(r), Number(p)))
  return key.length === expected.length && timingSafeEqual(key, expected)
}

let common: Set<string> | undefined
/** The 49,233 common passwords of zxcvbn-ts's list, loaded on first use (a few MB). */
function commonPasswords (): Set<string> {
  if (common === undefined) {
    const { dictionary } = require('@zxcvbn-ts/language-common') as { dictionary: Record<string, string[]> }
    common = new Set(dictionary['passwords-common'])
  }
  return common
}

/** Why `password` may not be used (empty when it may): length, and the common-password list (case-insensitive). */
export function passwordProblems (password: string): string[] {
  if (password.length < PASSWORD_MIN_LENGTH) return [`The password must be at least ${PASSWORD_MIN_LENGTH} characters long.`]
  if (password.length > PASSWORD_MAX_LENGTH) return [`The password must be at most ${PASSWORD_MAX_LENGTH} characters long.`]
  if (commonPasswords().has(password.toLowerCase())) return ['The password is on a list of commonly used passwords; choose another.']
  return []
}
