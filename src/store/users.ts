import { userCredential, type User, type UserRole } from '../domain/users'
import type { AuditEntry } from '../domain/audit'
import { auditInsert, auditParams } from './audit-log'
import { raw, sql, write, type SqlRunner, type Write } from './sql'
import type { SignInFailureStore, UserStore } from './types'
import { UserEmailTakenError } from '../domain/users'
import { finishParams, idempotencySql } from './idempotency'

const COLUMNS = 'id, merchant_id, email, role, password_hash, totp_secret, totp_enabled_at, invite_hash, invite_expires_at, created_at, updated_at, last_sign_in_at'

interface UserRow {
  id: string
  merchant_id: string
  email: string
  role: string
  password_hash: string | null
  totp_secret: string | null
  totp_enabled_at: string | null
  invite_hash: string | null
  invite_expires_at: string | null
  created_at: string
  updated_at: string
  last_sign_in_at: string | null
}

function userFromRow (row: UserRow): User {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    email: row.email,
    role: row.role as UserRole,
    passwordHash: row.password_hash,
    totpSecret: row.totp_secret,
    totpEnabledAt: row.totp_enabled_at,
    inviteHash: row.invite_hash,
    inviteExpiresAt: row.invite_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastSignInAt: row.last_sign_in_at
  }
}

type UserParams = User & { expectedUpdatedAt: string }

const userSql = {
  // Any unique index (email, invite) refuses the row without an error: no row written is the answer.
  insert: sql<User>('user-insert')`
    INSERT INTO users (${raw(COLUMNS)}) VALUES (${'id'}, ${'merchantId'}, ${'email'}, ${'role'}, ${'passwordHash'}, ${'totpSecret'},
      ${'totpEnabledAt'}, ${'inviteHash'}, ${'inviteExpiresAt'}, ${'createdAt'}, ${'updatedAt'}, ${'lastSignInAt'}) ON CONFLICT DO NOTHING`,
  get: sql<{ id: string }, UserRow>('user-get')`SELECT ${raw(COLUMNS)} FROM users WHERE id = ${'id'}`,
  byEmail: sql<{ email: string }, UserRow>('user-by-email')`SELECT ${raw(COLUMNS)} FROM users WHERE email = ${'email'}`,
  byInvite: sql<{ inviteHash: string }, UserRow>('user-by-invite')`SELECT ${raw(COLUMNS)} FROM users WHERE invite_hash = ${'inviteHash'}`,
  list: sql<{ merchantId: string }, UserRow>('user-list')`
    SELECT ${raw(COLUMNS)} FROM users WHERE merchant_id = ${'merchantId'} ORDER BY created_at, id`,
  update: sql<UserParams>('user-update')`
    UPDATE users SET role = ${'role'}, password_hash = ${'passwordHash'}, totp_secret = ${'totpSecret'}, totp_enabled_at = ${'totpEnabledAt'},
      invite_hash = ${'inviteHash'}, invite_expires_at = ${'inviteExpiresAt'}, updated_at = ${'updatedAt'}
    WHERE id = ${'id'} AND updated_at = ${'expectedUpdatedAt'}`,
  delete: sql<{ merchantId: string, id: string }>('user-delete')`DELETE FROM users WHERE merchant_id = ${'merchantId'} AND id = ${'id'}`,
  recordSignIn: sql<{ id: string, at: string }>('user-record-sign-in')`
    UPDATE users SET last_sign_in_at = ${'at'} WHERE id = ${'id'} AND (last_sign_in_at IS NULL OR last_sign_in_at < ${'at'})`,
  endSessions: sql<{ credentialId: string, except: string }>('user-end-sessions')`
    DELETE FROM dashboard_sessions WHERE credential_id = ${'credentialId'} AND id <> ${'except'}`
}

function audited (audit: AuditEntry | undefined): Write[] {
  return audit === undefined ? [] : [write(auditInsert, auditParams(audit))]
}

