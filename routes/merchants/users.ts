import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { problemAuthErrors, requiresKey } from '../../schemas/auth'
import { MerchantParams, merchantErrors } from '../../schemas/merchants'
import { CreateUserBody, UpdateUserBody, UserParams, toUserResource, userResponses } from '../../schemas/users'
import { IdempotencyHeaders, idempotencyRule } from '../../schemas/common'
import { invitedUserResponse } from '../../plugins/stored-responses'

const exampleMerchant = '/merchants/7c9e6679-7425-40de-944b-e07fc1f90ae7/users'
const authErrors = problemAuthErrors('only the operator or the merchant\'s owners manage its users (an API key may not)', exampleMerchant,
  'The role \'support\' may not do this (needs owner).')
const who = 'The operator (admin key), or a user of the merchant with the role `owner` (an API key may not: people are managed by people).'
const common = {
  ...authErrors,
  404: userResponses.notFound,
  429: merchantErrors.rateLimited,
  500: merchantErrors.internal,
  503: merchantErrors.unavailable
}

/** /merchants/{id}/users (issue 43): the people who sign in to the dashboard for a merchant, and their roles. */
const users: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/:id/users', {
    config: { auth: 'admin-or-own-merchant', roles: 'team', audit: 'user.invite' },
    schema: {
      tags: ['users'],
      operationId: 'inviteUser',
      summary: 'Invite a user',
      description: `${who} Creates the user and answers the invite link (shown only here, valid once for 72 hours). The invitee opens it in ` +
        'the dashboard, sets a password and may enroll an authenticator app (TOTP). Emails are unique across merchants. ' + idempotencyRule(true),
      security: requiresKey,
      params: MerchantParams,
      headers: IdempotencyHeaders,
      body: Type.Ref(CreateUserBody),
      response: {
        201: userResponses.invited,
        400: userResponses.createValidation,
        409: userResponses.emailTaken,
        413: merchantErrors.tooLarge,
        415: merchantErrors.createUnsupportedMediaType,
        ...common
      }
    }
  }, async (request, reply) => {
    return await app.idempotency.handle(request, reply, {
      work: async (key) => await app.users.invite(request.params.id, request.body, key),
      respond: invitedUserResponse,
      sealed: true
    })
  })

  app.get('/:id/users', {
    config: { auth: 'admin-or-own-merchant', roles: 'team' },
    schema: {
      tags: ['users'],
      operationId: 'listUsers',
      summary: 'List users',
      description: `${who} Every user of the merchant, oldest first, with their role, whether they accepted the invite and enrolled two-factor authentication.`,
      security: requiresKey,
      params: MerchantParams,
      response: { 200: userResponses.list, ...common }
    }
  }, async (request) => {
    const list = await app.users.list(request.params.id)
    return { data: list.map(toUserResource), hasMore: false }
  })

  app.get('/:id/users/:userId', {
    config: { auth: 'admin-or-own-merchant', roles: 'team' },
    schema: {
      tags: ['users'],
      operationId: 'getUser',
      summary: 'Get a user',
      description: who,
      security: requiresKey,
      params: UserParams,
      response: { 200: userResponses.one, ...common }
    }
  }, async (request) => toUserResource(await app.users.get(request.params.id, request.params.userId)))

  app.patch('/:id/users/:userId', {
    config: { auth: 'admin-or-own-merchant', roles: 'team', audit: { action: 'user.update', resourceParam: 'userId' } },
    schema: {
      tags: ['users'],
      operationId: 'updateUser',
      summary: 'Change a user\'s role',
      description: `${who} The user's sessions end at once: they sign in again with the new role. The merchant's last owner cannot be demoted (409).`,
      security: requiresKey,
      params: UserParams,
      body: Type.Ref(UpdateUserBody),
      response: {
        200: userResponses.one,
        400: userResponses.updateValidation,
        409: userResponses.lastOwner,
        413: merchantErrors.tooLarge,
        415: merchantErrors.createUnsupportedMediaType,
        ...common
      }
    }
  }, async (request) => toUserResource(await app.users.changeRole(request.params.id, request.params.userId, request.body.role)))

  app.delete('/:id/users/:userId', {
    config: { auth: 'admin-or-own-merchant', roles: 'team', audit: { action: 'user.delete', resourceParam: 'userId' } },
    schema: {
      tags: ['users'],
      operationId: 'deleteUser',
      summary: 'Remove a user',
      description: `${who} Deletes the user; their sessions end at once. The audit log keeps their entries (with their email). The merchant's last owner cannot be removed (409).`,
      security: requiresKey,
      params: UserParams,
      response: { 204: userResponses.deleted, 409: userResponses.lastOwner, ...common }
    }
  }, async (request, reply) => {
    await app.users.remove(request.params.id, request.params.userId)
    return await reply.code(204).send()
  })
}

export default users
