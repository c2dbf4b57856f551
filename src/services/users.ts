import type { Principal } from '../domain/api-keys'
import { hashSecret } from '../domain/api-keys'
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import { merchantNotFoundMessage } from '../domain/merchants'
import {
  INVITE_TOKEN_PATTERN, INVITE_TTL_MS, LastOwnerError, SIGN_IN_LOCK_MS, SIGN_IN_MAX_FAILURES, SIGN_IN_WINDOW_MS, SignInLockedError, TotpRequiredError,
  generateInviteToken, normalizeEmail, type User, type UserRole
} from '../domain/users'
import { UnauthenticatedError } from '../domain/errors'
import { hashPassword, passwordProblems, verifyPassword } from '../secrets/passwords'
import { newTotpSecret, totpMatches, totpUri } from '../secrets/totp'
import type { SecretBox } from '../secrets/encryption'
import { auditEntry, auditEntryAs } from '../store/audit-scope'
import type { Database } from '../store/types'
import type { OwnedKey } from './keys'

export interface UserServiceDeps {
  db: Pick<Database, 'users' | 'merchants' | 'signInFailures'>
  secretBox: SecretBox
  /** Milliseconds since the epoch. */
  clock: () => number
  /** log2 of scrypt's N for new password hashes (PASSWORD_HASH_COST). */
  passwordHashCost: number
}

export interface SignIn {
  email: string
  password: string
  totp?: string
  /** The caller's address: failures are counted per account and per address. */
  ip: string
}

/** A user just invited, with the token of their invite link (shown once: only its hash is kept). */
export interface InvitedUser { user: User, token: string }

export interface UserService {
  /** A new user of the merchant; with `idempotencyKey`, its response is stored on the key in the user's transaction. */
  invite: (merchantId: string, input: { email: string, role: UserRole }, idempotencyKey?: OwnedKey<InvitedUser>) => Promise<InvitedUser>
  list: (merchantId: string) => Promise<User[]>
  get: (merchantId: string, userId: string) => Promise<User>
  /** Changes the role and ends the user's sessions (their rights changed under them). */
  changeRole: (merchantId: string, userId: string, role: UserRole) => Promise<User>
  /** Deletes the user; their sessions end at once. */
  remove: (merchantId: string, userId: string) => Promise<void>
  /** Sets the password of an invited user (single use, before it expires). */
  acceptInvite: (token: string, password: string) => Promise<User>
  /** The user an email, password (and TOTP code, once enrolled) prove; counts failures and locks. */
  verifySignIn: (attempt: SignIn) => Promise<User>
  /** Starts (or restarts) TOTP enrollment: a new secret, not required until confirmed. */
  startTotp: (userId: string) => Promise<{ secret: string, uri: string }>
  /** Proves the authenticator works: sign-in needs a code from now on. */
  confirmTotp: (userId: string, code: string) => Promise<User>
  /** Changes the password (the current one proves it is the user) and ends the user's other sessions. */
  changePassword: (userId: string, current: string, next: string, keepSession: string) => Promise<void>
  /** Records a successful sign-in (lastSignInAt). */
  recordSignIn: (userId: string) => Promise<void>
  /** Who a user's dashboard session stands for now; undefined once the user or the merchant is gone. */
  principalOf: (userId: string) => Promise<Principal | undefined>
}

/** Failed sign-ins are counted under both subjects, so neither a guessed account nor one address can try on. */
function subjects (email: string, ip: string): string[] {
  return [`email:${email}`, `ip:${ip}`]
}

/**
 * A merchant's named users: invites, passwords (scrypt), TOTP (RFC 6238), roles and the sign-in lockout.
 * A wrong email and a wrong password get the same answer after the same work (a password hash is checked
 * either way), so the answer never says whether the email exists.
 */
