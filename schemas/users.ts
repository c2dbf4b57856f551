import { Type, type Static } from '@sinclair/typebox'
import { MerchantParams } from './merchants'
import { MAX_PARAM_LENGTH } from './patterns'
import { jsonResponse, problemResponse } from './common'
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, USER_ROLES, userStatus, type User as StoredUser } from '../src/domain/users'

const exampleUserId = '019aaa10-3c4d-7e5f-8a9b-0c1d2e3f4a5b'
const exampleMerchantId = '7c9e6679-7425-40de-944b-e07fc1f90ae7'
const exampleToken = 'Jm1c4oQ9t3s2u1EkX0c1Jb6w0l5m1WnKk7w2o2QyYV8'

export const UserRole = Type.Union(USER_ROLES.map((role) => Type.Literal(role)), {
  description: '`owner`: everything, users included. `developer`: API keys, webhook endpoints, connector accounts, and reads. ' +
    '`support`: reads, refunds, cancels, captures, dispute answers. `viewer`: reads. See docs/security.md for the table of routes.',
  examples: ['support']
})

const exampleUser = {
  id: exampleUserId,
  merchantId: exampleMerchantId,
  email: 'ana@shop.example',
  role: 'support',
  status: 'active',
  twoFactorEnabled: true,
  createdAt: '2026-12-01T09:00:00.000Z',
  lastSignInAt: '2026-12-04T08:15:00.000Z'
}

export const User = Type.Object({
  id: Type.String({ format: 'uuid', maxLength: 36, examples: [exampleUserId] }),
  merchantId: Type.String({ format: 'uuid', maxLength: 36, examples: [exampleMerchantId] }),
  email: Type.String({ format: 'email', maxLength: 254, description: 'What the person signs in with (lower case; unique across merchants).', examples: ['ana@shop.example'] }),
  role: UserRole,
  status: Type.Union([Type.Literal('invited'), Type.Literal('active')], { description: '`invited` until the invite link was used to set a password.' }),
  twoFactorEnabled: Type.Boolean({ description: 'The user enrolled an authenticator app (TOTP): signing in needs its code.' }),
  createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
  lastSignInAt: Type.Union([Type.String({ format: 'date-time', maxLength: 64 }), Type.Null()], { description: 'null: never signed in.' })
}, { $id: 'User', title: 'User', description: 'A person who signs in to the dashboard for a merchant. Never their password or TOTP secret.', additionalProperties: false, examples: [exampleUser] })
export type UserType = Static<typeof User>

export const UserList = Type.Object({
  data: Type.Array(Type.Ref(User), { maxItems: 1000, description: 'The merchant\'s users, oldest first.' }),
  hasMore: Type.Boolean({ description: 'Always false: a merchant\'s users fit in one answer.' })
}, { $id: 'UserList', title: 'Users', additionalProperties: false, examples: [{ data: [exampleUser], hasMore: false }] })

export const CreateUserBody = Type.Object({
  email: Type.String({ format: 'email', minLength: 3, maxLength: 254, description: 'The person\'s email address (compared case-insensitively).', examples: ['ana@shop.example'] }),
  role: UserRole
}, { $id: 'CreateUserRequest', title: 'User invite', additionalProperties: false, examples: [{ email: 'ana@shop.example', role: 'support' }] })
export type CreateUserBodyType = Static<typeof CreateUserBody>

export const UpdateUserBody = Type.Object({ role: UserRole }, {
  $id: 'UpdateUserRequest', title: 'User change', additionalProperties: false, examples: [{ role: 'viewer' }]
})

export const InvitedUser = Type.Object({
  user: Type.Ref(User),
  invite: Type.Object({
    url: Type.String({
      maxLength: 256,
      description: 'The invite link, relative to this service: give it to the person (it is shown only here). Opening it in the dashboard ' +
        'lets them set a password; it works once, for 72 hours.',
      examples: [`/dashboard/#/invite/${exampleToken}`]
    }),
    expiresAt: Type.String({ format: 'date-time', maxLength: 64 })
  }, { additionalProperties: false })
}, {
  $id: 'InvitedUser',
  title: 'Invited user',
  additionalProperties: false,
  examples: [{ user: { ...exampleUser, status: 'invited', twoFactorEnabled: false, lastSignInAt: null }, invite: { url: `/dashboard/#/invite/${exampleToken}`, expiresAt: '2026-12-04T09:00:00.000Z' } }]
})

