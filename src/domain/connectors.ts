import { DomainError } from './errors'
import type { ConnectorType } from './routing'

export type { ConnectorType }

export const CONNECTOR_STATUSES = ['enabled', 'disabled'] as const
export type ConnectorStatus = typeof CONNECTOR_STATUSES[number]

/** Routing order: lower first; equal priorities go oldest first. */
export const PRIORITY_MIN = 0
export const PRIORITY_MAX = 1000
export const DEFAULT_PRIORITY = 0
export const DESCRIPTION_MAX_LENGTH = 255
/** At most this many connector accounts (not deleted) per merchant. */
export const MAX_CONNECTORS_PER_MERCHANT = 20

/** A merchant's account at a PSP, as the API shows it (never its credentials). */
export interface ConnectorAccount {
  id: string
  merchantId: string
  type: ConnectorType
  priority: number
  status: ConnectorStatus
  description: string | null
  /** `…` and the last 4 characters of the secret key; null when the type takes no credentials. */
  credentialsHint: string | null
  createdAt: string
  updatedAt: string
}

/** As stored: the credentials sealed (JSON, encrypted with the account id as associated data); deleted accounts kept. */
export interface StoredConnectorAccount extends ConnectorAccount {
  credentials: string
  deletedAt: string | null
}

export type ConnectorCredentialsInput = Record<string, string>

/** One member of a connector type's credentials as the API documents it (the type's module checks the value). */
export interface CredentialMember {
  description: string
  minLength: number
  maxLength: number
  example: string
}

/** What the API documents of a connector type: its name and its credentials' members. */
export interface ConnectorTypeDescription {
  type: ConnectorType
  credentialMembers: Readonly<Record<string, CredentialMember>>
}

export interface ConnectorInput {
  type: ConnectorType
  credentials?: ConnectorCredentialsInput
  priority?: number
  description?: string
}

export interface ConnectorPatch {
  priority?: number
  status?: ConnectorStatus
  description?: string | null
  credentials?: ConnectorCredentialsInput
}

/** The account without what is stored only (sealed credentials, deletion time). */
export function publicAccount (stored: StoredConnectorAccount): ConnectorAccount {
  const { credentials: _credentials, deletedAt: _deletedAt, ...account } = stored
  return account
}

/** The PSP refused the credentials (checked before anything is stored). Never quotes them. */
export class ConnectorCredentialsRefusedError extends DomainError {
  readonly kind = 'validation'
  readonly code = 'CREDENTIALS_REFUSED'
  constructor (type: ConnectorType) {
    super(`The ${type} account refused these credentials (checked with one read-only call); nothing was stored. Check the key and its mode (test or live).`)
  }
}

/**
 * A PSP's webhook delivery that cannot be verified: no such connector account, not one that takes
 * these events, no signing secret configured, or a signature that is missing, wrong or too old.
 * Nothing was recorded or changed. One message for every cause (the log says which).
 */
export class ConnectorEventUnverifiedError extends DomainError {
  readonly kind = 'validation'
  readonly code = 'CONNECTOR_EVENT_UNVERIFIED'
  /** `message`: the PSP's causes, in its words (its receiver knows them); one message for every cause. */
  constructor (message = 'The event could not be verified: unknown connector account, or a signature that is missing or does not match. Nothing was recorded.') {
    super(message)
  }
}

/**
 * A verified PSP event we cannot apply yet: it names a payment whose charge, capture or refunds are not all recorded
 * here (the payment is still pending or requires capture after a lost answer, or a refund of it is in flight). Nothing was applied; the PSP sends the event
 * again later, by when the recovery worker has recorded what the PSP did.
 */
export class ConnectorEventNotMatchedError extends DomainError {
  readonly kind = 'unavailable'
  readonly code = 'CONNECTOR_EVENT_NOT_MATCHED'
  override readonly retryAfterSeconds = 60
  constructor () {
    super('The event names a payment whose charge or capture is not recorded yet; nothing was applied. Send it again later.')
  }
}