export function userService (deps: UserServiceDeps): UserService {
  const { db } = deps
  let decoy: Promise<string> | undefined
  const now = (): string => new Date(deps.clock()).toISOString()

  async function requireMerchant (merchantId: string): Promise<string> {
    const merchant = isGuid(merchantId) ? await db.merchants.get(merchantId.toLowerCase()) : undefined
    if (merchant === undefined) throw new NotFoundError(merchantNotFoundMessage(merchantId))
    return merchant.id
  }

  async function find (merchantId: string, userId: string): Promise<User> {
    const id = await requireMerchant(merchantId)
    const user = isGuid(userId) ? await db.users.get(userId.toLowerCase()) : undefined
    if (user === undefined || user.merchantId !== id) throw new NotFoundError(`Merchant '${id}' has no user with the id '${userId.slice(0, 64)}'.`)
    return user
  }

  async function requireUser (userId: string): Promise<User> {
    const user = await db.users.get(userId)
    if (user === undefined) throw new UnauthenticatedError('The user no longer exists.', true)
    return user
  }

  async function keepsAnOwner (user: User): Promise<void> {
    if (user.role !== 'owner') return
    const owners = (await db.users.listForMerchant(user.merchantId)).filter((other) => other.role === 'owner' && other.passwordHash !== null)
    if (owners.length === 1 && owners[0]?.id === user.id) throw new LastOwnerError()
  }

  async function save (user: User, changed: Partial<User>, options: { endSessions?: boolean, keepSession?: string, byThemselves?: boolean } = {}): Promise<User> {
    const updated = { ...user, ...changed, updatedAt: now() }
    // Accepting an invite is anonymous until it succeeds: the entry names the user it proved.
    const audit = options.byThemselves === true
      ? auditEntryAs({ type: 'user', id: user.id, label: user.email }, user.id, user.merchantId)
      : auditEntry(user.id, 'succeeded', user.merchantId)
    const { byThemselves: _, ...sessions } = options
    if (!await db.users.update(updated, user.updatedAt, { ...sessions, ...(audit === undefined ? {} : { audit }) })) {
      throw new ConflictError('The user changed (or was removed) while this request was made: read it again and retry.')
    }
    return updated
  }

  /**
   * Runs one password (or code) check counted against `subjects`: each subject's attempt is taken atomically BEFORE
   * the check (so guesses sent in parallel are counted too: at most SIGN_IN_MAX_FAILURES run at once, the rest are
   * refused without hashing anything), kept as a failure when `check` says 'failed' (the fifth locks the subject),
   * and given back otherwise.
   */
  async function counted<T> (subjects: readonly string[], check: () => Promise<{ outcome: 'passed' | 'failed' | 'not_counted', value: T }>): Promise<T> {
    const at = deps.clock()
    const taken: string[] = []
    for (const subject of subjects) {
      if (await db.signInFailures.reserve(subject, at, SIGN_IN_MAX_FAILURES, at - SIGN_IN_WINDOW_MS)) {
        taken.push(subject)
        continue
      }
      for (const given of taken) await db.signInFailures.release(given)
      const lockedUntil = (await db.signInFailures.get(subject))?.lockedUntil ?? 0
      throw new SignInLockedError(Math.max(1, Math.ceil((lockedUntil - at) / 1000)))
    }
    let outcome: 'passed' | 'failed' | 'not_counted' = 'failed'
    try {
      const result = await check()
      outcome = result.outcome
      return result.value
    } finally {
      for (const subject of taken) {
        if (outcome === 'failed') await db.signInFailures.fail(subject, deps.clock(), SIGN_IN_MAX_FAILURES, deps.clock() + SIGN_IN_LOCK_MS)
        else if (outcome === 'passed' && subject.startsWith('email:')) await db.signInFailures.clear(subject)
        else await db.signInFailures.release(subject)
      }
    }
  }

  const wrongCredentials = (): UnauthenticatedError => new UnauthenticatedError('The email or password is wrong.', true)

  function requirePassword (password: string, field = 'password'): void {
    const problems = passwordProblems(password)
    if (problems.length > 0) throw new ValidationError({ [field]: problems })
  }

  return {
    async invite (merchantId, input, idempotencyKey) {
      const id = await requireMerchant(merchantId)
      const at = now()
      const { token, hash } = generateInviteToken()
      const user: User = {
        id: newId(),
        merchantId: id,
        email: normalizeEmail(input.email),
        role: input.role,
        passwordHash: null,
        totpSecret: null,
        totpEnabledAt: null,
        inviteHash: hash,
        inviteExpiresAt: new Date(deps.clock() + INVITE_TTL_MS).toISOString(),
        createdAt: at,
        updatedAt: at,
        lastSignInAt: null
      }
      const invited = { user, token }
      const audit = auditEntry(user.id, 'succeeded', id)
      await db.users.create(user, {
        ...(audit === undefined ? {} : { audit }),
        ...(idempotencyKey === undefined ? {} : { completion: { ref: idempotencyKey.ref, response: idempotencyKey.respond(invited) } })
      })
      return invited
    },

    async list (merchantId) {
      return await db.users.listForMerchant(await requireMerchant(merchantId))
    },

    get: find,

    async changeRole (merchantId, userId, role) {
      const user = await find(merchantId, userId)
      if (user.role === role) return user
      if (role !== 'owner') await keepsAnOwner(user)
      return await save(user, { role }, { endSessions: true })
    },

    async remove (merchantId, userId) {
      const user = await find(merchantId, userId)
      await keepsAnOwner(user)
      if (!await db.users.delete(user.merchantId, user.id, auditEntry(user.id, 'succeeded', user.merchantId))) {
        throw new NotFoundError(`Merchant '${user.merchantId}' has no user with the id '${userId.slice(0, 64)}'.`)
      }
    },

    async acceptInvite (token, password) {
      const user = INVITE_TOKEN_PATTERN.test(token) ? await db.users.findByInvite(hashSecret(token)) : undefined
      if (user === undefined || user.inviteExpiresAt === null || Date.parse(user.inviteExpiresAt) <= deps.clock()) {
        throw new NotFoundError('The invite link is unknown, already used or expired: ask for a new invite.')
      }
      requirePassword(password)
      const passwordHash = await hashPassword(password, deps.passwordHashCost)
      return await save(user, { passwordHash, inviteHash: null, inviteExpiresAt: null }, { endSessions: true, byThemselves: true })
    },

    async verifySignIn ({ email: given, password, totp, ip }) {
      const email = normalizeEmail(given)
      const user = await counted<User | 'totp' | undefined>(subjects(email, ip), async () => {
        const found = await db.users.findByEmail(email)
        if (found?.passwordHash == null) {
          // The same work as a real check, so the time taken does not say whether the email exists.
          decoy ??= hashPassword('decoy password for unknown users', deps.passwordHashCost)
          await verifyPassword(password, await decoy)
          return { outcome: 'failed', value: undefined }
        }
        if (!await verifyPassword(password, found.passwordHash)) return { outcome: 'failed', value: undefined }
        if (found.totpEnabledAt === null || found.totpSecret === null) return { outcome: 'passed', value: found }
        // The password was right: a missing code is a question, not a failure; a wrong one is a failure.
        if (totp === undefined) return { outcome: 'not_counted', value: 'totp' as const }
        if (!totpMatches(deps.secretBox.open(found.totpSecret, found.id), totp, deps.clock())) return { outcome: 'failed', value: 'totp' as const }
        return { outcome: 'passed', value: found }
      })
      if (user === undefined) throw wrongCredentials()
      if (user === 'totp') throw new TotpRequiredError()
      return user
    },

    async startTotp (userId) {
      const user = await requireUser(userId)
      // Restarting would turn two-factor off until confirmed: a session alone (perhaps a stolen one) may not do that.
      if (user.totpEnabledAt !== null) throw new ConflictError('Two-factor authentication is on already; to move it to another device, ask an owner to remove and invite you again.')
      const secret = newTotpSecret()
      await save(user, { totpSecret: deps.secretBox.seal(secret, user.id), totpEnabledAt: null })
      return { secret, uri: totpUri(secret, user.email) }
    },

    async confirmTotp (userId, code) {
      const user = await requireUser(userId)
      if (user.totpSecret === null) throw new ValidationError({ code: ['Start enrollment first (POST /dashboard/totp).'] })
      if (!totpMatches(deps.secretBox.open(user.totpSecret, user.id), code, deps.clock())) {
        throw new ValidationError({ code: ['The code does not match: enter the current 6-digit code of the authenticator app.'] })
      }
      return await save(user, { totpEnabledAt: now() })
    },

    async changePassword (userId, current, next, keepSession) {
      const user = await requireUser(userId)
      // Counted like a sign-in (per account): a session is not a way around the lockout to guess the password.
      const right = await counted([`email:${user.email}`], async () => {
        const passed = user.passwordHash !== null && await verifyPassword(current, user.passwordHash)
        return { outcome: passed ? 'not_counted' : 'failed', value: passed }
      })
      if (!right) throw new ValidationError({ currentPassword: ['The current password is wrong.'] })
      requirePassword(next, 'newPassword')
      await save(user, { passwordHash: await hashPassword(next, deps.passwordHashCost) }, { endSessions: true, keepSession })
    },

    async recordSignIn (userId) {
      await db.users.recordSignIn(userId, now())
    },

    async principalOf (userId) {
      const user = await db.users.get(userId)
      if (user?.passwordHash == null) return undefined
      const merchant = await db.merchants.get(user.merchantId)
      if (merchant === undefined) return undefined
      return {
        kind: 'merchant',
        credentialId: `user:${user.id}`,
        merchantId: merchant.id,
        merchantStatus: merchant.status,
        apiVersion: merchant.apiVersion,
        user: { id: user.id, email: user.email, role: user.role, twoFactorEnabled: user.totpEnabledAt !== null }
      }
    }
  }
}
