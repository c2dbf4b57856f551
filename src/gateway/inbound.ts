import type { TObject, TSchema } from '@sinclair/typebox'
import type { ConnectorCaptureOutcome } from '../domain/captures'
import type { DisputeReport } from '../domain/disputes'
import type { Payment } from '../domain/payments'
import type { ConnectorRefundOutcome, ConnectorRefundReport, Refund } from '../domain/refunds'
import type { ConnectorRef } from '../domain/routing'
import type { Logger } from '../logger'
import type { AwaitingOutcome, Database, DisputeChange } from '../store/types'
import type { ChargeResult, PaymentGateway } from './types'

/*
 * What a PSP's inbound events (its webhooks, its notifications) may change here: the services' transitions for what a
 * connector reports by itself. Declared beside the connector modules, which apply their PSP's events through them;
 * the services implement them (their interfaces extend these), so a PSP's folder never imports a service.
 */

/** The payments service's transitions for what a connector reports. */
export interface PaymentReports {
  /**
   * The connector refused the cancel that gave back a held authorization (it was captured meanwhile, at the PSP):
   * the charge is refunded instead, once. Undefined when `chargeId` is no such release of the payment's.
   */
  releaseRefusedCancel: (paymentId: string, connector: ConnectorRef, chargeId: string) => Promise<Payment | undefined>
  /**
   * The connector reports a capture made at its dashboard of an authorization the payment holds (`held`): recorded
   * (`held`, `captured`, with the amount), and the charge is refunded that amount unless a cancel asked for is still
   * awaited (its refusal refunds it). Undefined when the payment holds no such charge (its own capture, say).
   */
  applyHeldCapture: (paymentId: string, connector: ConnectorRef, chargeId: string, amountMinor: number) => Promise<Payment | undefined>
  /**
   * The connector reports that a refund giving back held money (accepted, `release_received`) failed later (Adyen:
   * REFUND_FAILED, or REFUND with success false): recorded `release_refused` with `failureCode`, so the release is asked
   * again later. `reference` is the refund's (our release key). Undefined when it names no such release of the payment's.
   */
  applyReleaseRefundFailed: (paymentId: string, connector: ConnectorRef, chargeId: string, reference: string, failureCode: string) => Promise<Payment | undefined>
  /**
   * Applies an outcome a connector reported by itself (a PSP's webhook or notification). A payment pending on
   * that connector is settled exactly as an answer to the charge would settle it (connector reference, attempt,
   * transition, event) and its unfinished Idempotency-Key gets the answer. Money reported for an attempt the
   * payment left, or for a payment held as canceled, declined or failed, is given back at that connector and
   * recorded (`held`, `released`). The payment's own charge reported again, or a decline, changes nothing.
   * Undefined when there is no such payment.
   */
  applyConnectorOutcome: (paymentId: string, connector: ConnectorRef, result: ChargeResult) => Promise<Payment | undefined>
}

/** The capture service's transitions for what a connector reports. */
export interface CaptureReports {
  /**
   * Settles the capture reserved on a payment of `connector` with the outcome the connector reported
   * later (Adyen: CAPTURE, CAPTURE_FAILED): captured `amountMinor` → succeeded (payment.succeeded), or
   * refused → the reservation is released (still requires_capture). A payment without a reserved capture
   * (settled already, or never reserved) or on another connector is returned unchanged; undefined: no such payment.
   */
  applyConnectorCapture: (paymentId: string, connector: ConnectorRef, outcome: ConnectorCaptureOutcome) => Promise<Payment | undefined>
  /**
   * Records the cancel its connector reported later (Adyen: CANCELLATION): an authorization
   * (requires_capture, no capture reserved) or a pending payment of `connector` becomes `canceled`
   * (payment.canceled). Any other payment is returned unchanged; undefined: no such payment.
   */
  applyConnectorVoid: (paymentId: string, connector: ConnectorRef, options?: { madeAtConnector?: boolean }) => Promise<Payment | undefined>
}

/** The refund service's transitions for what a connector reports. */
export interface RefundReports {
  /**
   * Settles a pending refund with the outcome its connector reported later (an Adyen REFUND or
   * REFUND_FAILED notification): succeeded (refund.succeeded), or failed with its held amount released
   * (refund.failed), with the payment in one transaction. A refund no longer pending is returned as it
   * is (the caller compares); undefined when the payment has no such refund.
   */
  applyConnectorOutcome: (paymentId: string, refundId: string, outcome: ConnectorRefundOutcome) => Promise<Refund | undefined>
  /**
   * Records a refund made at the PSP without us, which the PSP reported succeeded (issue 40): a `succeeded` refund with
   * origin `connector` and the PSP's id, the payment's amounts and status, and refund.succeeded, in one transaction under
   * the payment's lock. Once per PSP id (a repeated report returns the recorded one). Undefined when it cannot be
   * recorded (no such payment, another currency, more than remains): logged as an error for a person.
   */
  recordConnectorRefund: (paymentId: string, report: ConnectorRefundReport) => Promise<Refund | undefined>
  /**
   * Refunds in full the charge of a payment the merchant canceled while its outcome was unknown, which the connector
   * then reported captured (its cancel impossible): the refund with reason CANCEL_REFUND_REASON, resumed when one
   * exists (once per payment). Undefined when nothing is left to refund or the payment refuses a refund (a dispute):
   * logged as an error for a person.
   */
  refundCanceledCharge: (paymentId: string) => Promise<Refund | undefined>
}

