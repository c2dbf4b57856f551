import type { FastifyReply, FastifyRequest } from 'fastify'
import { STATUS_CODES } from 'node:http'
import type { ClassifiedError } from './classify-error'
import { areaErrorHandler } from './area-error-handler'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'

const rfc9110 = 'https://www.rfc-editor.org/rfc/rfc9110#section-'
const statusTypes: Record<number, string> = {
  400: `${rfc9110}15.5.1`,
  401: `${rfc9110}15.5.2`,
  403: `${rfc9110}15.5.4`,
  404: `${rfc9110}15.5.5`,
  405: `${rfc9110}15.5.6`,
  408: `${rfc9110}15.5.9`,
  409: `${rfc9110}15.5.10`,
  412: `${rfc9110}15.5.13`,
  413: `${rfc9110}15.5.14`,
  414: `${rfc9110}15.5.15`,
  415: `${rfc9110}15.5.16`,
  429: 'https://www.rfc-editor.org/rfc/rfc6585#section-4',
  431: 'https://www.rfc-editor.org/rfc/rfc6585#section-5',
  500: `${rfc9110}15.6.1`,
  503: `${rfc9110}15.6.4`
}

/** Problem types specific to this service; documented in docs/api.md (Errors) and the OpenAPI description. */
export const problemTypes: Record<string, string> = {
  PAYMENT_DECLINED: 'urn:problem-type:payment-declined',
  GATEWAY_UNAVAILABLE: 'urn:problem-type:gateway-unavailable',
  IDEMPOTENCY_KEY_REUSED: 'urn:problem-type:idempotency-key-reused',
  IDEMPOTENCY_KEY_IN_USE: 'urn:problem-type:idempotency-key-in-use',
  EMAIL_TAKEN: 'urn:problem-type:merchant-email-taken',
  DELIVERY_IN_FLIGHT: 'urn:problem-type:webhook-delivery-in-flight',
  STORE_UNAVAILABLE: 'urn:problem-type:service-unavailable',
  PAYMENT_FAILED: 'urn:problem-type:payment-failed',
  PAYMENT_NOT_REFUNDABLE: 'urn:problem-type:payment-not-refundable',
  PAYMENT_DISPUTED: 'urn:problem-type:payment-disputed',
  DISPUTE_NOT_ACCEPTABLE: 'urn:problem-type:dispute-not-acceptable',
  PAYMENT_NOT_CANCELABLE: 'urn:problem-type:payment-not-cancelable',
  REFUND_EXCEEDS_REMAINING: 'urn:problem-type:refund-exceeds-remaining',
  REFUND_FAILED: 'urn:problem-type:refund-failed',
  PAYMENT_NOT_CAPTURABLE: 'urn:problem-type:payment-not-capturable',
  CAPTURE_FAILED: 'urn:problem-type:capture-failed',
  NO_CONNECTOR: 'urn:problem-type:no-connector',
  PUBLIC_BASE_URL_REQUIRED: 'urn:problem-type:public-base-url-required',
  CUSTOMER_PRESENT_UNSUPPORTED: 'urn:problem-type:customer-present-unsupported',
  CREDENTIALS_REFUSED: 'urn:problem-type:connector-credentials-refused',
  CONNECTOR_EVENT_UNVERIFIED: 'urn:problem-type:connector-event-unverified',
  CONNECTOR_EVENT_NOT_MATCHED: 'urn:problem-type:connector-event-not-matched',
  TOTP_REQUIRED: 'urn:problem-type:totp-required',
  SIGN_IN_LOCKED: 'urn:problem-type:sign-in-locked',
  USER_EMAIL_TAKEN: 'urn:problem-type:user-email-taken',
  LAST_OWNER: 'urn:problem-type:last-owner'
}

