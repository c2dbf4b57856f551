import type { Config } from '../config'
import type { ConnectorTypeDescription } from '../domain/connectors'
import type { FieldErrors } from '../domain/errors'
import type { LedgerStore } from '../store/types'
import type { InboundModule, InboundProblemType } from './inbound'
import type { PaymentGateway } from './types'

/*
 * What a connector is: one PSP reached with one account's credentials. Each PSP's folder
 * (stripe/, adyen/, simulated/) exports one ConnectorModule that builds them; registry.ts lists the modules.
 */

/** A connector account's credentials as the merchant gave them (decrypted; never logged or returned). */
export type ConnectorCredentials = Readonly<Record<string, string>>

/** A PSP reached with one account's credentials. */
export interface Connector {
  gateway: PaymentGateway
  /**
   * One read-only, authenticated call to the PSP (Stripe: GET /v1/balance; Adyen: POST /paymentMethods): resolves when the
   * credentials work; CredentialsRefusedError when the PSP refuses them; GatewayError when it cannot be reached.
   */
  verify: () => Promise<void>
}

/** The PSP answered that the credentials are not valid (Stripe: 401 on GET /v1/balance). Never carries the credentials. */
export class CredentialsRefusedError extends Error {
  override name = 'CredentialsRefusedError'
  constructor (message: string, readonly code: string = 'credentials_refused') {
    super(message)
  }
}

/** What a PSP can do, which routing and the payments service read instead of its name. */
export interface ConnectorCapabilities {
  /** Takes customer-present payments: asks for the shopper (3-D Secure, redirect) and reports `requires_action`. */
  customerPresent: boolean
  /** Takes a payment method object from the shopper's browser (Adyen's Web Components' `paymentMethod`) instead of a token. */
  paymentMethodObject: boolean
  /** Charges a payment method token: a payment without one it can use skips this connector. */
  needsPaymentMethod: boolean
}

/** What a connector module is built with: the instance's settings for every connector. */
export interface ConnectorSettings {
  /** The simulated gateways' ledger (each connector account has its own namespace in it). */
  ledger: LedgerStore
  /** The simulated bank's page of a charge waiting for its shopper, per simulated account (null: the instance default); unset: derived from the return address. */
  simulatedBankUrl?: (page: { key: string, returnUrl: string, account: string | null }) => string
  /**
   * The one validated configuration: each module reads its own settings in it (GATEWAY_TIMEOUT_MS bounds every PSP
   * call; a module's `urlSettings`, in `connectorUrls`, point its PSP's calls at another server, tests' local fakes).
   */
  config: Config
}

/** An operator setting of a module: an environment variable holding a base URL of its PSP's API (tests point it at a local fake). */
export interface ConnectorUrlSetting {
  /** The variable (`STRIPE_API_URL`): upper case, the PSP's name first. */
  name: string
  /** Its value when unset; none: unset means each account's own endpoint. */
  default?: string
}

/** Something the operator should know at start-up about this PSP's settings (logged at warn). */
export interface SettingsNote {
  message: string
  details: Record<string, string>
}

/**
 * One PSP, as the rest of the service knows it: its type, what it can do, how its credentials are checked and
 * hinted, and how a connector is built for an account. Listed in the registry (registry.ts); nothing outside
 * its folder and the registry names it.
 */
export interface ConnectorModule {
  /** The connector type accounts are created with (`POST /merchants/{id}/connectors {type}`): lower case letters, digits, `_`. */
  readonly type: string
  readonly capabilities: ConnectorCapabilities
  /** The members its credentials take, as the API documents them (the create and update bodies' `credentials`). */
  readonly credentialMembers: ConnectorTypeDescription['credentialMembers']
  /**
   * What is wrong with `credentials` for an account of this type (field errors under `credentials…`). Messages
   * describe the expected form and never quote what was sent.
   */
  credentialErrors: (credentials: unknown) => FieldErrors
  /** What an answer may show of valid credentials (`…` and the last 4 characters of the key); null: nothing to show. */
  credentialsHint: (credentials: ConnectorCredentials | undefined) => string | null
  /** Its base URL settings, read and checked with the configuration (their values in `config.connectorUrls`). */
  readonly urlSettings?: readonly ConnectorUrlSetting[]
  /** What the operator should know about this PSP's settings (e.g. a base URL that is not the PSP's); none by default. */
  settingsNotes?: (config: Config) => SettingsNote[]
  /** The connector of one account (`connectorId`; null for the instance default) with its credentials. */
  create: (credentials: ConnectorCredentials, connectorId: string | null, settings: ConnectorSettings) => Connector
  /**
   * The PSP's own events (its webhooks, its notifications): the webhook the connector routes serve for it, and its
   * receiver, built once per instance over the services' transitions for what a connector reports; none when the PSP sends none.
   */
  readonly inbound?: InboundModule
}

/**
 * The connector modules an instance has (registry.ts builds it; plugins/connectors decorates it): what routing,
 * the connector accounts and the schemas read instead of a PSP's name. Declared here, beside the module, so the
 * services that read it never import the registry, which imports every PSP's folder.
 */
export interface ConnectorRegistry {
  readonly modules: readonly ConnectorModule[]
  /** The types, in the modules' order. */
  readonly types: readonly string[]
  /** The module of `type`; undefined when the instance has none of that type. */
  moduleOf: (type: string) => ConnectorModule | undefined
  /** What `type` can do; nothing at all for a type the instance does not have. */
  capabilitiesOf: (type: string) => ConnectorCapabilities
  /** The types that have `capability`, in the modules' order. */
  typesWith: (capability: keyof ConnectorCapabilities) => string[]
  /** What is wrong with an account's `credentials` for `type` ({} for a type the instance does not have: the type's own check says so). */
  credentialErrors: (type: string, credentials: unknown) => FieldErrors
  /** The problem types the modules' webhooks add, by the code of the domain error each answers. */
  readonly problemTypes: ReadonlyMap<string, InboundProblemType>
}