/** The dispute service's transition for what a connector reports. */
export interface DisputeReports {
  /**
   * Records what a connector reported of a dispute of `paymentId` (issue 40): creates the dispute, or merges the report
   * into the recorded one (a report of an earlier stage changes nothing, so duplicates and any order end in the same
   * state), and sets the payment's amount disputed, in one transaction with its event. Undefined: no such payment.
   */
  applyConnectorReport: (paymentId: string, connector: ConnectorRef & { id: string }, report: DisputeReport) => Promise<DisputeChange | undefined>
}

/** A connector account as an applier reads it (the directory's RoutableAccount): its credentials opened. */
export interface InboundAccount {
  id: string
  type: string
  credentials: Readonly<Record<string, string>>
  updatedAt: string
}

/** What an inbound-event applier is built with. */
export interface InboundPorts {
  db: Pick<Database, 'connectorEvents' | 'payments' | 'refunds'>
  /** The connector accounts with their credentials opened (disabled and deleted ones too: their payments still settle). */
  accounts: { byId: (id: string) => Promise<InboundAccount | undefined> }
  /** The accounts' gateways: what an event names may be read again at the PSP (a read, never a write). */
  connectors: { gatewayOf: (connector: ConnectorRef) => Promise<PaymentGateway> }
  payments: PaymentReports
  captures: CaptureReports
  refunds: RefundReports
  disputes: DisputeReports
  clock: () => number
  log: Logger
}

/** One delivery to a PSP's webhook, as it arrived. */
export interface InboundDelivery {
  /** The exact bytes: a signature may cover them. */
  rawBody: Buffer
  /** The body as parsed (JSON), already checked against the route's schema. */
  body: unknown
  headers: Readonly<Record<string, string | string[] | undefined>>
}

/** What the recovery worker's pass over a PSP's kept deliveries did, and what still waits for the PSP's word, by kind. */
export interface InboundRecovery {
  processed: number
  awaiting: Record<AwaitingOutcome['kind'], number>
}

/** How a PSP's own events (its webhooks, its notifications) are received: a connector module builds one over the ports. */
export interface InboundReceiver {
  /**
   * Verifies one delivery for connector account `connectorId` (a domain error when it cannot be: nothing is recorded or
   * changed), records it in the inbox, and acts on it once.
   */
  receive: (connectorId: string, delivery: InboundDelivery) => Promise<void>
  /**
   * The recovery worker's pass, for a PSP whose deliveries are kept with their payload: acts on those recorded at least
   * `ageSeconds` ago and never processed (a crash in between), and counts (and logs once) what it accepted long ago and
   * never reported on.
   */
  recover?: (options: { ageSeconds: number }) => Promise<InboundRecovery>
}

/**
 * A problem type of a PSP's own (RFC 9457 `type`), for a domain error its receiver throws that the service's generic
 * ones do not describe: the HTTP layer answers the error's `code` with it and documents it as a component.
 */
export interface InboundProblemType {
  /** The domain error's code, starting with the module's type in upper case and `_` (`ADYEN_…`): the registry refuses others. */
  code: string
  /** The problem `type` (a URN). */
  type: string
  title: string
  /** The OpenAPI component's name (`…Problem`). */
  component: string
  /** The component's description: when it is answered, with its status. */
  description: string
}

/** A refusal the webhook documents: when it is answered, and the problem document shown as its example. */
export interface InboundRefusal {
  description: string
  /** The example's type, title and detail (its instance and traceId are the HTTP layer's). */
  example?: { type: string, title: string, detail: string }
}

/**
 * How a PSP's events reach the service over HTTP, which the connector routes read to serve and document
 * `POST /connectors/{connectorId}/<path>` (no API key: the PSP's signature is the authentication).
 */
export interface InboundWebhook {
  /** The URL's last segment (`<psp>-events`): lower case letters, digits and `-`. */
  path: string
  /** The OpenAPI operation: its id, summary and description (how to register the URL at the PSP, what a delivery settles). */
  operationId: string
  summary: string
  description: string
  /** The request headers the receiver reads (documented, checked), if any. */
  headers?: TObject
  /** The body as the PSP sends it, with an `$id` (its component). */
  body: TSchema
  /** What a delivery received is answered (200): the body the PSP expects, in its media type. */
  answer: { description: string, mediaType: 'application/json' | 'text/plain', schema: TSchema, body: unknown }
  /** The 4xx and 503 answers particular to this PSP (a 400 always: its body's form); the others are the area's. */
  refusals: { 400: InboundRefusal, 401?: InboundRefusal, 503?: InboundRefusal }
  /** Problem types of the PSP's own. */
  problemTypes?: readonly InboundProblemType[]
}

/** A PSP's inbound events: the webhook they arrive on, and the receiver built over the services' ports. */
export interface InboundModule {
  webhook: InboundWebhook
  receiver: (ports: InboundPorts) => InboundReceiver
}
