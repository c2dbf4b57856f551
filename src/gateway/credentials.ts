import type { FieldErrors } from '../domain/errors'
import type { ConnectorCredentials } from './connector'

/** What the PSP modules' credential checks share. */

export const isCredentialsObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Members of `given` that an account of this type does not take. */
export function unknownMembers (given: Record<string, unknown>, allowed: readonly string[], message: string): FieldErrors {
  const errors: FieldErrors = {}
  for (const key of Object.keys(given)) {
    if (!allowed.includes(key)) errors[`credentials.${key}`.slice(0, 256)] = [message]
  }
  return errors
}

/** `…` and the last 4 characters of the credentials' `member` (a key), or null when there is none. */
export function lastFourOf (credentials: ConnectorCredentials | undefined, member: string): string | null {
  const key = credentials?.[member]
  return key === undefined ? null : `…${key.slice(-4)}`
}