/** A merchant's users, written once for both databases. */
export function userStore (db: SqlRunner): UserStore {
  return {
    async create (user, { audit, completion } = {}) {
      const then = [...audited(audit), ...(completion === undefined ? [] : [write(idempotencySql.finish, finishParams(completion.ref, completion.response))])]
      if (await db.writeThen(userSql.insert, user, then) === 0) throw new UserEmailTakenError()
    },
    async get (id) {
      const row = await db.get(userSql.get, { id })
      return row === undefined ? undefined : userFromRow(row)
    },
    async findByEmail (email) {
      const row = await db.get(userSql.byEmail, { email })
      return row === undefined ? undefined : userFromRow(row)
    },
    async findByInvite (inviteHash) {
      const row = await db.get(userSql.byInvite, { inviteHash })
      return row === undefined ? undefined : userFromRow(row)
    },
    async listForMerchant (merchantId) {
      return (await db.all(userSql.list, { merchantId })).map(userFromRow)
    },
    async update (user, expectedUpdatedAt, options = {}) {
      const then = [
        ...(options.endSessions === true ? [write(userSql.endSessions, { credentialId: userCredential(user.id), except: options.keepSession ?? '' })] : []),
        ...audited(options.audit)
      ]
      return await db.writeThen(userSql.update, { ...user, expectedUpdatedAt }, then) === 1
    },
    async delete (merchantId, id, audit) {
      const then = [write(userSql.endSessions, { credentialId: userCredential(id), except: '' }), ...audited(audit)]
      return await db.writeThen(userSql.delete, { merchantId, id }, then) === 1
    },
    async recordSignIn (id, at) { await db.write(userSql.recordSignIn, { id, at }) }
  }
}

const failureSql = {
  get: sql<{ subject: string }, { failures: number, locked_until: number | string | null }>('sign-in-failure-get')`
    SELECT failures, locked_until FROM sign_in_failures WHERE subject = ${'subject'}`,
  // One statement: the lock and the count are checked and the attempt taken at once, whoever else is trying.
  reserve: sql<{ subject: string, now: number, max: number, staleBefore: number }>('sign-in-failure-reserve')`
    INSERT INTO sign_in_failures (subject, failures, locked_until, updated_at) VALUES (${'subject'}, 1, NULL, ${'now'})
    ON CONFLICT (subject) DO UPDATE SET
      failures = CASE WHEN sign_in_failures.updated_at < ${'staleBefore'} THEN 1 ELSE sign_in_failures.failures + 1 END,
      updated_at = ${'now'}
    WHERE (sign_in_failures.locked_until IS NULL OR sign_in_failures.locked_until <= ${'now'})
      AND (sign_in_failures.failures < ${'max'} OR sign_in_failures.updated_at < ${'staleBefore'})`,
  fail: sql<{ subject: string, now: number, max: number, lockUntil: number }>('sign-in-failure-fail')`
    UPDATE sign_in_failures SET
      locked_until = CASE WHEN failures >= ${'max'} THEN ${'lockUntil'} ELSE locked_until END,
      failures = CASE WHEN failures >= ${'max'} THEN 0 ELSE failures END,
      updated_at = ${'now'}
    WHERE subject = ${'subject'}`,
  release: sql<{ subject: string }>('sign-in-failure-release')`
    UPDATE sign_in_failures SET failures = CASE WHEN failures > 0 THEN failures - 1 ELSE 0 END WHERE subject = ${'subject'}`,
  clear: sql<{ subject: string }>('sign-in-failure-clear')`DELETE FROM sign_in_failures WHERE subject = ${'subject'}`
}

export function signInFailureStore (db: SqlRunner): SignInFailureStore {
  return {
    async get (subject) {
      const row = await db.get(failureSql.get, { subject })
      return row === undefined ? undefined : { failures: Number(row.failures), lockedUntil: row.locked_until === null ? null : Number(row.locked_until) }
    },
    async reserve (subject, now, max, staleBefore) { return await db.write(failureSql.reserve, { subject, now, max, staleBefore }) === 1 },
    async fail (subject, now, max, lockUntil) { await db.write(failureSql.fail, { subject, now, max, lockUntil }) },
    async release (subject) { await db.write(failureSql.release, { subject }) },
    async clear (subject) { await db.write(failureSql.clear, { subject }) }
  }
}
