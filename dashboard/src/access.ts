import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { Principal, Role, Session } from './api'

/**
 * What a role may do, as the API enforces it (a call beyond the role is 403): the pages hide what would be refused.
 * `moveMoney`: refunds, captures, cancels, dispute acceptance; `configure`: listing and revoking API keys, webhooks,
 * connectors; `createKeys`: a new API key (it acts with an owner's rights, so only an owner mints one).
 */
export type Permission = 'manageUsers' | 'moveMoney' | 'configure' | 'createKeys'

const ROLE_CAN: Record<Role, Permission[]> = {
  owner: ['manageUsers', 'moveMoney', 'configure', 'createKeys'],
  developer: ['configure'],
  support: ['moveMoney'],
  viewer: []
}

export const ROLES = Object.keys(ROLE_CAN) as Role[]

export const ROLE_MEANS: Record<Role, string> = {
  owner: 'everything, users included',
  developer: 'API keys, webhooks and connectors; reads',
  support: 'refunds, captures and cancels; reads',
  viewer: 'reads only'
}

export function can (principal: Principal, permission: Permission): boolean {
  // The operator manages merchants' users and settings but acts on no payment; an API key does all but manage users.
  if (principal.kind === 'admin') return permission !== 'moveMoney'
  if (principal.user === undefined) return permission !== 'manageUsers'
  return ROLE_CAN[principal.user.role].includes(permission)
}

export const SessionContext = createContext<Session | null>(null)

/** Whether the signed-in principal may do it; outside a session the API alone decides. */
export function useCan (permission: Permission): boolean {
  const session = useContext(SessionContext)
  return session === null || can(session.principal, permission)
}

export const READ_ONLY = 'Your role reads these settings; changing them needs the owner or the developer role.'
