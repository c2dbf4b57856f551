import { generateSecret, generateURI, verifySync } from 'otplib'

/** TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps, what every authenticator app reads), through otplib. */
export const TOTP_ISSUER = 'Payments router'

export function newTotpSecret (): string {
  return generateSecret()
}

export function totpUri (secret: string, account: string): string {
  return generateURI({ secret, issuer: TOTP_ISSUER, label: account })
}

/** True when `code` is the secret's code of this step or the one before or after (clock drift). */
export function totpMatches (secret: string, code: string, now: number): boolean {
  if (!/^[0-9]{6}$/.test(code)) return false
  return verifySync({ secret, token: code, epoch: Math.floor(now / 1000), epochTolerance: 30 }).valid
}
