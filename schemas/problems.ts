import { Type, type TProperties, type TSchema } from '@sinclair/typebox'
import { ProblemDetails } from './common'

/**
 * One OpenAPI component per problem `type` this service defines (plugins/http/errors/problem.ts), with the
 * extension members its domain error adds, and `Problem` for the RFC 9110 status types. In the document,
 * `ProblemDetails` becomes their `oneOf` discriminated by `type`, so a generated client narrows on `type`.
 * Document only: the routes serialize problems with ProblemDetails itself (every member, optional).
 */
const member = ProblemDetails.properties

const common = {
  title: member.title,
  status: member.status,
  detail: member.detail,
  instance: member.instance,
  traceId: member.traceId
}

interface ProblemComponent { name: string, type: string, schema: TSchema }

/** A problem type a connector module adds (src/gateway/inbound.ts, InboundProblemType): its component's name, `type` and description. */
export interface ConnectorProblemComponent { component: string, type: string, description: string }

function problem (name: string, type: string, description: string, extensions: TProperties = {}): ProblemComponent {
  return {
    name,
    type,
    schema: Type.Object({ type: Type.Literal(type, { description: 'The problem type.' }), ...common, ...extensions }, {
      title: name,
      description,
      additionalProperties: false
    })
  }
}

/** A member of ProblemDetails (all optional there), required in the problem types that always carry it. */
const always = (schema: TSchema): TSchema => JSON.parse(JSON.stringify(schema)) as TSchema
const paymentId = always(member.paymentId)
const paymentStatus = always(member.paymentStatus)

/** The service's own problem types, each with the members its problem documents carry. */
const serviceProblems: ProblemComponent[] = [
  problem('PaymentDeclinedProblem', 'urn:problem-type:payment-declined', 'The gateway declined the charge (402); the payment is stored as `declined`.',
    { paymentId, declineCode: always(member.declineCode) }),
  problem('PaymentFailedProblem', 'urn:problem-type:payment-failed', 'A stored payment the recovery worker settled as `failed` (402).',
    { paymentId, failureCode: always(member.failureCode) }),
  problem('GatewayUnavailableProblem', 'urn:problem-type:gateway-unavailable', 'The gateway did not answer (503): the payment or refund named stays pending; retry with the same Idempotency-Key after Retry-After.',
    { paymentId: member.paymentId, refundId: member.refundId }),
  problem('IdempotencyKeyReusedProblem', 'urn:problem-type:idempotency-key-reused', 'The Idempotency-Key was used with a different request body (409).'),
  problem('IdempotencyKeyInUseProblem', 'urn:problem-type:idempotency-key-in-use', 'A request with this Idempotency-Key is still being processed (409, with Retry-After).'),
  problem('MerchantEmailTakenProblem', 'urn:problem-type:merchant-email-taken', 'Another merchant already uses this email (409).'),
  problem('WebhookDeliveryInFlightProblem', 'urn:problem-type:webhook-delivery-in-flight', 'An attempt of this delivery is being sent (409, with Retry-After).'),
  problem('ServiceUnavailableProblem', 'urn:problem-type:service-unavailable', 'The database is unavailable (503, with Retry-After); nothing was lost.'),
  problem('PaymentNotRefundableProblem', 'urn:problem-type:payment-not-refundable', 'The payment\'s status forbids a refund (409).',
    { paymentId, paymentStatus }),
  problem('PaymentDisputedProblem', 'urn:problem-type:payment-disputed', 'The payment has a dispute that is not won: no refund while the cardholder\'s bank decides (409).',
    { paymentId }),
  problem('DisputeNotAcceptableProblem', 'urn:problem-type:dispute-not-acceptable',
    'The dispute cannot be accepted (409): it is closed (`won`, `lost`), the PSP refused (its reason in `detail`), or its connector cannot accept disputes.',
    { disputeId: always(member.disputeId), disputeStatus: always(member.disputeStatus) }),
  problem('PaymentNotCancelableProblem', 'urn:problem-type:payment-not-cancelable', 'The payment\'s status forbids a cancel (409).',
    { paymentId, paymentStatus }),
  problem('RefundExceedsRemainingProblem', 'urn:problem-type:refund-exceeds-remaining', 'The refund is larger than what remains refundable (409).',
    { paymentId, requestedAmount: always(member.requestedAmount), remainingAmount: always(member.remainingAmount) }),
  problem('RefundFailedProblem', 'urn:problem-type:refund-failed', 'The gateway refused the refund (402); the amount remains refundable.',
    { paymentId, refundId: always(member.refundId), failureCode: member.failureCode }),
  problem('PaymentNotCapturableProblem', 'urn:problem-type:payment-not-capturable', 'The payment\'s status forbids a capture (409).',
    { paymentId, paymentStatus }),
  problem('CaptureFailedProblem', 'urn:problem-type:capture-failed', 'The gateway refused the capture (402); the payment still requires capture.',
    { paymentId, failureCode: always(member.failureCode) }),
  problem('NoConnectorProblem', 'urn:problem-type:no-connector', 'No connector can take the payment (409).'),
  problem('PublicBaseUrlRequiredProblem', 'urn:problem-type:public-base-url-required',
    'A customer-present payment (with `returnUrl`) while the service has no PUBLIC_BASE_URL to send the shopper back to (409); nothing was stored.'),
  problem('CustomerPresentUnsupportedProblem', 'urn:problem-type:customer-present-unsupported',
    'A customer-present payment (with `returnUrl`) whose connectors all charge off-session only (409); nothing was stored.'),
  problem('ConnectorCredentialsRefusedProblem', 'urn:problem-type:connector-credentials-refused', 'The PSP refused the connector credentials (400); nothing was stored.'),
  problem('ConnectorEventUnverifiedProblem', 'urn:problem-type:connector-event-unverified', 'A PSP event that could not be verified (400); nothing was recorded.'),
  problem('TotpRequiredProblem', 'urn:problem-type:totp-required', 'The email and password were right, but the user enrolled an authenticator app: send its current code as `totp` (401).'),
  problem('SignInLockedProblem', 'urn:problem-type:sign-in-locked', 'Five failed sign-ins locked this account, or this address, for 15 minutes (429, with Retry-After).'),
  problem('UserEmailTakenProblem', 'urn:problem-type:user-email-taken', 'A user with this email exists already, at this or another merchant (409).'),
  problem('LastOwnerProblem', 'urn:problem-type:last-owner', 'The change would leave the merchant without an owner (409).'),
  problem('ConnectorEventNotMatchedProblem', 'urn:problem-type:connector-event-not-matched', 'A PSP dispute event naming a payment whose charge, capture or refunds are not all recorded here yet (503, with Retry-After); nothing was applied and the PSP sends it again.')
]

