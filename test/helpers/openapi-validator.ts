/**
 * Checks HTTP responses against the committed openapi.yaml: the status must be documented for the
 * operation, the Content-Type must be one of the documented media types, and the body must validate
 * against the documented schema ($refs to components resolved). An undocumented status, media type or
 * body member is an error.
 *
 * Requests that match no documented operation (unknown paths, methods a path does not document) are
 * checked against the area's error shape instead: RFC 9457 problem documents under /api and /merchants,
 * the `{ error, code }` envelope everywhere else. /docs (Swagger UI and the document itself) is not
 * described by the document and is skipped.
 */
import { resolve } from 'node:path'
import Ajv, { type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { readOpenApiDocument } from './openapi-document'

export const OPENAPI_PATH = resolve(__dirname, '..', '..', 'openapi.yaml')
const DOCUMENT_ID = 'openapi.yaml'
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

interface MediaType { schema?: unknown }
interface ResponseObject { content?: Record<string, MediaType>, headers?: Record<string, unknown> }
interface Operation { operationId?: string, responses?: Record<string, ResponseObject> }
interface Document { paths: Record<string, Record<string, Operation>>, webhooks?: Record<string, { post?: WebhookOperation }> }
interface WebhookOperation {
  parameters?: Array<{ name: string, in: string, required?: boolean, schema?: unknown }>
  requestBody?: { content?: Record<string, MediaType> }
}

/** A webhook delivery as a receiver gets it: its headers and the exact body bytes. */
export interface DeliveryLike {
  headers: Record<string, string | string[] | number | undefined>
  body: string
}

/** What the validator needs from a response (a light-my-request response fits). */
export interface ResponseLike {
  statusCode: number
  headers: Record<string, string | string[] | number | undefined>
  body: string
}

export interface FoundOperation {
  /** e.g. `GET /products/{id}` (a HEAD request is checked against its GET operation). */
  name: string
  template: string
  method: string
  operation: Operation
}

export interface ResponseCheck {
  /** The documented operation, or undefined when the request matches none. */
  operation?: FoundOperation
  /** The area whose error shape applies: `problem`, `envelope`, or `none` (not described, e.g. /docs). */
  area: 'problem' | 'envelope' | 'none'
  errors: string[]
}

/** JSON.stringify with everything outside printable ASCII escaped: a raw U+2028 in a TAP line breaks the reporter. */
export function printable (value: unknown): string {
  return (JSON.stringify(value) ?? 'undefined').replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function escapePointer (segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1')
}

function mediaTypeOf (header: string | string[] | number | undefined): string | undefined {
  if (header === undefined) return undefined
  return String(Array.isArray(header) ? header[0] : header).split(';')[0]?.trim().toLowerCase()
}

function isJsonMediaType (type: string): boolean {
  return type === 'application/json' || type.endsWith('+json')
}

/** The error shape of the area a path belongs to. */
export function areaOf (path: string): ResponseCheck['area'] {
  if (path === '/docs' || path.startsWith('/docs/')) return 'none'
  if (path === '/api' || path.startsWith('/api/') || path === '/merchants' || path.startsWith('/merchants/')) return 'problem'
  return 'envelope'
}

export class OpenApiValidator {
  private readonly ajv: Ajv
  private readonly routes: Array<{ template: string, pattern: RegExp, item: Record<string, Operation> }>
  private readonly compiled = new Map<string, ValidateFunction>()

  constructor (readonly document: Document) {
    // OpenAPI 3.0 schema objects are (nearly) JSON Schema: `example` and friends are ignored, `nullable` is understood.
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true })
    addFormats(this.ajv)
    this.ajv.addSchema(document as object, DOCUMENT_ID)
    this.routes = Object.entries(document.paths).map(([template, item]) => ({
      template,
      item,
      pattern: new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`)
    }))
  }

  static load (path: string = OPENAPI_PATH): OpenApiValidator {
    return new OpenApiValidator(closed(readOpenApiDocument(path)) as Document)
  }

  /** The operation a request is answered by, per the document; HEAD falls back to GET. */
  findOperation (method: string, url: string): FoundOperation | undefined {
    const [path = url] = url.split('?')
    const lower = method.toLowerCase()
    for (const route of this.routes) {
      if (!route.pattern.test(path)) continue
      const documented = METHODS.includes(lower) ? route.item[lower] : undefined
      const operation = documented ?? (lower === 'head' ? route.item.get : undefined)
      if (operation === undefined) continue
      const used = documented !== undefined ? lower : 'get'
      return { name: `${used.toUpperCase()} ${route.template}`, template: route.template, method: used, operation }
    }
    return undefined
  }

  /** The statuses documented for an operation, as numbers. */
  documentedStatuses (method: string, url: string): number[] | undefined {
    const found = this.findOperation(method, url)
    return found === undefined ? undefined : Object.keys(found.operation.responses ?? {}).map(Number)
  }

  private validatorFor (pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer)
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` })
      this.compiled.set(pointer, validate)
    }
    return validate
  }

  private validateBody (pointer: string, body: unknown, errors: string[], label: string): void {
    const validate = this.validatorFor(pointer)
    if (!validate(body)) {
      for (const error of validate.errors ?? []) {
        errors.push(`${label}: body${error.instancePath} ${error.message ?? 'is invalid'}${error.params !== undefined ? ` ${printable(error.params)}` : ''}`)
      }
    }
  }

  private parseJson (response: ResponseLike, errors: string[], label: string): { ok: boolean, value?: unknown } {
    try {
      return { ok: true, value: JSON.parse(response.body) }
    } catch {
      errors.push(`${label}: body is not JSON: ${printable(response.body.slice(0, 200))}`)
      return { ok: false }
    }
  }

  /**
   * The documented response headers: a required one must be present, and every one that is present must
   * match its schema (components.headers are resolved; names compare case-insensitively).
   */
  private checkHeaders (documented: ResponseObject, response: ResponseLike, errors: string[], label: string): void {
    for (const [name, declared] of Object.entries(documented.headers ?? {})) {
      const header = this.resolveHeader(declared)
      const value = response.headers[name.toLowerCase()]
      if (value === undefined) {
        if (header.required === true) errors.push(`${label}: required header ${name} is missing`)
        continue
      }
      if (header.schema === undefined) continue
      const schema = header.schema as { type?: string }
      const text = String(Array.isArray(value) ? value.join(', ') : value)
      const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text) : text
      const cacheKey = `header:${JSON.stringify(header.schema)}`
      let validate = this.compiled.get(cacheKey)
      if (validate === undefined) this.compiled.set(cacheKey, validate = this.ajv.compile(header.schema as object))
      if (!validate(typed)) errors.push(`${label}: header ${name}: ${printable(text)} ${validate.errors?.[0]?.message ?? 'is invalid'}`)
    }
  }

  private resolveHeader (declared: unknown): { required?: boolean, schema?: unknown } {
    const target = (declared as { $ref?: string }).$ref
    if (target === undefined) return declared as { required?: boolean, schema?: unknown }
    const name = target.replace('#/components/headers/', '')
    const resolved = (this.document as unknown as { components: { headers: Record<string, { required?: boolean, schema?: unknown }> } }).components.headers[name]
    if (resolved === undefined) throw new Error(`the document references an undefined header ${target}`)
    return resolved
  }

  /**
   * Checks one webhook delivery against the document's `webhooks.<name>`: its content type, every header
   * parameter (required ones present, each matching its schema) and its body against the request body schema.
   */
  checkWebhook (name: string, delivery: DeliveryLike): string[] {
    const errors: string[] = []
    const label = `webhook ${name}`
    const operation = this.document.webhooks?.[name]?.post
    if (operation === undefined) return [`${label} is not documented`]
    const headers = Object.fromEntries((operation.parameters ?? []).filter((p) => p.in === 'header').map((p) => [p.name, p]))
    this.checkHeaders({ headers }, { statusCode: 0, ...delivery }, errors, label)
    const type = mediaTypeOf(delivery.headers['content-type'])
    const content = operation.requestBody?.content ?? {}
    if (type === undefined || content[type] === undefined) {
      errors.push(`${label}: content-type ${String(type)} is not documented (documented: ${Object.keys(content).join(', ')})`)
      return errors
    }
    const parsed = this.parseJson({ statusCode: 0, ...delivery }, errors, label)
    if (parsed.ok) {
      const pointer = ['webhooks', name, 'post', 'requestBody', 'content', type, 'schema'].map(escapePointer).join('/')
      this.validateBody(`/${pointer}`, parsed.value, errors, label)
    }
    return errors
  }

  /** Checks one response to `method url` against the document. */
  check (method: string, url: string, response: ResponseLike): ResponseCheck {
    const [path = url] = url.split('?')
    const area = areaOf(path)
    const found = this.findOperation(method, url)
    const errors: string[] = []
    const isHead = method.toUpperCase() === 'HEAD'
    const status = response.statusCode
    const type = mediaTypeOf(response.headers['content-type'])

    if (found === undefined) {
      if (area === 'none') return { area, errors }
      // OPTIONS on a resource path: 204 with Allow (a CORS preflight: Access-Control-Allow-Methods), no body.
      if (method.toUpperCase() === 'OPTIONS' && status === 204) {
        const allow = response.headers.allow ?? response.headers['access-control-allow-methods']
        if (typeof allow !== 'string' || !/^[A-Z]+(, [A-Z]+)*$/.test(allow)) errors.push(`OPTIONS ${printable(path)}: 204 without a valid Allow header (${printable(allow)})`)
        if (response.body !== '') errors.push(`OPTIONS ${printable(path)}: 204 with a body`)
        return { area, errors }
      }
      // Not a documented operation: an error in the area's shape (an unknown path, a method the path does not have).
      const label = `${method} ${printable(path)} (undocumented operation)`
      if (status < 400) errors.push(`${label}: answered ${status}, but only errors are expected here`)
      const expectedType = area === 'problem' ? 'application/problem+json' : 'application/json'
      if (type !== expectedType) errors.push(`${label}: content-type ${String(response.headers['content-type'])}, expected ${expectedType}`)
      if (!isHead) {
        const parsed = this.parseJson(response, errors, label)
        const component = area === 'problem' ? 'ProblemDetails' : 'ErrorEnvelope'
        if (parsed.ok) this.validateBody(`/components/schemas/${component}`, parsed.value, errors, label)
      }
      return { area, errors }
    }

    const label = `${method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path} → ${status} (${found.name})`
    const responses = found.operation.responses ?? {}
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((candidate) => candidate in responses)
    if (key === undefined) {
      errors.push(`${label}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`)
      return { operation: found, area, errors }
    }
    const documented = responses[key]
    if (documented === undefined) return { operation: found, area, errors }
    this.checkHeaders(documented, response, errors, label)
    const content = documented.content ?? {}
    const mediaTypes = Object.keys(content)
    if (mediaTypes.length === 0) {
      if (response.body !== '') errors.push(`${label}: no body is documented, but got ${printable(response.body.slice(0, 200))}`)
      return { operation: found, area, errors }
    }
    if (type === undefined) {
      errors.push(`${label}: no content-type (documented: ${mediaTypes.join(', ')})`)
      return { operation: found, area, errors }
    }
    const mediaType = mediaTypes.find((candidate) => candidate.toLowerCase() === type)
    if (mediaType === undefined) {
      errors.push(`${label}: content-type ${type} is not documented (documented: ${mediaTypes.join(', ')})`)
      return { operation: found, area, errors }
    }
    if (isHead) {
      if (response.body !== '') errors.push(`${label}: a HEAD response has a body`)
      return { operation: found, area, errors }
    }
    if (!isJsonMediaType(type) || content[mediaType]?.schema === undefined) return { operation: found, area, errors }
    const parsed = this.parseJson(response, errors, label)
    if (parsed.ok) {
      const pointer = ['paths', found.template, found.method, 'responses', key, 'content', mediaType, 'schema'].map(escapePointer).join('/')
      this.validateBody(`/${pointer}`, parsed.value, errors, label)
    }
    return { operation: found, area, errors }
  }
}

let shared: OpenApiValidator | undefined

/** One validator per test process, built from the committed openapi.yaml. */
export function openApiValidator (): OpenApiValidator {
  shared ??= OpenApiValidator.load()
  return shared
}

/**
 * The document as the service's tests read it: every object schema with `properties` and no `additionalProperties`
 * gets `additionalProperties: false` again. The published document leaves response schemas open (the versioning policy
 * adds members without a new version: schemas/openapi-contract.ts, openResponseSchemas); the service's own answers
 * are still checked strictly, so an undocumented member fails its tests.
 */
export function closed (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed)
  if (node === null || typeof node !== 'object') return node
  const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, key === 'properties' ? closedMembers(value) : closed(value)]))
  if ('properties' in copy && !('additionalProperties' in copy) && (copy.type === 'object' || copy.type === undefined)) copy.additionalProperties = false
  return copy
}

/** A `properties` map: its values are schemas (closed), its keys member names (never schema keywords). */
function closedMembers (properties: unknown): unknown {
  if (properties === null || typeof properties !== 'object') return properties
  return Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, closed(schema)]))
}