const titles: Record<string, string> = {
  VALIDATION: 'One or more validation errors occurred.',
  INVALID_JSON: 'The request body is not valid JSON.',
  EMPTY_BODY: 'The request body is empty.',
  PAYMENT_DECLINED: 'The payment was declined.',
  GATEWAY_UNAVAILABLE: 'The payment gateway is unavailable.',
  IDEMPOTENCY_KEY_REUSED: 'The idempotency key was reused with a different request.',
  IDEMPOTENCY_KEY_IN_USE: 'A request with this idempotency key is still in progress.',
  DELIVERY_IN_FLIGHT: 'The webhook delivery is being attempted.',
  STORE_UNAVAILABLE: 'The service is temporarily unavailable.',
  INTERNAL: 'An unexpected error occurred.',
  PAYMENT_FAILED: 'The payment failed.',
  PAYMENT_NOT_REFUNDABLE: 'The payment cannot be refunded.',
  PAYMENT_DISPUTED: 'The payment is disputed.',
  DISPUTE_NOT_ACCEPTABLE: 'The dispute cannot be accepted.',
  PAYMENT_NOT_CANCELABLE: 'The payment cannot be canceled.',
  REFUND_EXCEEDS_REMAINING: 'The refund exceeds the refundable amount.',
  REFUND_FAILED: 'The refund was refused.',
  PAYMENT_NOT_CAPTURABLE: 'The payment cannot be captured.',
  CAPTURE_FAILED: 'The capture was refused.',
  NO_CONNECTOR: 'No connector can take the payment.',
  PUBLIC_BASE_URL_REQUIRED: 'Customer-present payments need PUBLIC_BASE_URL.',
  CUSTOMER_PRESENT_UNSUPPORTED: 'No connector can take a customer-present payment.',
  CREDENTIALS_REFUSED: 'The PSP refused the connector credentials.',
  CONNECTOR_EVENT_UNVERIFIED: 'The connector event could not be verified.',
  CONNECTOR_EVENT_NOT_MATCHED: 'The connector event names a payment not matched yet.',
  TOTP_REQUIRED: 'A two-factor code is required.',
  SIGN_IN_LOCKED: 'Too many failed sign-ins.',
  USER_EMAIL_TAKEN: 'A user with this email already exists.',
  LAST_OWNER: 'The merchant needs an owner.'
}

/** True when `code` or `type` is one of the service's own problem codes or types (a connector module's may not be). */
export function isServiceProblem ({ code, type }: { code: string, type: string }): boolean {
  return code in problemTypes || code in titles || Object.values(problemTypes).includes(type)
}

export interface ProblemDocument {
  type: string
  title: string
  status: number
  detail?: string
  instance: string
  traceId: string
  errors?: Record<string, string[]>
  [extension: string]: unknown
}

/** Where a problem happened: the request path and the request id. */
export interface ProblemContext {
  instance: string
  traceId: string
}

/** The most of a client's input a problem echoes (a 12 KB path must not come back twice). */
export const MAX_ECHO_LENGTH = 256

/** `text`, cut to MAX_ECHO_LENGTH characters with an ellipsis. */
export function bounded (text: string, max = MAX_ECHO_LENGTH): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/** The request's path, without the query. */
function pathOf (request: FastifyRequest): string {
  const [path = request.url] = request.url.split('?')
  return path
}

export function problemContextOf (request: FastifyRequest): ProblemContext {
  return { instance: bounded(pathOf(request)), traceId: request.id }
}

/** A problem type beside the service's own: a connector module's (its webhook's errors). */
export interface OwnProblemType {
  type: string
  title: string
}

export function buildProblem (failure: ClassifiedError, context: ProblemContext, own?: OwnProblemType): ProblemDocument {
  const problem: ProblemDocument = {
    type: own?.type ?? problemTypes[failure.code] ?? statusTypes[failure.statusCode] ?? 'about:blank',
    title: own?.title ?? titles[failure.code] ?? STATUS_CODES[failure.statusCode] ?? 'Error',
    status: failure.statusCode,
    instance: context.instance,
    traceId: context.traceId
  }
  if (!failure.internal && failure.code !== 'VALIDATION') problem.detail = failure.message
  if (failure.fieldErrors !== undefined) problem.errors = failure.fieldErrors
  if (failure.domain !== undefined) Object.assign(problem, failure.domain.extensions)
  return problem
}

/** The problem type a connector module gives the error `code`, if any (its registry is there in every full instance). */
function connectorProblemTypeOf (request: FastifyRequest, code: string): OwnProblemType | undefined {
  return request.server.hasDecorator('connectorRegistry') ? request.server.connectorRegistry.problemTypes.get(code) : undefined
}

/** Error handler for areas that speak RFC 9457 problem documents. */
export const problemErrorHandler = areaErrorHandler(PROBLEM_CONTENT_TYPE, (failure, request) =>
  buildProblem(failure, problemContextOf(request), connectorProblemTypeOf(request, failure.code)))

export function problemNotFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const failure: ClassifiedError = { statusCode: 404, code: 'NOT_FOUND', message: `No route matches ${request.method} ${bounded(pathOf(request), 80)}.`, headers: {}, internal: false }
  return reply.code(404).type(PROBLEM_CONTENT_TYPE).send(buildProblem(failure, problemContextOf(request)))
}