const rfc9110 = 'https://www.rfc-editor.org/rfc/rfc9110#section-'
/** The `type` of a problem without a type of its own: its status's section (plugins/http/errors/problem.ts). */
export const STATUS_TYPES = [
  ...['15.5.1', '15.5.2', '15.5.4', '15.5.5', '15.5.6', '15.5.9', '15.5.10', '15.5.13', '15.5.14', '15.5.15', '15.5.16', '15.6.1', '15.6.4']
    .map((section) => `${rfc9110}${section}`),
  'https://www.rfc-editor.org/rfc/rfc6585#section-4',
  'https://www.rfc-editor.org/rfc/rfc6585#section-5',
  'about:blank'
]

/** Problems typed by their HTTP status (RFC 9110 / RFC 6585 section URLs, or about:blank): validation errors carry `errors`. */
export const statusProblem = Type.Object({
  type: Type.Unsafe<string>({ type: 'string', enum: STATUS_TYPES, description: 'The RFC section of the HTTP status (about:blank for any other).' }),
  ...common,
  errors: member.errors
}, { title: 'Problem', description: 'A problem typed by its HTTP status alone; a 400 names each invalid field in `errors`.', additionalProperties: false })

/**
 * The components to add to the document and the `ProblemDetails` that replaces the route schemas' one there: the
 * service's problem types, then the connector modules' (`connectorProblems`, their webhooks' own).
 */
export function problemComponents (connectorProblems: readonly ConnectorProblemComponent[] = []): { components: Record<string, unknown>, union: Record<string, unknown> } {
  const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
  const specificProblems = [
    ...serviceProblems,
    ...connectorProblems.map(({ component, type, description }) => problem(component, type, description))
  ]
  const components: Record<string, unknown> = { Problem: plain(statusProblem) }
  for (const { name, schema } of specificProblems) components[name] = plain(schema)
  const ref = (name: string) => `#/components/schemas/${name}`
  return {
    components,
    union: {
      title: 'Problem details (RFC 9457)',
      description: 'An RFC 9457 problem document: narrow on `type` (the service\'s own types carry their extension members; the others are typed by the HTTP status).',
      oneOf: [...specificProblems.map(({ name }) => ({ $ref: ref(name) })), { $ref: ref('Problem') }],
      // Every status type is mapped too: OpenAPI maps a member left out by its component name ("Problem"), which
      // generated clients (openapi-typescript) then take as the value of `type`.
      discriminator: {
        propertyName: 'type',
        mapping: Object.fromEntries([
          ...specificProblems.map(({ name, type }) => [type, ref(name)]),
          ...STATUS_TYPES.map((type) => [type, ref('Problem')])
        ])
      }
    }
  }
}
