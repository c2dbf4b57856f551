import type { FieldErrors } from '../../../src/domain/errors'
import { patternMessages } from '../../../schemas/patterns'

/** The subset of an Ajv error that the service reads. */
export interface SchemaIssue {
  keyword: string
  instancePath: string
  message?: string
  params: Record<string, unknown>
}

const typeNames: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  object: 'a JSON object',
  array: 'an array',
  boolean: 'true or false',
  null: 'null'
}

/** Friendlier wording for `format` failures than "must be a valid <format>". */
const formatMessages: Record<string, string> = {
  email: 'must be an email address such as name@example.com'
}

function describeIssue (issue: SchemaIssue): string {
  const p = issue.params
  switch (issue.keyword) {
    case 'required': return 'is required'
    case 'additionalProperties': return 'is not a recognised field'
    case 'type': return `must be ${String(p.type).split(',').map((t) => typeNames[t] ?? t).join(' or ')}`
    case 'minLength': return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long`
    case 'maxLength': return `must be at most ${String(p.limit)} characters long`
    case 'minimum': return `must be at least ${String(p.limit)}`
    case 'maximum': return `must be at most ${String(p.limit)}`
    case 'exclusiveMinimum': return p.limit === 0 ? 'must be positive (greater than 0)' : `must be greater than ${String(p.limit)}`
    case 'exclusiveMaximum': return `must be less than ${String(p.limit)}`
    case 'pattern': return patternMessages.get(String(p.pattern)) ?? `must match ${String(p.pattern)}`
    case 'enum': return `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`
    case 'format': return formatMessages[String(p.format)] ?? `must be a valid ${String(p.format)}`
    case 'minProperties': return 'must not be empty'
    default: return issue.message ?? 'is invalid'
  }
}

function fieldOf (issue: SchemaIssue, context: string | undefined): string {
  const base = issue.instancePath.replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~')
  const child = issue.keyword === 'required'
    ? issue.params.missingProperty
    : issue.keyword === 'additionalProperties' ? issue.params.additionalProperty : undefined
  const path = [base, child].filter((part) => typeof part === 'string' && part !== '').join('.')
  if (path !== '') return path
  return context === 'body' || context === undefined ? '$' : context
}

/** Turns schema validation issues into a field → messages map. */
export function fieldErrorsFromSchema (issues: SchemaIssue[], context?: string): FieldErrors {
  const errors: FieldErrors = {}
  for (const issue of issues) {
    const field = fieldOf(issue, context)
    const message = field === '$' ? `The request body ${describeIssue(issue)}.` : `The ${field} field ${describeIssue(issue)}.`
    // One message per field (Ajv's allErrors may say `must not be empty` and `must not be blank` of one value);
    // every field is reported. Own members only: a field named `constructor` must not find Object.prototype's.
    if (!Object.hasOwn(errors, field)) Object.defineProperty(errors, field, { value: [message], enumerable: true, writable: true, configurable: true })
  }
  return errors
}