export const UserParams = Type.Object({
  id: MerchantParams.properties.id,
  userId: Type.String({ maxLength: MAX_PARAM_LENGTH, description: 'The user\'s id, as listed.', examples: [exampleUserId] })
})

export const INVITE_PATH = '/dashboard/#/invite/'

export function toUserResource (user: StoredUser): UserType {
  return {
    id: user.id,
    merchantId: user.merchantId,
    email: user.email,
    role: user.role,
    status: userStatus(user),
    twoFactorEnabled: user.totpEnabledAt !== null,
    createdAt: user.createdAt,
    lastSignInAt: user.lastSignInAt
  }
}

const passwordRule = `At least ${PASSWORD_MIN_LENGTH} characters (at most ${PASSWORD_MAX_LENGTH}), and not on the list of commonly used passwords.`

export const AcceptInviteBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 64, description: 'The token at the end of the invite link.', examples: [exampleToken] }),
  password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH, description: passwordRule, examples: ['correct horse battery staple'] })
}, { $id: 'AcceptInviteRequest', title: 'Invite acceptance', additionalProperties: false, examples: [{ token: exampleToken, password: 'correct horse battery staple' }] })

export const ChangePasswordBody = Type.Object({
  currentPassword: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
  newPassword: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH, description: passwordRule })
}, { $id: 'ChangePasswordRequest', title: 'Password change', additionalProperties: false, examples: [{ currentPassword: 'correct horse battery staple', newPassword: 'another long passphrase 42' }] })

export const TotpEnrollment = Type.Object({
  secret: Type.String({ maxLength: 128, description: 'The base32 secret, for typing into an authenticator app (shown only here).', examples: ['JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'] }),
  otpauthUrl: Type.String({ maxLength: 512, description: 'The same secret as an `otpauth://` URI (what a QR code encodes).', examples: ['otpauth://totp/Payments%20router:ana%40shop.example?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Payments%20router'] })
}, { $id: 'TotpEnrollment', title: 'TOTP enrollment', additionalProperties: false, examples: [{ secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', otpauthUrl: 'otpauth://totp/Payments%20router:ana%40shop.example?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Payments%20router' }] })

export const ConfirmTotpBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 16, description: 'The authenticator app\'s current 6-digit code.', examples: ['492039'] })
}, { $id: 'ConfirmTotpRequest', title: 'TOTP confirmation', additionalProperties: false, examples: [{ code: '492039' }] })

export const TotpState = Type.Object({
  twoFactorEnabled: Type.Boolean({ description: 'True: signing in needs a code from now on.' })
}, { $id: 'TotpState', title: 'Two-factor state', additionalProperties: false, examples: [{ twoFactorEnabled: true }] })

export const userResponses = {
  invited: jsonResponse('The user, and the invite link (shown only here).', Type.Ref(InvitedUser)),
  list: jsonResponse('The merchant\'s users.', Type.Ref(UserList)),
  one: jsonResponse('The user.', Type.Ref(User)),
  deleted: { description: 'Deleted: the user\'s sessions ended at once.', type: 'null' },
  createValidation: problemResponse('Validation failure: `errors` maps `email` or `role` to messages; also invalid JSON or an empty body.'),
  updateValidation: problemResponse('Validation failure: `errors.role` says why; also invalid JSON or an empty body.'),
  notFound: problemResponse('No merchant or no such user of it (another merchant\'s id is answered 404 too).'),
  emailTaken: problemResponse('A user with this email exists already (`type` urn:problem-type:user-email-taken).'),
  lastOwner: problemResponse('The change would leave the merchant without an owner (`type` urn:problem-type:last-owner): make another user owner first; ' +
    'or the user changed or was removed while the request was made (RFC 9110 409): read it again.')
}
