import type { Principal } from '../domain/api-keys'
import { hashSecret } from '../domain/api-keys'
import { NotFoundError, ValidationError } from '../domain/errors'
import { isGuid, newId } from '../domain/ids'
import { merchantNotFoundMessage } from '../domain/merchants'
import {
  INVITE_TOKEN_PATTERN, INVITE_TTL_MS, LastOwnerError, SIGN_IN_LOCK_MS, SIGN_IN_MAX_FAILURES, SignInLockedError, TotpRequiredError,
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
      throw new ValidationError({ user: ['The user changed while this request was made: try again.'] })
    }
    return updated
  }

  async function lockedFor (email: string, ip: string): Promise<number> {
    const at = deps.clock()
    const records = await Promise.all(subjects(email, ip).map(async (subject) => await db.signInFailures.get(subject)))
    return Math.max(0, ...records.map((record) => (record?.lockedUntil ?? 0) - at))
  }

  async function failed (email: string, ip: string): Promise<never> {
    const at = deps.clock()
    for (const subject of subjects(email, ip)) await db.signInFailures.recordFailure(subject, at, SIGN_IN_MAX_FAILURES, at + SIGN_IN_LOCK_MS)
    throw new UnauthenticatedError('The email or password is wrong.', true)
  }

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
      const waitMs = await lockedFor(email, ip)
      if (waitMs > 0) throw new SignInLockedError(Math.ceil(waitMs / 1000))
      const user = await db.users.findByEmail(email)
      if (user?.passwordHash == null) {
        // The same work as a real check, so the time taken does not say whether the email exists.
        decoy ??= hashPassword('decoy password for unknown users', deps.passwordHashCost)
        await verifyPassword(password, await decoy)
        return await failed(email, ip)
      }
      if (!await verifyPassword(password, user.passwordHash)) return await failed(email, ip)
      if (user.totpEnabledAt !== null && user.totpSecret !== null) {
        if (totp === undefined) throw new TotpRequiredError()
        if (!totpMatches(deps.secretBox.open(user.totpSecret, user.id), totp, deps.clock())) {
          await failed(email, ip).catch(() => {})
          throw new TotpRequiredError()
        }
      }
      await db.signInFailures.clear(`email:${email}`)
      return user
    },

    async startTotp (userId) {
      const user = await requireUser(userId)
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
      if (user.passwordHash === null || !await verifyPassword(current, user.passwordHash)) {
        throw new ValidationError({ currentPassword: ['The current password is wrong.'] })
      }
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
